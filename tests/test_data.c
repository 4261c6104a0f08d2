/* test_data.c — your own data (`--task file:PATH`): the parser of SOURCE<TAB>TARGET files
 * and each line it refuses, the vocabulary, the fixed split (deterministic, disjoint,
 * independent of the file's order), the buckets and the training batches drawn from
 * them, the target length the harness asks for; then, through the program, a short
 * training of each model on a small file, the words in its traces, the final evaluation
 * on the test set, and a checkpoint refused once its file changed or is gone.
 *
 * Design. The data sets are written here, small and all different: a reordering task
 * over letters ("a b c" -> "c b a", with sources of 2 to 4 letters) so that buckets of
 * several lengths exist. Files go to a directory of this process under /tmp.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/config.h"
#include "../common/core/dataset.h"
#include "../common/core/task.h"
#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

/* ---- data sets written here ------------------------------------------------------------ */

/* Writes n (at most 676) examples of the reversal of letters into a new string (free
 * it): example k has 2 + k % 3 letters, the first two k in base 26 (so no two examples
 * are the same), the others by a fixed rule; every length holds several examples. A
 * header comment and a blank line come first; lines end in CRLF when crlf is set. */
static char *letters_text(size_t n, int crlf)
{
    char *s = malloc(64 + n * 32);
    size_t at = (size_t)sprintf(s, "# reversal of letters\n\n");
    for (size_t k = 0; k < n; k++) {
        const size_t len = 2 + k % 3;
        char w[4];
        w[0] = (char)('a' + k % 26);
        w[1] = (char)('a' + k / 26 % 26);
        for (size_t i = 2; i < len; i++)
            w[i] = (char)('a' + (k * 7 + i * 5) % 26);
        for (size_t i = 0; i < len; i++)
            at += (size_t)sprintf(s + at, i ? " %c" : "%c", w[i]);
        s[at++] = '\t';
        for (size_t i = 0; i < len; i++)
            at += (size_t)sprintf(s + at, i ? " %c" : "%c", w[len - 1 - i]);
        at += (size_t)sprintf(s + at, crlf ? "\r\n" : "\n");
    }
    return s;
}

/* Parses text (copied) as the file "x.tsv" with max_len 8. Returns dataset_parse's. */
static int parse(dataset *d, const char *text, size_t len, char *err, size_t n)
{
    char *copy = malloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    return dataset_parse(d, copy, len, "x.tsv", 8, err, n);
}

/* The directory of this process's files, made once; each test case's teardown
 * (remove_tmpdir) takes it away again, so make check leaves none behind. */
static char tmp_dir[64];

static const char *tmpdir(void)
{
    char *dir = tmp_dir;
    if (!dir[0]) {
        snprintf(dir, sizeof tmp_dir, "/tmp/attnlab-data-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    return dir;
}

/* The teardown of every test case: removes tmpdir() when the test made it. */
static void remove_tmpdir(void)
{
    if (tmp_dir[0]) {
        ru_remove_tree(tmp_dir);
        tmp_dir[0] = '\0';
    }
}

/* Writes text to dir/name and the path into path. */
static void write_file(char *path, size_t n, const char *name, const char *text)
{
    snprintf(path, n, "%.60s/%.60s", tmpdir(), name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- parsing ----------------------------------------------------------------------------- */

START_TEST(a_file_becomes_examples_and_a_sorted_vocabulary)
{
    for (int crlf = 0; crlf <= 1; crlf++) {
        char *text = letters_text(60, crlf), err[256];
        dataset d;
        ck_assert_msg(parse(&d, text, strlen(text), err, sizeof err) == 0, "%s", err);
        ck_assert_uint_eq(d.n, 60);
        ck_assert_uint_eq(d.max_Ts, 4);
        ck_assert_uint_eq(d.max_Tt, 4);
        for (size_t k = 1; k < d.V; k++) /* sorted, each word once */
            ck_assert_int_lt(strcmp(d.words[k - 1], d.words[k]), 0);
        /* every example reads back as the reversal it was written as */
        for (size_t i = 0; i < d.n; i++) {
            const dataset_example *e = &d.ex[i];
            ck_assert_uint_eq(e->Ts, e->Tt);
            ck_assert_uint_eq(e->Ts, 2 + (e->line - 3) % 3); /* two lines of header */
            for (size_t t = 0; t < e->Ts; t++) {
                ck_assert_int_lt(e->src[t], (int)d.V);
                ck_assert_int_eq(e->src[t], e->tgt[e->Ts - 1 - t]);
            }
        }
        dataset_free(&d);
        free(text);
    }
}
END_TEST

/* A vocabulary of hundreds of words, met in an order that is not theirs (so the table
 * that numbers them grows several times): each appears once in the sorted vocabulary,
 * and every token names the word written in the file. */
START_TEST(many_words_each_get_their_own_token)
{
    enum { WORDS = 700, LINES = 350 };
    static char text[LINES * 32];
    size_t len = 0;
    for (int k = 0; k < LINES; k++) { /* words (k*389) mod 700 and (k*389+1) mod 700 */
        const int a = (k * 389) % WORDS, b = (k * 389 + 1) % WORDS;
        len += (size_t)snprintf(text + len, sizeof text - len, "w%d x%d\tx%d w%d\n", a, b, b, a);
    }
    char err[256], word[16];
    dataset d;
    ck_assert_msg(parse(&d, text, len, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(d.V, WORDS);
    for (size_t k = 1; k < d.V; k++)
        ck_assert_int_lt(strcmp(d.words[k - 1], d.words[k]), 0);
    for (size_t i = 0; i < d.n; i++) { /* line L (from 1) holds k = L - 1 */
        const dataset_example *e = &d.ex[i];
        const int k = (int)e->line - 1;
        snprintf(word, sizeof word, "w%d", (k * 389) % WORDS);
        ck_assert_str_eq(d.words[e->src[0]], word);
        ck_assert_str_eq(d.words[e->tgt[1]], word);
        snprintf(word, sizeof word, "x%d", (k * 389 + 1) % WORDS);
        ck_assert_str_eq(d.words[e->src[1]], word);
        ck_assert_str_eq(d.words[e->tgt[0]], word);
    }
    dataset_free(&d);
}
END_TEST

/* Each bad file and what its one-line message must say. The bad line is always line 3,
 * after two good ones (padded to enough examples below). */
static const struct bad_case {
    const char *line; /* the third line */
    const char *says;
} bad_cases[] = {
    {"a b c\n", "x.tsv line 3: no tab between source and target"},
    {"a\tb\tc\n", "x.tsv line 3: more than one tab"},
    {"\tb c\n", "x.tsv line 3: the source is empty"},
    {"a b\t  \n", "x.tsv line 3: the target is empty"},
    {"a \x01 b\tc\n", "x.tsv line 3: a control character (byte 0x01) at column 3"},
    {"a \x7f\tc\n", "x.tsv line 3: a control character (byte 0x7f)"},
    {"a\xc2\x85 b\tc\n", "x.tsv line 3: bytes that are not UTF-8 text at column 2"},
    {"a \xff\tc\n", "x.tsv line 3: bytes that are not UTF-8 text at column 3"},
    {"a b c d e f g h i\tc\n", "x.tsv line 3, the source holds more than 8 symbols"},
    {"a\tb c d e f g h i j\n", "x.tsv line 3, the target holds more than 8 symbols"},
    {"a\tbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n",
     "x.tsv line 3, the target: the symbol"},
};

START_TEST(each_bad_line_is_named)
{
    const struct bad_case *c = &bad_cases[_i];
    char text[4096], err[512] = "";
    snprintf(text, sizeof text, "a b\tb a\nc d\td c\n%s", c->line);
    for (int k = 0; k < 12; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "e f\tf e\n");
    dataset d;
    ck_assert_int_eq(parse(&d, text, strlen(text), err, sizeof err), -1);
    ck_assert_msg(strstr(err, c->says) != NULL, "case %d: '%s' does not say '%s'", _i, err,
                  c->says);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_null(d.ex); /* nothing kept */
}
END_TEST

START_TEST(a_nul_byte_is_a_control_character_not_an_end)
{
    const char text[] = "a b\tb a\nc\0d\td c\n";
    char err[256];
    dataset d;
    ck_assert_int_eq(parse(&d, text, sizeof text - 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "x.tsv line 2: a control character (byte 0x00) at column 2"),
                  "%s", err);
}
END_TEST

START_TEST(too_few_examples_or_symbols_are_refused)
{
    char *text = letters_text(DATASET_MIN_EXAMPLES - 1, 0), err[256];
    dataset d;
    ck_assert_int_eq(parse(&d, text, strlen(text), err, sizeof err), -1);
    ck_assert_msg(strstr(err, "x.tsv: 9 examples (accepted: at least 10"), "%s", err);
    free(text);
    char one[512] = "";
    for (int k = 0; k < 12; k++)
        strcat(one, "a a\ta\n");
    ck_assert_int_eq(parse(&d, one, strlen(one), err, sizeof err), -1);
    ck_assert_msg(strstr(err, "x.tsv: 1 distinct symbols (accepted: 2 to 1000)"), "%s", err);
    ck_assert_int_eq(dataset_read(&d, "/nonexistent/x.tsv", 8, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot read /nonexistent/x.tsv: "), "%s", err);
}
END_TEST

/* ---- the split ----------------------------------------------------------------------------- */

/* The set of the example written on text line `line`, or -1. */
static int set_of_line(const dataset *d, size_t line)
{
    for (int s = 0; s < DATASET_N_SETS; s++)
        for (size_t i = d->set[s].first; i < d->set[s].first + d->set[s].count; i++)
            if (d->ex[i].line == line)
                return s;
    return -1;
}

START_TEST(the_split_is_fixed_disjoint_and_independent_of_the_order)
{
    char *text = letters_text(200, 0), err[256];
    dataset a, b;
    ck_assert_int_eq(parse(&a, text, strlen(text), err, sizeof err), 0);
    /* 80 / 10 / 10, in order, covering every example once */
    ck_assert_uint_eq(a.set[DATASET_TRAIN].count, 160);
    ck_assert_uint_eq(a.set[DATASET_VAL].count, 20);
    ck_assert_uint_eq(a.set[DATASET_TEST].count, 20);
    ck_assert_uint_eq(a.set[DATASET_VAL].first, 160);
    ck_assert_uint_eq(a.set[DATASET_TEST].first, 180);
    for (size_t line = 3; line < 203; line++)
        ck_assert_int_ge(set_of_line(&a, line), 0);
    /* the keys decide: every training key is below every validation key, and so on */
    uint64_t top[DATASET_N_SETS] = {0}, bottom[DATASET_N_SETS];
    for (int s = 0; s < DATASET_N_SETS; s++) {
        bottom[s] = UINT64_MAX;
        for (size_t i = a.set[s].first; i < a.set[s].first + a.set[s].count; i++) {
            top[s] = a.ex[i].key > top[s] ? a.ex[i].key : top[s];
            bottom[s] = a.ex[i].key < bottom[s] ? a.ex[i].key : bottom[s];
        }
    }
    ck_assert(top[DATASET_TRAIN] <= bottom[DATASET_VAL]);
    ck_assert(top[DATASET_VAL] <= bottom[DATASET_TEST]);
    /* the same examples written backwards, with other spacing: the same sets */
    char *rev = malloc(strlen(text) * 2 + 64);
    rev[0] = '\0';
    char *lines[256];
    size_t nl = 0;
    for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
        if (p[0] != '#')
            lines[nl++] = p;
    for (size_t k = nl; k-- > 0;) {
        char *tab = strchr(lines[k], '\t');
        *tab = '\0';
        sprintf(rev + strlen(rev), "  %s \t%s  \n", lines[k], tab + 1);
    }
    ck_assert_int_eq(parse(&b, rev, strlen(rev), err, sizeof err), 0);
    for (int s = 0; s < DATASET_N_SETS; s++)
        for (size_t i = a.set[s].first; i < a.set[s].first + a.set[s].count; i++) {
            ck_assert_uint_eq(a.ex[i].key, b.ex[i].key); /* same order, same sets */
            ck_assert_uint_eq(a.ex[i].line - 3, 200 - b.ex[i].line); /* line k is 201 - k */
        }
    dataset_free(&a);
    dataset_free(&b);
    free(rev);
    free(text);
}
END_TEST

/* ---- buckets and batches ----------------------------------------------------------------- */

START_TEST(buckets_hold_one_shape_each_and_never_cross_a_set)
{
    char *text = letters_text(300, 0), err[256];
    dataset d;
    ck_assert_int_eq(parse(&d, text, strlen(text), err, sizeof err), 0);
    for (int s = 0; s < DATASET_N_SETS; s++) {
        const dataset_range bs = d.buckets[s], es = d.set[s];
        size_t covered = 0;
        for (size_t k = bs.first; k < bs.first + bs.count; k++) {
            const dataset_bucket *b = &d.b[k];
            ck_assert_uint_ge(b->ex.first, es.first);
            ck_assert_uint_le(b->ex.first + b->ex.count, es.first + es.count);
            for (size_t i = b->ex.first; i < b->ex.first + b->ex.count; i++) {
                ck_assert_uint_eq(d.ex[i].Ts, b->Ts);
                ck_assert_uint_eq(d.ex[i].Tt, b->Tt);
                ck_assert_uint_eq(d.bucket_of[i], k);
            }
            covered += b->ex.count;
        }
        ck_assert_uint_eq(covered, es.count);
    }
    /* the target length: the longest of that source length, else the nearest length's */
    ck_assert_uint_eq(dataset_target_len(&d, 3), 3);
    ck_assert_uint_eq(dataset_target_len(&d, 1), 2);
    ck_assert_uint_eq(dataset_target_len(&d, 9), 4);
    dataset_free(&d);
    free(text);
}
END_TEST

/* Writes n examples of letters_text to the file name and opens it as the task of *c
 * (the defaults otherwise). */
static const task *open_letters(config *c, size_t n, const char *name)
{
    char path[128], err[512];
    char *text = letters_text(n, 0);
    write_file(path, sizeof path, name, text);
    free(text);
    config_defaults(c);
    snprintf(c->task, sizeof c->task, "file:%s", path);
    const task *t = task_open_new(c, err, sizeof err); /* as a new run reads it */
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

START_TEST(training_batches_come_from_one_bucket_of_the_training_set)
{
    config c;
    const task *t = open_letters(&c, 300, "batches.tsv");
    const dataset *d = t->data;
    c.symbols = d->V;
    c.train_min = 3; /* the lengths 3 and 4 only */
    c.train_max = 4;
    ck_assert_uint_eq(task_max_target_len(t, 3, 4), 4);
    enum { B = 7, DRAWS = 3000 };
    batch b;
    ck_assert_int_eq(batch_alloc(&b, B, 4, 4), 0);
    gsl_rng *r = tu_rng(5);
    size_t per_bucket[64] = {0};
    for (int k = 0; k < DRAWS; k++) {
        task_train_batch(t, &b, B, &c, r);
        ck_assert_uint_eq(b.B, B);
        ck_assert(b.Ts == 3 || b.Ts == 4);
        for (size_t i = 0; i < B; i++) {
            /* the row is a training example of the batch's shape, with teacher forcing */
            const int *src = b.src + i * b.Ts, *tgt = b.tgt + i * b.Tt;
            const long e = dataset_find(d, src, b.Ts);
            ck_assert_int_ge(e, 0);
            ck_assert_uint_lt((size_t)e, d->set[DATASET_VAL].first);
            ck_assert_int_eq(memcmp(tgt, d->ex[e].tgt, b.Tt * sizeof *tgt), 0);
            ck_assert_int_eq(b.dec_in[i * b.Tt], (int)d->V);
            for (size_t j = 1; j < b.Tt; j++)
                ck_assert_int_eq(b.dec_in[i * b.Tt + j], tgt[j - 1]);
        }
        per_bucket[d->bucket_of[dataset_find(d, b.src, b.Ts)]]++;
    }
    /* each bucket in proportion to its size (within 5 standard deviations) */
    const dataset_range w = dataset_within(d, DATASET_TRAIN, 3, 4);
    for (size_t k = 0; k < d->buckets[DATASET_TRAIN].count; k++) {
        const dataset_bucket *bk = &d->b[k];
        const double p = bk->Ts >= 3 ? (double)bk->ex.count / (double)w.count : 0;
        const double sd = sqrt(DRAWS * p * (1 - p)) + 1;
        ck_assert_msg(fabs((double)per_bucket[k] - DRAWS * p) < 5 * sd,
                      "bucket %zu (length %zu): %zu draws, expected about %.0f", k, bk->Ts,
                      per_bucket[k], DRAWS * p);
    }
    gsl_rng_free(r);
    batch_free(&b);
    task_close(t);
}
END_TEST

START_TEST(words_are_parsed_and_shown_with_the_vocabulary)
{
    config c;
    const task *t = open_letters(&c, 40, "words.tsv");
    char err[512], word[32];
    int x[8];
    size_t n;
    ck_assert_int_eq(task_parse(t, t->data->V, " h a\tz\n", x, 8, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 3);
    task_symbol(t, t->data->V, x[0], word, sizeof word);
    ck_assert_str_eq(word, "h");
    task_symbol(t, t->data->V, x[2], word, sizeof word);
    ck_assert_str_eq(word, "z");
    task_symbol(t, t->data->V, (int)t->data->V, word, sizeof word);
    ck_assert_str_eq(word, "BOS");
    ck_assert_int_eq(task_parse(t, t->data->V, "a march", x, 8, &n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "'march' is not a symbol of the data's vocabulary"), "%s", err);
    ck_assert_int_eq(task_parse(t, t->data->V, "a b c", x, 2, &n, err, sizeof err), -1);
    ck_assert_int_eq(task_parse(t, t->data->V, "  ", x, 2, &n, err, sizeof err), -1);
    /* a checkpoint's configuration with another CRC: the file changed */
    c.data_crc = t->data->crc ^ 1u;
    c.symbols = t->data->V;
    task_close(t);
    ck_assert_ptr_null(task_open(&c, err, sizeof err));
    ck_assert_msg(strstr(err, "has changed since the run was trained"), "%s", err);
    /* short names for run directories */
    task_short_name("file:docs/labs/data/dates.tsv", word, sizeof word);
    ck_assert_str_eq(word, "dates");
    task_short_name("copy", word, sizeof word);
    ck_assert_str_eq(word, "copy");
}
END_TEST

/* The text config_write_tsv gives for c (free it). */
static char *config_text(const config *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(config_write_tsv(c, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}
/* A data file may have any name a file system takes, spaces included; a tab, a newline or
 * a control character cannot be stored in config.tsv and is refused by name. Other
 * settings are names: a space there is still refused. */
START_TEST(a_data_file_path_may_hold_spaces)
{
    static const char *const good[] = {"file:my data (2).tsv", "file:数据/第 1 组.tsv",
                                       "file: leading space.tsv"};
    static const char *const bad[] = {"file:a\tb.tsv", "file:a\nb.tsv", "co py"};
    const config_field *task_f = config_find("task"), *cell = config_find("cell");
    ck_assert_ptr_nonnull(task_f);
    ck_assert_ptr_nonnull(cell);
    config c;
    config_defaults(&c);
    char err[512];
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        ck_assert_msg(config_set(&c, task_f, good[k], err, sizeof err) == 0, "%s: %s", good[k],
                      err);
        ck_assert_str_eq(c.task, good[k]);
    }
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_int_ne(config_set(&c, task_f, bad[k], err, sizeof err), 0);
        ck_assert_msg(strstr(err, "--task"), "%s", err);
    }
    ck_assert_int_ne(config_set(&c, cell, "gr u", err, sizeof err), 0);
}
END_TEST

START_TEST(only_a_file_task_writes_data_crc)
{
    config c;
    config_defaults(&c);
    c.data_crc = 1234; /* whatever it holds: a generated task has no data file */
    char *buf = config_text(&c);
    ck_assert_ptr_null(strstr(buf, "data_crc"));
    free(buf);
    snprintf(c.task, sizeof c.task, "file:x.tsv");
    for (unsigned long crc = 0; crc <= 1234; crc += 1234) {
        /* a file task's CRC is written whatever it is, 0 too: 0 checks like any other */
        c.data_crc = crc;
        buf = config_text(&c);
        char want[64];
        snprintf(want, sizeof want, "\ndata_crc\t%lu\n", crc);
        ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
        config back;
        config_defaults(&back);
        back.data_crc = 99;
        char err[256];
        ck_assert_int_eq(config_read_text(&back, buf, err, sizeof err), 0);
        ck_assert_uint_eq(back.data_crc, crc);
        free(buf);
    }
}
END_TEST

/* ---- through the program ----------------------------------------------------------------- */

/* Trains each model for a few steps on a small file and looks at what it wrote. */
START_TEST(each_model_trains_on_a_file_and_shows_its_words)
{
    static const char *const models[] = {"lstm", "rnn_attention", "transformer"};
    const char *name_of_model = models[_i];
    char path[256], task_arg[300], dir[300], file[400], text[16384];
    char *data = letters_text(120, 0);
    char name[64];
    snprintf(name, sizeof name, "run-%s.tsv", name_of_model);
    write_file(path, sizeof path, name, data);
    free(data);
    snprintf(task_arg, sizeof task_arg, "file:%s", path);
    snprintf(dir, sizeof dir, "%s/run-%s", tmpdir(), name_of_model);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", name_of_model, "--task",
                                            task_arg,
                                            "--steps", "30", "--log-every", "10", "--hidden",
                                            "16", "--embed", "8", "--attn", "8", "--d-model",
                                            "16", "--heads", "2", "--d-ff", "16", "--layers",
                                            "1", "--trace", "a b c", "--out", dir, "--quiet",
                                            NULL});
    ck_assert_msg(r.status == 0, "%s: %s", name_of_model, r.err);
    /* the final evaluation: the test set (12 examples) at each of its source lengths */
    snprintf(file, sizeof file, "%s/eval.tsv", dir);
    cli_slurp(file, text, sizeof text);
    size_t rows = 0, samples = 0, len, count;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        ck_assert_int_eq(sscanf(strchr(p, '\t'), "\t%zu\t%zu", &len, &count), 2);
        ck_assert(len >= 2 && len <= 4);
        samples += count;
        rows++;
    }
    ck_assert_msg(rows >= 1 && samples == 12, "%s", text);
    snprintf(file, sizeof file, "%s/config.tsv", dir);
    cli_slurp(file, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "\ndata_crc\t"));
    ck_assert_ptr_nonnull(strstr(text, "\ntrain_min\t2\n"));
    ck_assert_ptr_nonnull(strstr(text, "\ntrain_max\t4\n"));
    /* attention with words: the traces are labelled with them */
    snprintf(file, sizeof file, "%s/model.ckpt", dir);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", file, "--input",
                                            "c a t", NULL});
    ck_assert_msg(r.status == 0, "%s: %s", name_of_model, r.err);
    ck_assert_msg(strstr(r.out, "source:  c a t\n"), "%s", r.out);
    cli_run(&r, "a b c\nq q\nc a z z z\n",
            (const char *const[]){"eval", "--checkpoint", file, "--input", "-", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "source:    a b c\n"), "%s", r.out);
    /* "q q" is no source of the file: its target is unknown, and the line says why */
    ck_assert_msg(strstr(r.out, "source:    q q\n  target:    (none: no example of file:"),
                  "%s", r.out);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", file, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* the file changed: refused, the same for a missing one */
    FILE *f = fopen(path, "a");
    fputs("x y\ty x\n", f);
    fclose(f);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", file, "--input",
                                            "c a t", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "has changed since the run was trained"), "%s", r.err);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    unlink(path);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", file, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "cannot read "), "%s", r.err);
    cli_remove(dir);
}
END_TEST

/* train says, before its final evaluation, what it decodes: for a file, the test set's
 * own examples at each source length, as many as eval.tsv then counts (not the samples
 * of a generated task, which a file task does not use). */
START_TEST(train_names_the_test_examples_it_evaluates)
{
    char path[256], task_arg[300], dir[300], file[400], text[4096], want[128];
    char *data = letters_text(120, 0);
    write_file(path, sizeof path, "plan.tsv", data);
    free(data);
    snprintf(task_arg, sizeof task_arg, "file:%s", path);
    snprintf(dir, sizeof dir, "%s/run-plan", tmpdir());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--task", task_arg,
                                            "--hidden", "8", "--embed", "4", "--steps", "2",
                                            "--log-every", "1", "--samples", "7", "--out",
                                            dir, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(!strstr(r.err, "x 7 sequences"), "%s", r.err);
    snprintf(file, sizeof file, "%s/eval.tsv", dir);
    cli_slurp(file, text, sizeof text);
    size_t rows = 0, total = 0, len, count;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        ck_assert_int_eq(sscanf(strchr(p, '\t'), "\t%zu\t%zu", &len, &count), 2);
        snprintf(want, sizeof want, rows ? ", %zu of length %zu" : ": %zu of source length %zu",
                 count, len);
        ck_assert_msg(strstr(r.err, want), "no '%s' in: %s", want, r.err);
        total += count;
        rows++;
    }
    ck_assert_uint_ge(rows, 2);
    snprintf(want, sizeof want, "evaluating the %zu test examples: ", total);
    ck_assert_msg(strstr(r.err, want), "no '%s' in: %s", want, r.err);
    /* a generated task: lengths times samples, as asked */
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--hidden", "8",
                                            "--embed", "4", "--steps", "2", "--train-len",
                                            "3:5", "--eval-lengths", "4,6", "--samples", "7",
                                            "--out", dir, "--force", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "evaluating 2 lengths x 7 sequences\n"), "%s", r.err);
    cli_remove(dir);
}
END_TEST

/* A stopped run on a file resumes while the file is the same, and is refused, in one line
 * naming the change, once the file differs: resuming would train on other examples. */
START_TEST(a_stopped_run_resumes_only_on_its_own_file)
{
    char path[256], task_arg[300], dir[300], file[400];
    char *data = letters_text(120, 0);
    write_file(path, sizeof path, "resume.tsv", data);
    snprintf(task_arg, sizeof task_arg, "file:%s", path);
    snprintf(dir, sizeof dir, "%s/run-resume", tmpdir());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--task", task_arg,
                                            "--hidden", "8", "--embed", "4", "--steps", "30",
                                            "--checkpoint-every", "10", "--out", dir,
                                            "--quiet", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* stopped after its last checkpoint: the files of a finished run removed */
    static const char *const end[] = {"eval.tsv", "eval_positions.tsv", "eval_bleu.tsv",
                                      "model.ckpt", "build.tsv"};
    for (size_t k = 0; k < 5; k++) {
        snprintf(file, sizeof file, "%s/%s", dir, end[k]);
        ck_assert_int_eq(unlink(file), 0);
    }
    /* one example more: refused, and nothing of the run is touched */
    FILE *f = fopen(path, "a");
    fputs("x y\ty x\n", f);
    fclose(f);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", dir, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "has changed since the run began"), "%s", r.err);
    snprintf(file, sizeof file, "%s/model.ckpt", dir);
    ck_assert_int_ne(access(file, F_OK), 0);
    /* the file as it was: the run resumes and finishes */
    write_file(path, sizeof path, "resume.tsv", data);
    free(data);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", dir, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(access(file, F_OK), 0);
    cli_remove(dir);
}
END_TEST

START_TEST(bad_files_and_disagreeing_flags_are_usage_errors)
{
    char path[256], task_arg[300];
    char *data = letters_text(40, 0);
    write_file(path, sizeof path, "flags.tsv", data);
    free(data);
    snprintf(task_arg, sizeof task_arg, "file:%s", path);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--task", task_arg, "--symbols", "5",
                                            "--steps", "1", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--symbols 5 disagrees with the "), "%s", r.err);
    cli_run(&r, NULL, (const char *const[]){"train", "--task", task_arg, "--train-len", "9:12",
                                            "--steps", "1", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "no training example of"), "%s", r.err);
    cli_run(&r, NULL, (const char *const[]){"train", "--task", task_arg, "--eval-lengths", "7",
                                            "--steps", "1", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "holds no source of length 7"), "%s", r.err);
    write_file(path, sizeof path, "bad.tsv", "a b\tb a\nc d e\n");
    snprintf(task_arg, sizeof task_arg, "file:%s", path);
    cli_run(&r, NULL, (const char *const[]){"train", "--task", task_arg, NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "bad.tsv line 2: no tab between source and target"), "%s",
                  r.err);
    ck_assert_uint_eq(cli_count_lines(r.err), 2); /* the message and the help hint */
}
END_TEST

Suite *make_data_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, NULL, remove_tmpdir);
    tcase_add_test(tc, a_file_becomes_examples_and_a_sorted_vocabulary);
    tcase_add_test(tc, many_words_each_get_their_own_token);
    tcase_add_loop_test(tc, each_bad_line_is_named, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, a_nul_byte_is_a_control_character_not_an_end);
    tcase_add_test(tc, too_few_examples_or_symbols_are_refused);
    tcase_add_test(tc, only_a_file_task_writes_data_crc);
    tcase_add_test(tc, a_data_file_path_may_hold_spaces);
    suite_add_tcase(s, tc);
    tc = tcase_create("split");
    tcase_add_checked_fixture(tc, NULL, remove_tmpdir);
    tcase_add_test(tc, the_split_is_fixed_disjoint_and_independent_of_the_order);
    tcase_add_test(tc, buckets_hold_one_shape_each_and_never_cross_a_set);
    tcase_add_test(tc, training_batches_come_from_one_bucket_of_the_training_set);
    tcase_add_test(tc, words_are_parsed_and_shown_with_the_vocabulary);
    suite_add_tcase(s, tc);
    tc = tcase_create("program");
    tcase_add_checked_fixture(tc, NULL, remove_tmpdir);
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, each_model_trains_on_a_file_and_shows_its_words, 0, 3);
    tcase_add_test(tc, a_stopped_run_resumes_only_on_its_own_file);
    tcase_add_test(tc, train_names_the_test_examples_it_evaluates);
    tcase_add_test(tc, bad_files_and_disagreeing_flags_are_usage_errors);
    suite_add_tcase(s, tc);
    return s;
}
