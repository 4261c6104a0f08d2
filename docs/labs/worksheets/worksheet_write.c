/* worksheet_write.c — the worksheet of a lab as a page: Markdown to read, HTML to print.
 *
 * Design. Both writers print the same parts in the same order (title, the student's line,
 * the time and what the browser page can do, the predictions, the commands under their
 * parts' headings, the results tables, the questions) to standard output. The Markdown
 * sheet copies the handout's lines as they are; the HTML sheet joins the lines of each
 * paragraph and item and turns the handout's inline Markdown into tags, and its style
 * sheet holds the page to one sheet of A4. Everything in a language comes from sheet.txt
 * (ws_word), so the writers hold no word of either language beyond the comment at the
 * top of every sheet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worksheet.h"

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
        ws_die(1, "sheet.txt: the title \"%s\" has no {} for the handout's title", pattern);
    snprintf(out, n, "%.*s%s%s", (int)(at - pattern), pattern, arg, at + 2);
}

/* The space between two phrases of the page: one after an English full stop, none after
 * a Chinese one (a full-width stop or colon carries its own space). */
static const char *gap_after(const char *stop)
{
    return (unsigned char)stop[0] >= 0x80 ? "" : " ";
}

/* ---- writing Markdown --------------------------------------------------------------- */

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

void ws_write_md(const lab *l, const sheet *s, const char *handout)
{
    const char *base = strrchr(handout, '/') ? strrchr(handout, '/') + 1 : handout;
    char html[PATH_LEN];
    snprintf(html, sizeof html, "%.*s.html", (int)(strlen(base) - 3), base);
    char title[512];
    fill(title, sizeof title, ws_word(s, "title"), l->title);
    printf("<!-- %s ../%s, worksheets/sheet.txt and ../README.md: %s -->\n\n", made_by, base,
           edit_there);
    printf("# %s\n\n", title);
    printf("%s\n\n", ws_word(s, "student"));
    const char *stop = ws_word(s, "sentence_end"), *gap = gap_after(stop);
    printf("*%s*%s%s%s%s[%s](%s)%s%s%s%s[%s](../%s)%s\n\n", l->time, stop, gap,
           ws_word(s, "print"), gap, html, html, stop, gap, ws_word(s, "reading"), gap, base,
           base, stop);
    /* the stop and the colon outside the italics and the bold: CommonMark does not close
     * them right after a full-width stop or colon that a letter follows */
    const char *colon = ws_word(s, "colon");
    printf("**%s**%s%s%s%s%s**%s**%s%s%s%s\n\n", ws_word(s, "page"), colon, gap, l->page, stop,
           gap, ws_word(s, "cmdline"), colon, gap, l->cmdline, stop);
    if (l->npredict) {
        printf("## %s\n\n", ws_word(s, "predict"));
        for (size_t k = 0; k < l->npredict; k++) {
            md_lines(&l->predict[k]);
            if (k + 1 == l->npredict || l->predict[k + 1].kind != B_ITEM ||
                l->predict[k].kind != B_ITEM)
                printf("\n");
        }
    }
    printf("## %s\n\n", ws_word(s, "commands"));
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
    printf("## %s\n\n", ws_word(s, "results"));
    for (size_t k = 0; k < s->ntables; k++)
        md_table(&s->tables[k]);
    printf("## %s\n\n", ws_word(s, "questions"));
    for (size_t k = 0; k < l->nquestions; k++)
        md_lines(&l->questions[k]);
    printf("\n%s\n", ws_word(s, "answers"));
}

/* ---- writing HTML ------------------------------------------------------------------- */

static void html_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '&':
            fputs("&amp;", stdout);
            break;
        case '<':
            fputs("&lt;", stdout);
            break;
        case '>':
            fputs("&gt;", stdout);
            break;
        case '"':
            fputs("&quot;", stdout);
            break;
        default:
            putchar(s[i]);
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
        ws_die(1, "out of memory");
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

void ws_write_html(const lab *l, const sheet *s, const char *handout)
{
    const char *base = strrchr(handout, '/') ? strrchr(handout, '/') + 1 : handout;
    char title[512];
    fill(title, sizeof title, ws_word(s, "title"), l->title);
    printf("<!DOCTYPE html>\n<!-- %s ../%s, worksheets/sheet.txt and ../README.md: %s -->\n",
           made_by, base, edit_there);
    printf("<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n<title>", ws_word(s, "lang"));
    html_escaped(title, (size_t)-1);
    printf("</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    html_inline(title);
    fputs("</h1>\n<p class=\"student\">", stdout);
    html_inline(ws_word(s, "student"));
    const char *stop = ws_word(s, "sentence_end"), *gap = gap_after(stop);
    fputs("</p>\n<p class=\"note\"><i>", stdout);
    html_inline(l->time);
    html_inline(stop);
    printf("</i>%s<b>", gap);
    html_inline(ws_word(s, "page"));
    html_inline(ws_word(s, "colon"));
    printf("</b>%s", gap);
    html_inline(l->page);
    html_inline(stop);
    printf("%s<b>", gap);
    html_inline(ws_word(s, "cmdline"));
    html_inline(ws_word(s, "colon"));
    printf("</b>%s", gap);
    html_inline(l->cmdline);
    html_inline(stop);
    fputs("</p>\n", stdout);
    if (l->npredict) {
        printf("<h2>");
        html_inline(ws_word(s, "predict"));
        printf("</h2>\n");
        html_text(l->predict, l->npredict);
    }
    printf("<h2>");
    html_inline(ws_word(s, "commands"));
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
    html_inline(ws_word(s, "results"));
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
    html_inline(ws_word(s, "questions"));
    printf("</h2>\n");
    html_text(l->questions, l->nquestions);
    printf("<p class=\"note\">");
    html_inline(ws_word(s, "answers"));
    printf("</p>\n</body>\n</html>\n");
}
