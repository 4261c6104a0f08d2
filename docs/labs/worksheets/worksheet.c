/* worksheet.c — writes the printable worksheet of a lab from its handout: one A4 page with
 * the predictions, the commands, blank results tables and the questions. This file reads
 * the handout and the files beside it; worksheet_write.c writes the page.
 *
 * Design. The handout (docs/labs/NN-NAME.md, or docs/zh/labs/NN-NAME.md) stays the one
 * place where a lab's commands and questions are written; the worksheet copies them, so
 * the two cannot drift apart (`make worksheets` writes every worksheet again, and
 * tests/test_worksheets.c fails when a committed one is not what this program writes).
 * What the handout does not hold comes from two files beside it:
 *     DIR/worksheets/sheet.txt   the words of the page in the handout's language, the
 *                                names of the handout's sections, and each lab's blank
 *                                results tables (the format is described in the file);
 *     DIR/README.md              the row of the lab in the table of what the browser
 *                                page can do (a row of three cells: lab, page, command
 *                                line).
 * From the handout it takes the title, the first sentence of the italic line under it
 * (the time the lab takes), the section whose heading holds the sheet's `predict` name
 * (paragraphs and numbered items), the fenced blocks of every part and of the extension
 * (with the parts' headings), and the numbered items of the questions. Text is copied
 * as written: the Markdown sheet keeps the handout's lines, the HTML sheet joins them
 * (without a space between two Chinese characters) and turns `code`, *emphasis* and
 * **strong** into tags.
 *
 * The HTML sheet is the one to print: its style sheet sets an A4 page and sizes that keep
 * each lab on one sheet (tests/test_worksheets.c prints every sheet with Chromium, when
 * there is one, and counts the pages). It needs nothing but a browser.
 *
 * Usage, from the top of the tree:  worksheet md|html HANDOUT > SHEET
 * Exit status 0; 2 for a usage error; 1 when a file cannot be read or lacks a part the
 * sheet needs (named on standard error).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worksheet.h"

#define MAX_LINES 4096

/* ---- small helpers ------------------------------------------------------------------ */

static const char *prog_name = "worksheet";

/* Prints "worksheet: MESSAGE" and exits with status. */
void ws_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

/* A whole file as a NUL-terminated string (exits when it cannot be read). */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        ws_die(1, "cannot read %s", path);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 2) {
            char *more = realloc(buf, cap * 2);
            if (!more)
                free(buf);
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        ws_die(1, "out of memory reading %s", path);
    buf[len] = '\0';
    return buf;
}

/* Splits text into lines in place (the newlines become NULs); returns the count. */
static size_t split_lines(char *text, char **line, size_t max, const char *path)
{
    size_t n = 0;
    for (char *p = text; *p;) {
        if (n == max)
            ws_die(1, "%s has more than %zu lines", path, max);
        line[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_blank(const char *s)
{
    return s[strspn(s, " \t\r")] == '\0';
}

/* Does the line begin a numbered item ("12. text")? Returns its number, or 0. */
static int item_number(const char *s)
{
    int n = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9')
        n = 10 * n + (*p++ - '0');
    return p > s && p[0] == '.' && p[1] == ' ' ? n : 0;
}

/* ---- the sheet's own words and tables (DIR/worksheets/sheet.txt) -------------------- */

/* Splits a line at tabs in place; returns the number of fields. */
static size_t split_tabs(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *p = line; p && n < max;) {
        f[n++] = p;
        p = strchr(p, '\t');
        if (p)
            *p++ = '\0';
    }
    return n;
}

/* Reads the words of the sheet and the tables of lab (two digits) from path. */
static void read_sheet(sheet *s, const char *path, const char *labno)
{
    static char *line[MAX_LINES];
    char *text = read_file(path);
    const size_t n = split_lines(text, line, MAX_LINES, path);
    int mine = 0;
    table *t = NULL;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        char *f[MAX_CELLS + 2];
        if (line[i][0] == '#' || is_blank(line[i]))
            continue;
        const size_t nf = split_tabs(line[i], f, MAX_CELLS + 2);
        if (strcmp(f[0], "word") == 0 && nf == 3) {
            if (s->nwords == MAX_WORDS)
                ws_die(1, "%s: more than %d words", path, MAX_WORDS);
            s->name[s->nwords] = f[1];
            s->text[s->nwords++] = f[2];
        } else if (strcmp(f[0], "lab") == 0 && nf == 2) {
            mine = strcmp(f[1], labno) == 0;
        } else if (strcmp(f[0], "table") == 0 && nf == 2) {
            if (!mine)
                continue;
            if (s->ntables == MAX_TABLES)
                ws_die(1, "%s: lab %s has more than %d tables", path, labno, MAX_TABLES);
            t = &s->tables[s->ntables++];
            t->caption = f[1];
        } else if ((strcmp(f[0], "head") == 0 || strcmp(f[0], "row") == 0) && nf >= 2) {
            if (!mine)
                continue;
            if (!t)
                ws_die(1, "%s:%zu: a %s line before the labno's first table line", path, i + 1,
                       f[0]);
            if (f[0][0] == 'h') {
                t->ncols = nf - 1;
                for (size_t k = 1; k < nf; k++)
                    t->head[k - 1] = f[k];
            } else {
                if (t->nrows == MAX_ROWS)
                    ws_die(1, "%s:%zu: more than %d rows", path, i + 1, MAX_ROWS);
                if (nf - 1 > t->ncols)
                    ws_die(1, "%s:%zu: a row of %zu cells under a header of %zu", path, i + 1,
                           nf - 1, t->ncols);
                for (size_t k = 0; k < t->ncols; k++)
                    t->cell[t->nrows][k] = k + 1 < nf ? f[k + 1] : "";
                t->nrows++;
            }
        } else {
            ws_die(1,
                   "%s:%zu: expected word NAME TEXT, lab NN, table CAPTION, head CELLS or "
                   "row CELLS, tab-separated",
                   path, i + 1);
        }
    }
    for (size_t k = 0; k < s->ntables; k++)
        if (s->tables[k].ncols == 0 || s->tables[k].nrows == 0)
            ws_die(1, "%s: table \"%s\" of lab %s needs a head line and a row", path,
                   s->tables[k].caption, labno);
    if (s->ntables == 0)
        ws_die(1, "%s: no results table for lab %s (lines lab %s, table, head, row)", path,
               labno, labno);
}

/* The sheet's word name (exits when the file lacks it). */
const char *ws_word(const sheet *s, const char *name)
{
    for (size_t k = 0; k < s->nwords; k++)
        if (strcmp(s->name[k], name) == 0)
            return s->text[k];
    ws_die(1, "sheet.txt has no line: word %s TEXT", name);
    return NULL;
}

/* ---- what is taken from the handout ------------------------------------------------- */

/* Appends a block to list (with capacity max). */
static void add_block(block *list, size_t *n, size_t max, block b, const char *what)
{
    if (*n == max)
        ws_die(1, "more than %zu blocks in the %s", max, what);
    list[(*n)++] = b;
}

/* Paragraphs and numbered items of lines [a, b) into list: an item runs on over the
 * lines indented under it; a blank line ends a paragraph. */
static void text_blocks(char **line, size_t a, size_t b, block *list, size_t *n, size_t max,
                        const char *what)
{
    for (size_t i = a; i < b;) {
        if (is_blank(line[i])) {
            i++;
            continue;
        }
        block blk = {item_number(line[i]) ? B_ITEM : B_PARA, &line[i], 1, NULL,
                     item_number(line[i])};
        for (i++; i < b && !is_blank(line[i]) && !item_number(line[i]); i++)
            blk.n++;
        add_block(list, n, max, blk, what);
    }
}

/* Fills l from the handout's lines, with the sheet's names of its sections. */
static void read_handout(lab *l, char **line, size_t n, const sheet *s, const char *path)
{
    memset(l, 0, sizeof *l);
    if (n == 0 || !starts_with(line[0], "# "))
        ws_die(1, "%s: the first line is not the title (# ...)", path);
    l->title = line[0] + 2;
    for (size_t i = 1; i < n && !starts_with(line[i], "## "); i++) {
        if (line[i][0] != '*')
            continue;
        /* the first sentence of the italic note: "60–75 minutes." */
        const char *end = strstr(line[i] + 1, ws_word(s, "sentence_end"));
        const size_t len = end ? (size_t)(end - line[i] - 1) : strlen(line[i] + 1);
        snprintf(l->time, sizeof l->time, "%.*s", (int)len, line[i] + 1);
        break;
    }
    const char *predict = ws_word(s, "section_predict"), *parts = ws_word(s, "section_part");
    const char *questions = ws_word(s, "section_questions"),
               *ext = ws_word(s, "section_extension");
    for (size_t i = 1; i < n;) {
        if (!starts_with(line[i], "## ")) {
            i++;
            continue;
        }
        const char *heading = line[i] + 3;
        size_t end = i + 1;
        for (int fence = 0; end < n && (fence || !starts_with(line[end], "## ")); end++)
            if (starts_with(line[end], "```"))
                fence = !fence;
        if (strstr(heading, predict)) {
            text_blocks(line, i + 1, end, l->predict, &l->npredict, 64, "predictions");
        } else if (strstr(heading, questions)) {
            text_blocks(line, i + 1, end, l->questions, &l->nquestions, 32, "questions");
        } else if (strstr(heading, parts) || strstr(heading, ext)) {
            /* the part's heading, then each of its fenced blocks */
            const size_t first = l->ncommands;
            for (size_t k = i + 1; k < end; k++) {
                if (!starts_with(line[k], "```"))
                    continue;
                block code = {B_CODE, &line[k + 1], 0, line[k] + 3, 0};
                for (k++; k < end && !starts_with(line[k], "```"); k++)
                    code.n++;
                if (first == l->ncommands)
                    add_block(l->commands, &l->ncommands, 96,
                              (block){B_HEADING, &line[i], 1, NULL, 0}, "commands");
                add_block(l->commands, &l->ncommands, 96, code, "commands");
            }
        }
        i = end;
    }
    if (l->ncommands == 0)
        ws_die(1, "%s: no fenced block under a heading holding \"%s\" or \"%s\"", path, parts,
               ext);
    if (l->nquestions == 0)
        ws_die(1, "%s: no section \"%s\" with numbered items", path, questions);
    for (size_t k = 0; k < l->nquestions; k++)
        if (l->questions[k].kind != B_ITEM)
            ws_die(1, "%s: the section \"%s\" holds a paragraph that is not a numbered item",
                   path, questions);
}

/* Trims the spaces around a table cell in place. */
static char *trim(char *a, char *b)
{
    while (a < b && *a == ' ')
        a++;
    while (b > a && b[-1] == ' ')
        b--;
    *b = '\0';
    return a;
}

/* Finds the lab's row in the README's table of the browser page: "| NN | PAGE | CLI |",
 * three cells (the table of the labs themselves has more). */
static void read_page_row(lab *l, char *readme, const char *labno, const char *path)
{
    static char *line[MAX_LINES];
    const size_t n = split_lines(readme, line, MAX_LINES, path);
    for (size_t i = 0; i < n; i++) {
        char *cell[8];
        size_t nc = 0;
        if (line[i][0] != '|')
            continue;
        for (char *p = line[i] + 1, *bar; nc < 8 && (bar = strchr(p, '|')); p = bar + 1)
            cell[nc++] = trim(p, bar);
        if (nc == 3 && strcmp(cell[0], labno) == 0) {
            l->page = cell[1];
            l->cmdline = cell[2];
            return;
        }
    }
    ws_die(1, "%s: no row \"| %s | PAGE | COMMAND LINE |\" in the table of the browser page",
           path, labno);
}

/* ---- main --------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "md") != 0 && strcmp(argv[1], "html") != 0))
        ws_die(2, "usage: worksheet md|html HANDOUT (a handout DIR/NN-NAME.md; the words and "
                  "tables come from DIR/worksheets/sheet.txt, the browser page's row from "
                  "DIR/README.md)");
    const char *handout = argv[2];
    const char *slash = strrchr(handout, '/');
    const char *base = slash ? slash + 1 : handout;
    const size_t dirlen = slash ? (size_t)(slash - handout) : 1;
    const char *dir = slash ? handout : ".";
    const size_t blen = strlen(base);
    if (blen < 6 || base[0] < '0' || base[0] > '9' || base[1] < '0' || base[1] > '9' ||
        base[2] != '-' || strcmp(base + blen - 3, ".md") != 0)
        ws_die(2, "%s is not a handout: its name must be NN-NAME.md (two digits)", handout);
    char labno[3] = {base[0], base[1], '\0'};
    char path[PATH_LEN];

    static sheet s;
    snprintf(path, sizeof path, "%.*s/worksheets/sheet.txt", (int)dirlen, dir);
    read_sheet(&s, path, labno);

    static char *line[MAX_LINES];
    char *text = read_file(handout);
    const size_t n = split_lines(text, line, MAX_LINES, handout);
    static lab l;
    read_handout(&l, line, n, &s, handout);

    snprintf(path, sizeof path, "%.*s/README.md", (int)dirlen, dir);
    char *readme = read_file(path);
    read_page_row(&l, readme, labno, path);

    if (argv[1][0] == 'm')
        ws_write_md(&l, &s, handout);
    else
        ws_write_html(&l, &s, handout);
    if (fflush(stdout) != 0 || ferror(stdout))
        ws_die(1, "could not write the sheet");
    free(readme);
    free(text);
    return 0;
}
