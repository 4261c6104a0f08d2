/* test_glossary.c — the Chinese documents, and every Chinese string the program writes,
 * use the terms of their glossary.
 *
 * What is checked. docs/zh/glossary.md lists, in Markdown tables, each term the Chinese
 * documents use (first column) and the other renderings they must not use (last column,
 * separated by "、"; "—" when none). No Chinese handout, key or worksheet (docs/zh/labs/,
 * docs/zh/labs/keys/ and docs/zh/labs/worksheets/), nor the Chinese quick start
 * (docs/zh/README.md) or claims (docs/zh/claims.md), may hold a rejected rendering, except
 * where it is part of the term chosen in its place: "整序列准确率" holds "序列准确率" and
 * is the chosen term; nor one of a few calques that are no term of the glossary
 * (calques: phrases such as 不是一个结果 for "not a result").
 * The glossary must exist, reject at least the known doublets (two renderings of token
 * and of sequence accuracy), and be linked from docs/zh/labs/README.md.
 *
 * The program's Chinese is checked the same way, against the same calques: every string literal of the C sources that
 * holds Chinese, adjacent literals joined as the compiler joins them (the report page,
 * the captions of report_figures.c, the figures' labels of report_labels.c, the
 * sentences the models' traces add), and the browser page's words (plots/web).
 *
 * Runs from the top of the source tree, like the other suites. */
#include <check.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "testreport.h"
#include "testutil.h"

#define GLOSSARY "docs/zh/glossary.md"
#define MAX_ROWS 256
#define CELL 256

/* One row of the glossary: the chosen term(s) and the renderings it replaces. */
typedef struct row {
    char terms[CELL];    /* the first column: one term, or several separated by "、" */
    char rejected[CELL]; /* the last column: renderings separated by "、", or "" */
    int line;
} row;

/* Copies the trimmed text between a and b into out. */
static void trim_copy(char *out, size_t n, const char *a, const char *b)
{
    while (a < b && *a == ' ')
        a++;
    while (b > a && b[-1] == ' ')
        b--;
    snprintf(out, n, "%.*s", (int)(b - a), a);
}

/* Reads the rows of every table of the glossary (not the header or separator lines). */
static size_t read_rows(const char *text, row *rows, size_t max)
{
    size_t n = 0;
    int lineno = 0, header = 0;
    for (const char *p = text; *p && n < max;) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        lineno++;
        if (*p != '|') {
            header = 1; /* the next table line is a header */
        } else if (strncmp(p, "|---", 4) == 0) {
            header = 0;
        } else if (!header) {
            /* "| term | English | meaning | rejected |": the bars around each cell */
            const char *bar[16];
            size_t nb = 0;
            for (const char *q = p; q < end && nb < 16; q++)
                if (*q == '|')
                    bar[nb++] = q;
            ck_assert_msg(nb >= 5, "%s:%d: a table row needs 4 cells", GLOSSARY, lineno);
            row *r = &rows[n++];
            trim_copy(r->terms, sizeof r->terms, bar[0] + 1, bar[1]);
            trim_copy(r->rejected, sizeof r->rejected, bar[nb - 2] + 1, bar[nb - 1]);
            if (strcmp(r->rejected, "—") == 0)
                r->rejected[0] = '\0';
            r->line = lineno;
        }
        p = *end ? end + 1 : end;
    }
    return n;
}

/* The next item of a "、"-separated list starting at *s, into out; 0 when none is left. */
static int next_item(const char **s, char *out, size_t n)
{
    static const char sep[] = "、";
    if (!**s)
        return 0;
    const char *e = strstr(*s, sep);
    const size_t len = e ? (size_t)(e - *s) : strlen(*s);
    trim_copy(out, n, *s, *s + len);
    *s = e ? e + strlen(sep) : *s + len;
    return 1;
}

/* Is the occurrence of `bad` at p inside an occurrence of one of the terms of r? */
static int inside_term(const char *text, const char *p, size_t blen, const row *r)
{
    const char *list = r->terms;
    char term[CELL];
    while (next_item(&list, term, sizeof term)) {
        const size_t tlen = strlen(term);
        if (tlen < blen)
            continue;
        for (const char *q = p - (tlen - blen); q <= p; q++)
            if (q >= text && strncmp(q, term, tlen) == 0)
                return 1;
    }
    return 0;
}

/* Calques neither the documents nor the program's strings may use that are no row's
 * rejection: phrases rather than terms (a rejected term, such as 尖锐 or 面板, is a row's). */
static const char *const calques[][2] = {
    {"不是一个结果", "一句完整的说法，例如'这不能当作结论'"},
    {"携带的距离", "所经过的距离"},
    {"随机猜测的水平", "随机水平"},
};

/* The first rejected rendering of rows found in doc (outside the chosen terms), or else
 * the first of calques, as "file:line: 'bad' (...)" in msg; msg is "" when there is none. */
static void find_rejected(const char *doc, const row *rows, size_t nrows, char *msg,
                          size_t n)
{
    char *text = ru_slurp(doc, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", doc);
    msg[0] = '\0';
    for (size_t i = 0; i < nrows && !msg[0]; i++) {
        const char *list = rows[i].rejected;
        char bad[CELL];
        while (!msg[0] && next_item(&list, bad, sizeof bad)) {
            const size_t blen = strlen(bad);
            for (const char *p = strstr(text, bad); p; p = strstr(p + 1, bad)) {
                if (inside_term(text, p, blen, &rows[i]))
                    continue;
                int line = 1;
                for (const char *q = text; q < p; q++)
                    line += *q == '\n';
                snprintf(msg, n, "%.200s:%d: '%.100s' (the glossary uses '%.100s', %s:%d)", doc, line,
                         bad, rows[i].terms, GLOSSARY, rows[i].line);
                break;
            }
        }
    }
    for (size_t i = 0; i < sizeof calques / sizeof calques[0] && !msg[0]; i++) {
        const char *p = strstr(text, calques[i][0]);
        int line = 1;
        for (const char *q = text; p && q < p; q++)
            line += *q == '\n';
        if (p)
            snprintf(msg, n, "%.200s:%d: '%s' (say '%s')", doc, line, calques[i][0],
                     calques[i][1]);
    }
    free(text);
}

START_TEST(documents_use_the_chosen_terms)
{
    char *text = ru_slurp(GLOSSARY, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", GLOSSARY);
    static row rows[MAX_ROWS];
    const size_t nrows = read_rows(text, rows, MAX_ROWS);
    free(text);
    ck_assert_msg(nrows >= 20, "%s has only %zu terms", GLOSSARY, nrows);

    /* the doublets the glossary was written to settle are settled there */
    static const char *const settled[][2] = {{"逐词准确率", "词元准确率"},
                                             {"整序列准确率", "整句准确率"}};
    for (size_t k = 0; k < sizeof settled / sizeof settled[0]; k++) {
        int found = 0;
        for (size_t i = 0; i < nrows; i++)
            found |= strcmp(rows[i].terms, settled[k][0]) == 0 &&
                     strstr(rows[i].rejected, settled[k][1]) != NULL;
        ck_assert_msg(found, "%s: no row '%s' rejecting '%s'", GLOSSARY, settled[k][0],
                      settled[k][1]);
    }

    glob_t g;
    size_t ndocs = 0;
    static const char *const patterns[] = {"docs/zh/labs/*.md", "docs/zh/labs/keys/*.md",
                                           "docs/zh/labs/worksheets/*.md",
                                           "docs/zh/README.md", "docs/zh/claims.md"};
    for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
        ck_assert_int_eq(glob(patterns[k], 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++, ndocs++) {
            char msg[1024];
            find_rejected(g.gl_pathv[i], rows, nrows, msg, sizeof msg);
            ck_assert_msg(msg[0] == '\0', "%s", msg);
        }
        globfree(&g);
    }
    ck_assert_msg(ndocs >= 10, "only %zu Chinese handouts and keys found", ndocs);
}
END_TEST

/* ---- the program's Chinese ---------------------------------------------------------- */

/* Does s hold a CJK ideograph (U+4E00..U+9FFF: E4 B8 80 .. E9 BF BF in UTF-8)? */
static int has_chinese(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p >= 0xE4 && *p <= 0xE9 && p[1] >= 0x80 && p[2] >= 0x80)
            return 1;
    return 0;
}

/* The string literals of the C source text, those holding Chinese only, each with the
 * literals adjacent to it joined (as the compiler joins them: across white space,
 * comments and a backslash-newline), one a line, each line "LINE<TAB>text", into out
 * (NUL-terminated; free it). Escapes are kept as written. Returns how many. */
static size_t chinese_literals(const char *src, char **out)
{
    size_t len = 0, n = 0;
    FILE *f = open_memstream(out, &len);
    ck_assert_ptr_nonnull(f);
    char *cur = NULL; /* the literal being joined */
    size_t cur_len = 0;
    FILE *c = NULL;
    int line = 1, start = 0;
    for (const char *p = src; *p;) {
        int ends = 0; /* does what is read here end the literal being joined? */
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            for (const char *q = p; q < (e ? e : p + strlen(p)); q++)
                line += *q == '\n';
            p = e ? e + 2 : p + strlen(p);
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (*p == '\'') { /* a character constant: not text */
            for (p++; *p && *p != '\''; p += *p == '\\' && p[1] ? 2 : 1)
                ;
            p += *p == '\'';
            ends = 1;
        } else if (*p == '"') {
            if (!c) {
                c = open_memstream(&cur, &cur_len);
                ck_assert_ptr_nonnull(c);
                start = line;
            }
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                    fputc(*p++, c);
                fputc(*p, c);
            }
            p += *p == '"';
        } else if (*p == '\\' && p[1] == '\n') {
            p += 2;
            line++;
        } else if (strchr(" \t\r\n", *p)) {
            line += *p == '\n';
            p++;
        } else {
            p++;
            ends = 1;
        }
        if (ends && c) {
            fclose(c);
            c = NULL;
            if (has_chinese(cur)) {
                fprintf(f, "%d\t%s\n", start, cur);
                n++;
            }
            free(cur);
            cur = NULL;
        }
    }
    if (c) {
        fclose(c);
        free(cur);
    }
    fclose(f);
    return n;
}

/* The first rejected rendering (a row's, or one of calques) in the Chinese
 * literals of the C file path, as a message in msg ("" when none); *found counts the
 * literals read. */
static void program_rejected(const char *path, const row *rows, size_t nrows, size_t *found,
                             char *msg, size_t n)
{
    char *src = ru_slurp(path, NULL), *lits = NULL;
    ck_assert_msg(src != NULL, "cannot read %s", path);
    *found += chinese_literals(src, &lits);
    free(src);
    msg[0] = '\0';
    for (const char *l = lits; *l && !msg[0]; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        char text[8192];
        snprintf(text, sizeof text, "%.*s", (int)strcspn(l, "\n"), l);
        for (size_t i = 0; i < nrows && !msg[0]; i++) {
            const char *list = rows[i].rejected;
            char bad[CELL];
            while (!msg[0] && next_item(&list, bad, sizeof bad))
                for (const char *p = strstr(text, bad); p && !msg[0]; p = strstr(p + 1, bad))
                    if (!inside_term(text, p, strlen(bad), &rows[i]))
                        snprintf(msg, n, "%.200s:%.*s: '%.100s' (the glossary uses '%.100s', "
                                 "%s:%d)", path, (int)strcspn(text, "\t"), text, bad,
                                 rows[i].terms, GLOSSARY, rows[i].line);
        }
        for (size_t i = 0; i < sizeof calques / sizeof calques[0] && !msg[0];
             i++)
            if (strstr(text, calques[i][0]))
                snprintf(msg, n, "%.200s:%.*s: '%s' (say '%s')", path,
                         (int)strcspn(text, "\t"), text, calques[i][0],
                         calques[i][1]);
    }
    free(lits);
}

START_TEST(the_program_uses_the_chosen_terms)
{
    char *text = ru_slurp(GLOSSARY, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", GLOSSARY);
    static row rows[MAX_ROWS];
    const size_t nrows = read_rows(text, rows, MAX_ROWS);
    free(text);
    /* every C file of the program: what it prints, writes and draws */
    static const char *const patterns[] = {"attnlab.c", "common/*/*.c", "lstm/*.c",
                                           "rnn_attention/*.c", "transformer/*.c"};
    size_t found = 0, files = 0;
    for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
        glob_t g;
        ck_assert_int_eq(glob(patterns[k], 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++, files++) {
            char msg[1024];
            const size_t before = found;
            program_rejected(g.gl_pathv[i], rows, nrows, &found, msg, sizeof msg);
            ck_assert_msg(msg[0] == '\0', "%s", msg);
            /* the files that hold the page's and the figures' Chinese are read */
            if (strstr(g.gl_pathv[i], "report_figures.c") ||
                strstr(g.gl_pathv[i], "report_labels.c") ||
                strstr(g.gl_pathv[i], "report_page.c"))
                ck_assert_msg(found - before >= 10, "%s: only %zu Chinese strings read",
                              g.gl_pathv[i], found - before);
        }
        globfree(&g);
    }
    ck_assert_msg(files >= 50 && found >= 150, "%zu Chinese strings in %zu files", found,
                  files);
    /* the browser page's words, read as text */
    static const char *const pages[] = {"plots/web/page.js", "plots/web/page.html"};
    for (size_t k = 0; k < 2; k++) {
        char msg[1024];
        find_rejected(pages[k], rows, nrows, msg, sizeof msg);
        ck_assert_msg(msg[0] == '\0', "%s", msg);
    }
}
END_TEST

START_TEST(the_labs_link_the_glossary)
{
    char *readme = ru_slurp("docs/zh/labs/README.md", NULL);
    ck_assert_ptr_nonnull(readme);
    ck_assert_msg(strstr(readme, "](../glossary.md)") != NULL,
                  "docs/zh/labs/README.md has no link to ../glossary.md");
    free(readme);
}
END_TEST

Suite *make_glossary_suite(void)
{
    Suite *s = suite_create("glossary");
    TCase *tc = tcase_create("glossary");
    tcase_set_timeout(tc, 60); /* every handout and key against every row (slow when sanitized) */
    tcase_add_test(tc, documents_use_the_chosen_terms);
    tcase_add_test(tc, the_labs_link_the_glossary);
    tcase_add_test(tc, the_program_uses_the_chosen_terms);
    suite_add_tcase(s, tc);
    return s;
}
