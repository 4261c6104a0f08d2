/* test_translate.c — the toy translation data set (docs/labs/data/translate.c): every
 * example is the translation its documented rules give, the lengths are spread evenly,
 * no source is written twice, the output is the same on every run, and the program reads
 * it as a data file.
 *
 * Design. The generator's dictionary (`translate --dictionary`) is read here, and every
 * source sentence is parsed with the grammar of the generator's header and translated
 * again by this file's own rules: noun phrases "DET|NUMBER ADJ* NOUN [that VERB NP]",
 * clauses "NP VERB NP [PREP NP]" joined by "and"; the target puts the verb last (agreeing
 * with its subject), the subject marker after the subject, the place before the object,
 * a relative clause before its noun, the adjectives mirrored after the noun (agreeing
 * with it), the number after them, "ta"/"nel" last and nothing for "a". A parse that
 * fails, or a target other than the one these rules give, fails the test with the line.
 * The generator is the program ATTNLAB_TRANSLATE names, or labdata-translate beside the
 * program under test (the Makefile builds it with the tests).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/dataset.h"
#include "testutil.h"

#define TR_MIN_LEN 5
#define TR_MAX_LEN 64
#define TR_PER_LEN 400
#define TR_MAX_WORDS 160
#define TR_MAX_ENTRIES 256

/* One dictionary entry: its class and its forms, source then target. */
typedef struct entry {
    char cls[8];
    char src[2][24];
    char tgt[3][24];
} entry;

static entry dict[TR_MAX_ENTRIES];
static size_t n_dict;

/* The generator's path: ATTNLAB_TRANSLATE, or labdata-translate beside the program the
 * tests run (the Makefile builds it with the tests). */
static const char *generator(void)
{
    static char path[1024];
    const char *p = getenv("ATTNLAB_TRANSLATE");
    if (p)
        return p;
    const char *prog = getenv("ATTNLAB");
    const char *slash = prog ? strrchr(prog, '/') : NULL;
    snprintf(path, sizeof path, "%.*slabdata-translate", slash ? (int)(slash - prog + 1) : 0,
             slash ? prog : "build/");
    return path;
}

/* The standard output of the generator with args, whole (free it), or NULL. */
static char *run_generator(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s", generator(), args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    size_t got;
    while ((got = fread(s + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2)
            s = realloc(s, cap *= 2);
    }
    s[len] = '\0';
    if (pclose(p) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void read_dictionary(void)
{
    char *text = run_generator("--dictionary");
    ck_assert_msg(text != NULL, "%s --dictionary failed", generator());
    n_dict = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        ck_assert_uint_lt(n_dict, TR_MAX_ENTRIES);
        entry *e = &dict[n_dict++];
        memset(e, 0, sizeof *e);
        const int n = sscanf(line, "%7s %23s", e->cls, e->src[0]);
        ck_assert_int_eq(n, 2);
        const char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        ck_assert_msg(tab1 && tab2, "dictionary line without two tabs: %s", line);
        sscanf(tab1 + 1, "%23s %23s", e->src[0], e->src[1]);
        sscanf(tab2 + 1, "%23s %23s %23s", e->tgt[0], e->tgt[1], e->tgt[2]);
    }
    free(text);
    ck_assert_uint_gt(n_dict, 50);
}

/* The entry of class cls with source form w (form: which of its source forms), or NULL. */
static const entry *lookup(const char *cls, const char *w, int *form)
{
    for (size_t k = 0; k < n_dict; k++)
        for (int f = 0; f < 2; f++)
            if (strcmp(dict[k].cls, cls) == 0 && strcmp(dict[k].src[f], w) == 0) {
                if (form)
                    *form = f;
                return &dict[k];
            }
    return NULL;
}

/* A sentence being parsed (source words) and its translation being built. */
typedef struct parse {
    char *w[TR_MAX_WORDS];
    size_t n, at;
    const char *out[TR_MAX_WORDS * 2];
    size_t nout;
    char why[160];
} parse;

static void emit(parse *p, const char *w)
{
    if (p->nout < sizeof p->out / sizeof p->out[0])
        p->out[p->nout++] = w;
}

static const char *next_word(const parse *p) { return p->at < p->n ? p->w[p->at] : ""; }

static int bad(parse *p, const char *what)
{
    snprintf(p->why, sizeof p->why, "%s at word %zu ('%s')", what, p->at + 1, next_word(p));
    return -1;
}

/* Parses a noun phrase (a relative clause only when rel) and emits its translation;
 * *plural gets its number. Returns 0, or -1 with why. */
static int noun_phrase(parse *p, int rel, int *plural)
{
    const entry *det = lookup("det", next_word(p), NULL);
    const entry *num = det ? NULL : lookup("number", next_word(p), NULL);
    if (!det && !num)
        return bad(p, "no determiner or number");
    p->at++;
    const entry *adj[TR_MAX_WORDS];
    size_t nadj = 0;
    while (lookup("adj", next_word(p), NULL))
        adj[nadj++] = lookup("adj", p->w[p->at++], NULL);
    int pl;
    const entry *noun = lookup("noun", next_word(p), &pl);
    if (!noun)
        return bad(p, "no noun");
    p->at++;
    if ((num || strcmp(det->src[0], "some") == 0) && !pl)
        return bad(p, "a number or 'some' before a singular noun");
    if (det && strcmp(det->src[0], "a") == 0 && pl)
        return bad(p, "'a' before a plural noun");
    if (rel && strcmp(next_word(p), "that") == 0) {
        p->at++;
        int vform, opl;
        const entry *v = lookup("verb", next_word(p), &vform);
        if (!v)
            return bad(p, "no verb after 'that'");
        if (vform != pl)
            return bad(p, "a relative clause's verb that does not agree with its noun");
        p->at++;
        if (noun_phrase(p, 0, &opl) != 0)
            return -1;
        emit(p, v->tgt[2]);
    }
    emit(p, noun->tgt[pl]);
    for (size_t k = nadj; k-- > 0;)
        emit(p, adj[k]->tgt[pl]);
    if (num)
        emit(p, num->tgt[0]);
    else if (strcmp(det->tgt[0], "-") != 0)
        emit(p, det->tgt[0]);
    *plural = pl;
    return 0;
}

/* Parses one clause and emits its translation. Returns 0, or -1 with why. */
static int clause(parse *p)
{
    int spl, vform, opl, ppl;
    if (noun_phrase(p, 1, &spl) != 0)
        return -1;
    emit(p, "wa");
    const entry *v = lookup("verb", next_word(p), &vform);
    if (!v)
        return bad(p, "no verb after the subject");
    if (vform != spl)
        return bad(p, "a verb that does not agree with its subject");
    p->at++;
    /* the object is emitted after the place, which comes after it in the source */
    const size_t obj_at = p->nout;
    if (noun_phrase(p, 1, &opl) != 0)
        return -1;
    const entry *prep = lookup("prep", next_word(p), NULL);
    if (prep) {
        p->at++;
        const size_t place_at = p->nout;
        if (noun_phrase(p, 0, &ppl) != 0)
            return -1;
        emit(p, prep->tgt[0]);
        /* rotate: object words [obj_at, place_at) behind the place's [place_at, nout) */
        const char *tmp[TR_MAX_WORDS * 2];
        const size_t nobj = place_at - obj_at, nplace = p->nout - place_at;
        memcpy(tmp, p->out + place_at, nplace * sizeof *tmp);
        memcpy(tmp + nplace, p->out + obj_at, nobj * sizeof *tmp);
        memcpy(p->out + obj_at, tmp, (nobj + nplace) * sizeof *tmp);
    }
    emit(p, v->tgt[spl]);
    return 0;
}

/* Translates the source words of p by the rules. Returns 0, or -1 with why. */
static int translate(parse *p)
{
    for (;;) {
        if (clause(p) != 0)
            return -1;
        if (p->at == p->n)
            return 0;
        if (strcmp(next_word(p), "and") != 0)
            return bad(p, "a word after a complete clause");
        p->at++;
        emit(p, "ke");
    }
}

/* Splits s at spaces in place into w (at most max words); returns the count. */
static size_t split_words(char *s, char **w, size_t max)
{
    size_t n = 0;
    for (char *t = strtok(s, " "); t && n < max; t = strtok(NULL, " "))
        w[n++] = t;
    return n;
}

START_TEST(every_example_follows_the_rules_and_lengths_are_even)
{
    read_dictionary();
    char *text = run_generator("");
    ck_assert_msg(text != NULL, "%s failed", generator());
    size_t per_len[TR_MAX_LEN + 2] = {0}, lines = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lines++;
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        ck_assert_msg(tab != NULL, "line %zu has no tab", lines);
        *tab = '\0';
        static parse p;
        memset(&p, 0, sizeof p);
        char src[4096];
        snprintf(src, sizeof src, "%s", line);
        p.n = split_words(src, p.w, TR_MAX_WORDS);
        ck_assert_msg(p.n >= TR_MIN_LEN && p.n <= TR_MAX_LEN, "line %zu: %zu source words",
                      lines, p.n);
        per_len[p.n]++;
        ck_assert_msg(translate(&p) == 0, "line %zu: %s: %s", lines, p.why, line);
        char want[8192];
        size_t at = 0;
        for (size_t k = 0; k < p.nout && at < sizeof want - 32; k++)
            at += (size_t)snprintf(want + at, sizeof want - at, k ? " %s" : "%s", p.out[k]);
        ck_assert_msg(strcmp(want, tab + 1) == 0, "line %zu: %s\n  target   %s\n  by rules %s",
                      lines, line, tab + 1, want);
    }
    for (size_t len = TR_MIN_LEN; len <= TR_MAX_LEN; len++)
        ck_assert_msg(per_len[len] == TR_PER_LEN, "%zu sentences of %zu words (want %d)",
                      per_len[len], len, TR_PER_LEN);
    free(text);
}
END_TEST

/* The FNV-1a of a string; equal strings, equal hashes (the duplicates are then compared). */
static unsigned long long fnv(const char *s, size_t n)
{
    unsigned long long h = 1469598103934665603ull;
    for (size_t k = 0; k < n; k++)
        h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
    return h;
}

static int cmp_ull(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

START_TEST(no_source_twice_same_bytes_every_run_and_a_valid_data_file)
{
    char *a = run_generator(""), *b = run_generator("");
    ck_assert(a && b);
    ck_assert_msg(strcmp(a, b) == 0, "two runs of the generator wrote different bytes");
    /* sources: hash each, sort, neighbours with equal hashes must differ in text */
    const size_t n = (TR_MAX_LEN - TR_MIN_LEN + 1) * TR_PER_LEN;
    unsigned long long *h = malloc(n * sizeof *h);
    size_t k = 0;
    for (const char *line = a; *line && k < n;) {
        const char *end = strchr(line, '\n');
        const char *tab = memchr(line, '\t', (size_t)(end - line));
        if (line[0] != '#' && tab)
            h[k++] = fnv(line, (size_t)(tab - line));
        line = end + 1;
    }
    ck_assert_uint_eq(k, n);
    qsort(h, n, sizeof *h, cmp_ull);
    for (size_t i = 1; i < n; i++)
        ck_assert_msg(h[i] != h[i - 1], "a source sentence is written twice");
    free(h);
    /* the program's reader takes it: every symbol, the split, the buckets */
    dataset d;
    char err[512];
    const size_t len = strlen(a);
    ck_assert_msg(dataset_parse(&d, a, len, "translate.tsv", TR_MAX_LEN + 16, err,
                                sizeof err) == 0,
                  "%s", err);
    ck_assert_uint_eq(d.n, n);
    ck_assert_uint_le(d.max_Ts, TR_MAX_LEN);
    dataset_free(&d);
    free(b);
}
END_TEST

Suite *make_translate_suite(void)
{
    Suite *s = suite_create("translate");
    TCase *tc = tcase_create("data");
    tcase_set_timeout(tc, 120);
    /* the generator is a program of the build's own architecture, started by a shell:
     * under qemu-user without binfmt (CI's arm64 run) the kernel cannot start it */
    tcase_set_tags(tc, "noqemu");
    tcase_add_test(tc, every_example_follows_the_rules_and_lengths_are_even);
    tcase_add_test(tc, no_source_twice_same_bytes_every_run_and_a_valid_data_file);
    suite_add_tcase(s, tc);
    return s;
}
