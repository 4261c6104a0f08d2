/* test_rubric.c — every lab key can be marked: points for every question, "accept if"
 * lines that name their bands, the same points in English and in Chinese.
 *
 * The keys (docs/labs/keys/NN-NAME.md, docs/zh/labs/keys/NN-NAME.md) end the predictions
 * and every answer with a marking block:
 *     **Marking: 3 points.**              **评分：3 分。**
 *     - **1 point**: accept if ...        - **1 分**，给分条件：……
 *     - **2 points**: ...                 - **2 分**：……
 * and state the lab's total once, "**Total: N points**" ("**总分：N 分**"). What is
 * checked, for every lab in both languages:
 *   - the predictions have one block and every numbered answer has one, and the key has
 *     as many answers as its handout has questions;
 *   - each block's lines add up to the block's points, and the blocks to the total;
 *   - an "accept if" line ("给分条件") names a band: a range MIN–MAX or a decimal number
 *     that the key's answers quote outside the marking lines, and no range of a marking
 *     line is missing from them (a rubric quotes the measurements, it does not make new
 *     ones);
 *   - the English and the Chinese key give the same points, block by block;
 *   - the key says how to read a student's kernel (`--version`) and, for a lab of training
 *     runs, which spread its bands are (min–max, against the report's mean ± SD).
 * test_keys.c holds the bands themselves to the runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testhandout.h"
#include "testutil.h"

#define MAX_BLOCKS 24
#define EN_DASH "\xe2\x80\x93"
#define MINUS "\xe2\x88\x92"

/* The words of a key in one language. */
typedef struct tongue {
    const char *dir, *handouts;      /* keys folder, handout glob */
    const char *questions, *predict; /* section headings */
    const char *block, *total;       /* "**Marking: ", "**Total: " */
    const char *line_unit, *accept;  /* the unit after a line's number, "accept if" */
    const char *mean_sd;             /* how the key names the report's spread */
} tongue;

static const tongue tongues[] = {
    {"docs/labs/keys", "docs/labs/[0-9][0-9]-*.md", "## Questions", "## Predict before you run",
     "**Marking: ", "**Total: ", " point", "accept if", "mean ± standard deviation"},
    {"docs/zh/labs/keys", "docs/zh/labs/[0-9][0-9]-*.md", "## 问题", "## 运行之前先预测",
     "**评分：", "**总分：", " 分**", "给分条件", "均值 ± 标准差"},
};

/* One marking block of a key, as read. */
typedef struct mblock {
    int points, sum, lines, line; /* stated, added up from its lines, its line count, where */
    int section;                  /* 0: the predictions, n: the answer to question n */
} mblock;

/* The numbered questions of a handout (items at column 0 under its questions heading). */
static int count_questions(const char *text, const char *heading)
{
    const char *sec = strstr(text, heading);
    ck_assert_msg(sec != NULL, "no %s", heading);
    const char *end = strstr(sec + 1, "\n## ");
    int n = 0;
    for (const char *p = strchr(sec, '\n'); p && (!end || p < end); p = strchr(p + 1, '\n'))
        n += p[1] >= '1' && p[1] <= '9' && strncmp(p + 2, ". ", 2) == 0;
    return n;
}

/* Is c a character that can be part of a number written in a key? */
static int numchar(char c)
{
    return (c >= '0' && c <= '9') || c == '.';
}

/* The length of the number at s ("0.872", "7.307e-08", "−0.020", "17707"), 0 if none. */
static size_t number_at(const char *s)
{
    size_t n = 0;
    if (strncmp(s, MINUS, 3) == 0)
        n = 3;
    if (s[n] < '0' || s[n] > '9')
        return 0;
    while (numchar(s[n]))
        n++;
    if (s[n - 1] == '.')
        n--; /* the full stop of a sentence */
    if (s[n] == 'e' && (s[n + 1] == '-' || s[n + 1] == '+') && s[n + 2] >= '0' &&
        s[n + 2] <= '9')
        for (n += 2; s[n] >= '0' && s[n] <= '9'; n++)
            ;
    return n;
}

/* The next band-like token of s from *at: a range NUMBER–NUMBER, or a number holding a
 * decimal point; copied into tok, *at moved past it. 1 when one was found, with *range
 * set when it is a range. */
static int next_token(const char *s, size_t *at, char *tok, size_t n, int *range)
{
    for (size_t i = *at; s[i]; i++) {
        const char c = i > 0 ? s[i - 1] : ' ';
        if (numchar(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
            continue; /* inside a word or a number already seen */
        const size_t a = number_at(s + i);
        if (a == 0)
            continue;
        size_t len = a;
        *range = 0;
        if (strncmp(s + i + a, EN_DASH, 3) == 0) {
            const size_t b = number_at(s + i + a + 3);
            if (b > 0) {
                len = a + 3 + b;
                *range = 1;
            }
        }
        *at = i + len;
        if (!*range && !memchr(s + i, '.', a))
            continue; /* a plain count: not a band */
        snprintf(tok, n, "%.*s", (int)len, s + i);
        return 1;
    }
    return 0;
}

/* Reads the key at path in the language t: its marking blocks into b (their count
 * returned) and its total into *total; into *answers the key's text without the marking
 * lines, into *lines the marking lines, one a line (free both). */
static size_t read_key(const char *path, const tongue *t, mblock *b, int *total, char **answers,
                       char **lines)
{
    char *text = ho_read_file(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    *answers = calloc(strlen(text) + 2, 1);
    *lines = calloc(strlen(text) + 2, 1);
    ck_assert(*answers && *lines);
    size_t nb = 0;
    int section = -1, in_block = 0, in_line = 0, line_indent = 0, lineno = 0;
    *total = -1;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        const char *s = line + strspn(line, " ");
        const int indent = (int)(s - line);
        /* where we are: -1 elsewhere, 0 the predictions, 100 + n the answer n */
        if (strncmp(line, "## ", 3) == 0)
            section = strcmp(line, t->predict) == 0     ? 0
                      : strcmp(line, t->questions) == 0 ? 100
                                                        : -1;
        if (section >= 100 && line[0] >= '1' && line[0] <= '9' &&
            strncmp(line + 1, ". ", 2) == 0)
            section = 100 + (line[0] - '0');
        const char *tot = strstr(line, t->total);
        if (tot) {
            ck_assert_msg(*total < 0, "%s:%d: a second total", path, lineno);
            *total = atoi(tot + strlen(t->total));
        }
        if (strncmp(s, t->block, strlen(t->block)) == 0) {
            ck_assert_msg(section == 0 || section > 100,
                          "%s:%d: a marking block outside the "
                          "predictions and the answers",
                          path, lineno);
            ck_assert_int_lt(nb, MAX_BLOCKS);
            b[nb++] = (mblock){atoi(s + strlen(t->block)), 0, 0, lineno,
                               section == 0 ? 0 : section - 100};
            in_block = 1;
            in_line = 0;
            continue;
        }
        if (in_block && strncmp(s, "- **", 4) == 0 && s[4] >= '1' && s[4] <= '9' &&
            strstr(s, t->line_unit) != NULL) {
            /* a line of the block: "- **N point(s)**" or "- **N 分**" */
            b[nb - 1].sum += atoi(s + 4);
            b[nb - 1].lines++;
            in_line = 1;
            line_indent = indent;
            strcat(*lines, "\n");
            strcat(*lines, s);
            continue;
        }
        if (in_line && *s && indent > line_indent) {
            strcat(*lines, " "); /* the line goes on */
            strcat(*lines, s);
            continue;
        }
        in_block = in_line = 0;
        strcat(*answers, line);
        strcat(*answers, "\n");
    }
    free(text);
    return nb;
}

static char handouts[2][32][PATH_LEN];
static size_t n_handouts[2];

/* The key of the handout at path, in language t, into key. */
static void key_of(const char *handout_path, const tongue *t, char *key)
{
    snprintf(key, PATH_LEN, "%s/%s", t->dir, strrchr(handout_path, '/') + 1);
}

START_TEST(key_can_be_marked)
{
    mblock blocks[2][MAX_BLOCKS];
    size_t nb[2];
    for (int lang = 0; lang < 2; lang++) {
        const tongue *t = &tongues[lang];
        ck_assert_msg((size_t)_i < n_handouts[lang], "lab %d has no %s handout", _i + 1,
                      lang ? "Chinese" : "English");
        const char *hpath = handouts[lang][_i];
        char key[PATH_LEN];
        key_of(hpath, t, key);
        char *htext = ho_read_file(hpath);
        ck_assert_msg(htext != NULL, "cannot read %s", hpath);
        const int nq = count_questions(htext, t->questions);
        free(htext);
        int total;
        char *answers, *lines;
        mblock *b = blocks[lang];
        nb[lang] = read_key(key, t, b, &total, &answers, &lines);

        /* one block for the predictions, one for each answer, in order */
        ck_assert_msg(nb[lang] == (size_t)nq + 1,
                      "%s: %zu marking blocks for the predictions "
                      "and %d questions (%s)",
                      key, nb[lang], nq, hpath);
        int sum = 0;
        for (size_t k = 0; k < nb[lang]; k++) {
            ck_assert_msg(b[k].section == (int)k,
                          "%s:%d: the marking block of %s %d is not "
                          "where it belongs",
                          key, b[k].line, k ? "answer" : "the predictions", (int)k);
            ck_assert_msg(b[k].points > 0 && b[k].lines > 0 && b[k].sum == b[k].points,
                          "%s:%d: a block of %d points whose %d lines add up to %d", key,
                          b[k].line, b[k].points, b[k].lines, b[k].sum);
            sum += b[k].points;
        }
        ck_assert_msg(total == sum, "%s: the total says %d points, the blocks add up to %d",
                      key, total, sum);

        /* accept-if lines name a band the answers quote; no range is new */
        int accepts = 0;
        for (char *l = lines, *next; l && *l; l = next) {
            next = strchr(l + 1, '\n');
            if (next)
                *next++ = '\0';
            if (*l == '\n')
                l++;
            char tok[96];
            size_t at = 0;
            int range, named = 0;
            while (next_token(l, &at, tok, sizeof tok, &range)) {
                const int quoted = strstr(answers, tok) != NULL;
                ck_assert_msg(!range || quoted,
                              "%s: the marking line \"%.60s...\" quotes %s, "
                              "which no answer of the key gives",
                              key, l, tok);
                named |= quoted;
            }
            if (strstr(l, t->accept)) {
                accepts++;
                ck_assert_msg(named,
                              "%s: the accept-if line \"%.80s...\" names no band the "
                              "key's answers give",
                              key, l);
            }
        }
        ck_assert_msg(accepts >= 3, "%s: only %d accept-if lines", key, accepts);

        /* how to read the kernel, and which spread the bands are */
        ck_assert_msg(strstr(answers, "--version") && strstr(answers, "kernel:"),
                      "%s does not say how to read a student's kernel", key);
        const int trains = strstr(answers, "blas_core") != NULL;
        ck_assert_msg(!trains || strstr(answers, t->mean_sd),
                      "%s does not name the report's "
                      "spread (%s) beside its min–max bands",
                      key, t->mean_sd);
        free(answers);
        free(lines);
    }
    /* the same points in both languages */
    ck_assert_int_eq(nb[0], nb[1]);
    for (size_t k = 0; k < nb[0]; k++)
        ck_assert_msg(blocks[0][k].points == blocks[1][k].points,
                      "lab %d: block %zu gives %d points in English, %d in Chinese", _i + 1, k,
                      blocks[0][k].points, blocks[1][k].points);
}
END_TEST

Suite *make_rubric_suite(void)
{
    for (int lang = 0; lang < 2; lang++)
        n_handouts[lang] = ho_find_files(tongues[lang].handouts, handouts[lang], 32);
    Suite *s = suite_create("rubric");
    TCase *tc = tcase_create("keys");
    tcase_add_loop_test(tc, key_can_be_marked, 0, (int)(n_handouts[0] ? n_handouts[0] : 1));
    suite_add_tcase(s, tc);
    return s;
}
