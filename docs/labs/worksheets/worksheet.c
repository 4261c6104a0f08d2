/* worksheet.c — writes the printable worksheet of a lab from its handout: one A4 page with
 * the predictions, the commands, blank results tables and the questions.
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

#define MAX_LINES 4096
#define MAX_WORDS 64
#define MAX_TABLES 8
#define MAX_ROWS 16
#define MAX_CELLS 12
#define PATH_LEN 1024

/* ---- small helpers -------------------------------------------------------------------- */

static const char *prog_name = "worksheet";

/* Prints "worksheet: MESSAGE" and exits with status. */
static void die(int status, const char *fmt, ...)
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
        die(1, "cannot read %s", path);
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
        die(1, "out of memory reading %s", path);
    buf[len] = '\0';
    return buf;
}

/* Splits text into lines in place (the newlines become NULs); returns the count. */
static size_t split_lines(char *text, char **line, size_t max, const char *path)
{
    size_t n = 0;
    for (char *p = text; *p;) {
        if (n == max)
            die(1, "%s has more than %zu lines", path, max);
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

/* ---- the sheet's own words and tables (DIR/worksheets/sheet.txt) ---------------------- */

/* A blank results table: a caption, a header and the labels of its rows; a cell written
 * in the file is printed, "" is a blank to fill in. */
typedef struct table {
    char *caption;
    char *head[MAX_CELLS];
    size_t ncols;
    const char *cell[MAX_ROWS][MAX_CELLS];
    size_t nrows;
} table;

typedef struct sheet {
    char *name[MAX_WORDS], *text[MAX_WORDS]; /* word NAME TEXT */
    size_t nwords;
    table tables[MAX_TABLES]; /* the lab's */
    size_t ntables;
} sheet;

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
static void read_sheet(sheet *s, const char *path, const char *lab)
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
                die(1, "%s: more than %d words", path, MAX_WORDS);
            s->name[s->nwords] = f[1];
            s->text[s->nwords++] = f[2];
        } else if (strcmp(f[0], "lab") == 0 && nf == 2) {
            mine = strcmp(f[1], lab) == 0;
        } else if (strcmp(f[0], "table") == 0 && nf == 2) {
            if (!mine)
                continue;
            if (s->ntables == MAX_TABLES)
                die(1, "%s: lab %s has more than %d tables", path, lab, MAX_TABLES);
            t = &s->tables[s->ntables++];
            t->caption = f[1];
        } else if ((strcmp(f[0], "head") == 0 || strcmp(f[0], "row") == 0) && nf >= 2) {
            if (!mine)
                continue;
            if (!t)
                die(1, "%s:%zu: a %s line before the lab's first table line", path, i + 1,
                    f[0]);
            if (f[0][0] == 'h') {
                t->ncols = nf - 1;
                for (size_t k = 1; k < nf; k++)
                    t->head[k - 1] = f[k];
            } else {
                if (t->nrows == MAX_ROWS)
                    die(1, "%s:%zu: more than %d rows", path, i + 1, MAX_ROWS);
                if (nf - 1 > t->ncols)
                    die(1, "%s:%zu: a row of %zu cells under a header of %zu", path, i + 1,
                        nf - 1, t->ncols);
                for (size_t k = 0; k < t->ncols; k++)
                    t->cell[t->nrows][k] = k + 1 < nf ? f[k + 1] : "";
                t->nrows++;
            }
        } else {
            die(1, "%s:%zu: expected word NAME TEXT, lab NN, table CAPTION, head CELLS or "
                   "row CELLS, tab-separated", path, i + 1);
        }
    }
    for (size_t k = 0; k < s->ntables; k++)
        if (s->tables[k].ncols == 0 || s->tables[k].nrows == 0)
            die(1, "%s: table \"%s\" of lab %s needs a head line and a row", path,
                s->tables[k].caption, lab);
    if (s->ntables == 0)
        die(1, "%s: no results table for lab %s (lines lab %s, table, head, row)", path, lab,
            lab);
}

/* The sheet's word name (exits when the file lacks it). */
static const char *word(const sheet *s, const char *name)
{
    for (size_t k = 0; k < s->nwords; k++)
        if (strcmp(s->name[k], name) == 0)
            return s->text[k];
    die(1, "sheet.txt has no line: word %s TEXT", name);
    return NULL;
}

/* ---- what is taken from the handout ---------------------------------------------------- */

/* A run of the handout's lines that the sheet shows as one thing. */
typedef enum { B_PARA, B_ITEM, B_CODE, B_HEADING } block_kind;

typedef struct block {
    block_kind kind;
    char **line; /* the handout's lines (for B_CODE without the fences) */
    size_t n;
    const char *lang; /* B_CODE: the fence's language */
    int number;       /* B_ITEM: its number */
} block;

typedef struct lab {
    char *title;     /* the handout's title, without "# " */
    char time[256];  /* the first sentence of the italic line under it */
    block predict[64], commands[96], questions[32];
    size_t npredict, ncommands, nquestions;
    char *page, *cmdline; /* the README's cells for the lab */
} lab;

/* Appends a block to list (with capacity max). */
static void add_block(block *list, size_t *n, size_t max, block b, const char *what)
{
    if (*n == max)
        die(1, "more than %zu blocks in the %s", max, what);
    list[(*n)++] = b;
}

/* Paragraphs and numbered items of lines [a, b) into list: an item runs on over the
 * lines indented under it; a blank line ends a paragraph. */
static void text_blocks(char **line, size_t a, size_t b, block *list, size_t *n,
                        size_t max, const char *what)
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
        die(1, "%s: the first line is not the title (# ...)", path);
    l->title = line[0] + 2;
    for (size_t i = 1; i < n && !starts_with(line[i], "## "); i++) {
        if (line[i][0] != '*')
            continue;
        /* the first sentence of the italic note: "60–75 minutes." */
        const char *end = strstr(line[i] + 1, word(s, "sentence_end"));
        const size_t len = end ? (size_t)(end - line[i] - 1) : strlen(line[i] + 1);
        snprintf(l->time, sizeof l->time, "%.*s", (int)len, line[i] + 1);
        break;
    }
    const char *predict = word(s, "section_predict"), *parts = word(s, "section_part");
    const char *questions = word(s, "section_questions"), *ext = word(s, "section_extension");
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
        die(1, "%s: no fenced block under a heading holding \"%s\" or \"%s\"", path, parts,
            ext);
    if (l->nquestions == 0)
        die(1, "%s: no section \"%s\" with numbered items", path, questions);
    for (size_t k = 0; k < l->nquestions; k++)
        if (l->questions[k].kind != B_ITEM)
            die(1, "%s: the section \"%s\" holds a paragraph that is not a numbered item",
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
    die(1, "%s: no row \"| %s | PAGE | COMMAND LINE |\" in the table of the browser page",
        path, labno);
}

/* The first line of every sheet says where it comes from (the same in both languages: a
 * comment, for whoever edits the files). */
static const char *const made_by = "Written by `make worksheets` (docs/labs/worksheets/"
                                   "worksheet.c) from";
static const char *const edit_there = "edit those, not this file.";

/* pattern with its "{}" replaced by arg, into out. */
static void fill(char *out, size_t n, const char *pattern, const char *arg)
{
    const char *at = strstr(pattern, "{}");
    if (!at)
        die(1, "sheet.txt: the title \"%s\" has no {} for the handout's title", pattern);
    snprintf(out, n, "%.*s%s%s", (int)(at - pattern), pattern, arg, at + 2);
}

/* The space between two phrases of the page: one after an English full stop, none after
 * a Chinese one (a full-width stop or colon carries its own space). */
static const char *gap_after(const char *stop)
{
    return (unsigned char)stop[0] >= 0x80 ? "" : " ";
}

/* ---- writing Markdown --------------------------------------------------------------------- */

static void md_lines(const block *b)
{
    for (size_t k = 0; k < b->n; k++)
        printf("%s\n", b->line[k]);
}

static void md_table(const table *t)
{
    printf("%s\n\n|", t->caption);
    for (size_t c = 0; c < t->ncols; c++)
        printf(" %s |", t->head[c]);
    printf("\n|");
    for (size_t c = 0; c < t->ncols; c++)
        printf("---|");
    printf("\n");
    for (size_t r = 0; r < t->nrows; r++) {
        printf("|");
        for (size_t c = 0; c < t->ncols; c++)
            printf(" %s |", t->cell[r][c][0] ? t->cell[r][c] : "   ");
        printf("\n");
    }
    printf("\n");
}

static void write_md(const lab *l, const sheet *s, const char *handout)
{
    const char *base = strrchr(handout, '/') ? strrchr(handout, '/') + 1 : handout;
    char html[PATH_LEN];
    snprintf(html, sizeof html, "%.*s.html", (int)(strlen(base) - 3), base);
    char title[512];
    fill(title, sizeof title, word(s, "title"), l->title);
    printf("<!-- %s ../%s, worksheets/sheet.txt and ../README.md: %s -->\n\n", made_by, base,
           edit_there);
    printf("# %s\n\n", title);
    printf("%s\n\n", word(s, "student"));
    const char *stop = word(s, "sentence_end"), *gap = gap_after(stop);
    printf("*%s*%s%s%s%s[%s](%s)%s%s%s%s[%s](../%s)%s\n\n", l->time, stop, gap,
           word(s, "print"), gap, html, html, stop, gap, word(s, "reading"), gap, base, base,
           stop);
    /* the stop and the colon outside the italics and the bold: CommonMark does not close
     * them right after a full-width stop or colon that a letter follows */
    const char *colon = word(s, "colon");
    printf("**%s**%s%s%s%s%s**%s**%s%s%s%s\n\n", word(s, "page"), colon, gap, l->page, stop,
           gap, word(s, "cmdline"), colon, gap, l->cmdline, stop);
    if (l->npredict) {
        printf("## %s\n\n", word(s, "predict"));
        for (size_t k = 0; k < l->npredict; k++) {
            md_lines(&l->predict[k]);
            if (k + 1 == l->npredict || l->predict[k + 1].kind != B_ITEM ||
                l->predict[k].kind != B_ITEM)
                printf("\n");
        }
    }
    printf("## %s\n\n", word(s, "commands"));
    for (size_t k = 0; k < l->ncommands; k++) {
        const block *b = &l->commands[k];
        if (b->kind == B_HEADING) {
            printf("**%s**\n\n", b->line[0] + 3);
            continue;
        }
        printf("```%s\n", b->lang);
        md_lines(b);
        printf("```\n\n");
    }
    printf("## %s\n\n", word(s, "results"));
    for (size_t k = 0; k < s->ntables; k++)
        md_table(&s->tables[k]);
    printf("## %s\n\n", word(s, "questions"));
    for (size_t k = 0; k < l->nquestions; k++)
        md_lines(&l->questions[k]);
    printf("\n%s\n", word(s, "answers"));
}

/* ---- writing HTML --------------------------------------------------------------------------- */

static void html_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", stdout); break;
        case '<': fputs("&lt;", stdout); break;
        case '>': fputs("&gt;", stdout); break;
        case '"': fputs("&quot;", stdout); break;
        default: putchar(s[i]);
        }
    }
}

/* One run of Markdown text as HTML: `code`, **strong**, *emphasis*; everything else
 * escaped. An asterisk only opens emphasis before a non-blank and closes it after one. */
static void html_inline(const char *s)
{
    int em = 0, strong = 0;
    for (const char *p = s; *p;) {
        if (*p == '`') {
            const char *end = strchr(p + 1, '`');
            if (end) {
                fputs("<code>", stdout);
                html_escaped(p + 1, (size_t)(end - p - 1));
                fputs("</code>", stdout);
                p = end + 1;
                continue;
            }
        }
        if (p[0] == '*' && p[1] == '*' && (strong || (p[2] && p[2] != ' '))) {
            fputs(strong ? "</b>" : "<b>", stdout);
            strong = !strong;
            p += 2;
            continue;
        }
        if (*p == '*' && (em ? p > s && p[-1] != ' ' : p[1] && p[1] != ' ')) {
            fputs(em ? "</i>" : "<i>", stdout);
            em = !em;
            p++;
            continue;
        }
        html_escaped(p, 1);
        p++;
    }
    if (em)
        fputs("</i>", stdout);
    if (strong)
        fputs("</b>", stdout);
}

/* The lines of a paragraph or item joined into one text: the indentation of each
 * continuation line dropped, and a space between lines except between two non-ASCII
 * characters (Chinese is written without spaces). The number of an item is dropped. */
static char *joined(const block *b)
{
    size_t len = 1;
    for (size_t k = 0; k < b->n; k++)
        len += strlen(b->line[k]) + 1;
    char *out = malloc(len);
    if (!out)
        die(1, "out of memory");
    out[0] = '\0';
    for (size_t k = 0; k < b->n; k++) {
        const char *t = b->line[k] + strspn(b->line[k], " ");
        if (k == 0 && b->kind == B_ITEM)
            t = strchr(t, ' ') + 1;
        const size_t o = strlen(out);
        if (o > 0 && !((unsigned char)out[o - 1] >= 0x80 && (unsigned char)t[0] >= 0x80))
            strcat(out, " ");
        strcat(out, t);
    }
    return out;
}

/* Paragraphs and numbered items as HTML; consecutive items form one list. */
static void html_text(const block *list, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const block *b = &list[k];
        char *t = joined(b);
        if (b->kind == B_ITEM) {
            if (k == 0 || list[k - 1].kind != B_ITEM)
                fputs("<ol>\n", stdout);
            printf("<li value=\"%d\">", b->number);
            html_inline(t);
            fputs("</li>\n", stdout);
            if (k + 1 == n || list[k + 1].kind != B_ITEM)
                fputs("</ol>\n", stdout);
        } else {
            fputs("<p>", stdout);
            html_inline(t);
            fputs("</p>\n", stdout);
        }
        free(t);
    }
}

/* The style sheet: one A4 page, the commands small and wrapped, the tables with room to
 * write in. The sizes were chosen by printing every lab with Chromium. */
static const char *const style =
    "@page { size: A4; margin: 9mm 11mm; }\n"
    "body { font: 8.4pt/1.25 sans-serif; color: #000; max-width: 188mm; margin: 0 auto; }\n"
    "h1 { font-size: 12pt; margin: 0 0 0.8mm; }\n"
    "h2 { font-size: 9.4pt; margin: 2mm 0 0.7mm; border-bottom: 0.4pt solid #777; }\n"
    "h3 { font-size: 8.4pt; margin: 1mm 0 0.3mm; }\n"
    "p { margin: 0.5mm 0; }\n"
    "ol { margin: 0.5mm 0; padding-left: 5.5mm; }\n"
    "li { margin: 0.25mm 0; }\n"
    "code { font: 0.92em monospace; }\n"
    "pre { font: 6.8pt/1.2 monospace; white-space: pre-wrap; overflow-wrap: anywhere;\n"
    "      margin: 0.4mm 0; padding: 0.5mm 1.2mm; background: #f2f2f2; }\n"
    ".student { margin: 0.8mm 0 1mm; }\n"
    ".note { font-size: 7.8pt; }\n"
    ".tables { display: flex; flex-wrap: wrap; gap: 0 5mm; align-items: flex-start; }\n"
    ".tables > div { width: min-content; min-width: 60mm; }\n"
    ".tables p { font-size: 7.8pt; margin: 0.3mm 0; }\n"
    "table { border-collapse: collapse; margin: 0 0 1mm; }\n"
    "th, td { border: 0.5pt solid #444; padding: 0 1.4mm; font-size: 7.8pt; height: 5.2mm;\n"
    "         min-width: 9mm; text-align: left; }\n"
    "th { font-weight: normal; background: #eee; white-space: nowrap; }\n"
    "@media screen { body { margin: 1.5em auto; } }\n";

static void write_html(const lab *l, const sheet *s, const char *handout)
{
    const char *base = strrchr(handout, '/') ? strrchr(handout, '/') + 1 : handout;
    char title[512];
    fill(title, sizeof title, word(s, "title"), l->title);
    printf("<!DOCTYPE html>\n<!-- %s ../%s, worksheets/sheet.txt and ../README.md: %s -->\n",
           made_by, base, edit_there);
    printf("<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n<title>", word(s, "lang"));
    html_escaped(title, (size_t)-1);
    printf("</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    html_inline(title);
    fputs("</h1>\n<p class=\"student\">", stdout);
    html_inline(word(s, "student"));
    const char *stop = word(s, "sentence_end"), *gap = gap_after(stop);
    fputs("</p>\n<p class=\"note\"><i>", stdout);
    html_inline(l->time);
    html_inline(stop);
    printf("</i>%s<b>", gap);
    html_inline(word(s, "page"));
    html_inline(word(s, "colon"));
    printf("</b>%s", gap);
    html_inline(l->page);
    html_inline(stop);
    printf("%s<b>", gap);
    html_inline(word(s, "cmdline"));
    html_inline(word(s, "colon"));
    printf("</b>%s", gap);
    html_inline(l->cmdline);
    html_inline(stop);
    fputs("</p>\n", stdout);
    if (l->npredict) {
        printf("<h2>");
        html_inline(word(s, "predict"));
        printf("</h2>\n");
        html_text(l->predict, l->npredict);
    }
    printf("<h2>");
    html_inline(word(s, "commands"));
    printf("</h2>\n");
    for (size_t k = 0; k < l->ncommands; k++) {
        const block *b = &l->commands[k];
        if (b->kind == B_HEADING) {
            printf("<h3>");
            html_inline(b->line[0] + 3);
            printf("</h3>\n");
            continue;
        }
        printf("<pre>");
        for (size_t i = 0; i < b->n; i++) {
            html_escaped(b->line[i], (size_t)-1);
            if (i + 1 < b->n)
                putchar('\n');
        }
        printf("</pre>\n");
    }
    printf("<h2>");
    html_inline(word(s, "results"));
    printf("</h2>\n");
    /* each table under its caption, side by side where the width allows */
    printf("<div class=\"tables\">\n");
    for (size_t k = 0; k < s->ntables; k++) {
        const table *t = &s->tables[k];
        printf("<div>\n<p>");
        html_inline(t->caption);
        printf("</p>\n<table>\n<tr>");
        for (size_t c = 0; c < t->ncols; c++) {
            printf("<th>");
            html_inline(t->head[c]);
            printf("</th>");
        }
        printf("</tr>\n");
        for (size_t r = 0; r < t->nrows; r++) {
            printf("<tr>");
            for (size_t c = 0; c < t->ncols; c++) {
                printf(c == 0 ? "<th>" : "<td>");
                html_inline(t->cell[r][c]);
                printf(c == 0 ? "</th>" : "</td>");
            }
            printf("</tr>\n");
        }
        printf("</table>\n</div>\n");
    }
    printf("</div>\n");
    printf("<h2>");
    html_inline(word(s, "questions"));
    printf("</h2>\n");
    html_text(l->questions, l->nquestions);
    printf("<p class=\"note\">");
    html_inline(word(s, "answers"));
    printf("</p>\n</body>\n</html>\n");
}

/* ---- main ------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "md") != 0 && strcmp(argv[1], "html") != 0))
        die(2, "usage: worksheet md|html HANDOUT (a handout DIR/NN-NAME.md; the words and "
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
        die(2, "%s is not a handout: its name must be NN-NAME.md (two digits)", handout);
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
        write_md(&l, &s, handout);
    else
        write_html(&l, &s, handout);
    if (fflush(stdout) != 0 || ferror(stdout))
        die(1, "could not write the sheet");
    free(readme);
    free(text);
    return 0;
}
