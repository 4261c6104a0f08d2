/* test_cmd_attention.c — attnlab attention --untrained: the model as training found it;
 * --len N: a test sentence of a file task named by its length, decoded to its reference's
 * length.
 *
 * Design. Two runs of one seed and configuration, trained for different numbers of
 * steps, started from the same weights: --untrained must give the same matrices for both
 * (the weights drawn again from the seed, bit for bit), while their trained matrices
 * differ. Without --out it is refused, so a run's trace/ is never overwritten with an
 * untrained model's matrices.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testcli.h"
#include "testutil.h"

/* attention on dir/model.ckpt into out (untrained or not). */
static void trace_of(const char *dir, const char *out, int untrained)
{
    char ck[256];
    snprintf(ck, sizeof ck, "%s/model.ckpt", dir);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3 4", "--out", out,
                                            untrained ? "--untrained" : NULL, NULL});
    ck_assert_msg(r.status == 0, "attention: %s", r.err);
}

START_TEST(untrained_is_where_training_started)
{
    char base[128], a[160], b[160], ta[192], tb[192], fa[256], fb[256];
    snprintf(base, sizeof base, "/tmp/attnlab-untrained-%ld", (long)getpid());
    snprintf(a, sizeof a, "%s/short", base);
    snprintf(b, sizeof b, "%s/long", base);
    cli_tiny_lstm_run(a, "10", "0.003");
    cli_tiny_lstm_run(b, "40", "0.003");
    for (int untrained = 1; untrained >= 0; untrained--) {
        snprintf(ta, sizeof ta, "%s/t%d-a", base, untrained);
        snprintf(tb, sizeof tb, "%s/t%d-b", base, untrained);
        trace_of(a, ta, untrained);
        trace_of(b, tb, untrained);
        snprintf(fa, sizeof fa, "%s/enc.gate_f.tsv", ta);
        snprintf(fb, sizeof fb, "%s/enc.gate_f.tsv", tb);
        ck_assert_msg(cli_same_file(fa, fb) == untrained,
                      untrained ? "the untrained gates of two runs of one seed differ"
                                : "10 and 40 steps of training left the same gates");
    }
    /* one step at a rate of 1e-12 moves no weight by more than about 1e-12: its trained
     * gates, printed to 6 digits, are those of the weights training started from */
    char c[160], tc[192], fc[256];
    snprintf(c, sizeof c, "%s/still", base);
    snprintf(tc, sizeof tc, "%s/t-still", base);
    cli_tiny_lstm_run(c, "1", "1e-12");
    trace_of(c, tc, 0);
    snprintf(fa, sizeof fa, "%s/t1-a/enc.gate_f.tsv", base);
    snprintf(fc, sizeof fc, "%s/enc.gate_f.tsv", tc);
    ck_assert_msg(cli_same_file(fa, fc), "--untrained is not the model training started from");

    /* no --out: refused before anything is read */
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", "x.ckpt", "--input",
                                            "1 2", "--untrained", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--untrained needs --out DIR"));
    cli_remove(base);
}
END_TEST

/* --len N: the first test sentence of N source words of a file task, the same for every
 * run of the file; refused in one line for a length the test set lacks, for a generated
 * task, and beside --input. */
START_TEST(len_takes_a_test_sentence)
{
    char base[128], run[160], out[192], buf[4096];
    snprintf(base, sizeof base, "/tmp/attnlab-testlen-%ld", (long)getpid());
    snprintf(run, sizeof run, "%s/dates", base);
    snprintf(out, sizeof out, "%s/maps", base);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "rnn_attention", "--hidden",
                                            "8", "--embed", "4", "--attn", "6", "--task",
                                            "file:docs/labs/data/dates.tsv", "--steps", "2",
                                            "--samples", "8", "--out", run, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "train: %s", r.err);
    char ck[200];
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--len", "4",
                                            "--out", out, NULL});
    ck_assert_msg(r.status == 0, "attention --len 4: %s", r.err);
    ck_assert_msg(strstr(r.err, "the first test sentence of 4 words (line "), "%s", r.err);
    /* its map has one column per source word: the header, "rows\cols" and 4 words */
    cli_first_line(out, "alignment.tsv", buf, sizeof buf);
    size_t tabs = 0;
    for (const char *c = buf; *c; c++)
        tabs += *c == '\t';
    ck_assert_msg(tabs == 4, "alignment.tsv's header: %s", buf);
    /* the sentence printed is the source the header labels */
    const char *src = strstr(r.err, "source:");
    ck_assert_ptr_nonnull(src);
    char first[64];
    ck_assert_int_eq(sscanf(src, "source: %63s", first), 1);
    ck_assert_msg(strstr(buf, first), "the map's words '%s' are not the sentence's '%s'", buf,
                  first);
    /* refusals: one line each (and the usage hint), status 2 */
    static const struct {
        const char *len, *input, *says;
    } bad[] = {
        {"9", NULL, "no sentence of 9 source words (accepted: a length from 3 to 4"},
        {"4", "1 2", "--input and --len both name the example"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--len",
                                                bad[k].len, "--out", out,
                                                bad[k].input ? "--input" : NULL, bad[k].input,
                                                NULL});
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, bad[k].says), "%s", r.err);
    }
    snprintf(run, sizeof run, "%s/copy", base);
    cli_tiny_lstm_run(run, "2", "0.003");
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--len", "4",
                                            "--out", out, NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "no test set of sentences"), "%s", r.err);
    cli_remove(base);
}
END_TEST

/* --len N decodes the test sentence to its reference's length, as the evaluation does,
 * not to the longest target of a source of N words: in a file whose 4-word sources have
 * targets of 2 words but one of 7, the first test sentence's map has as many rows as its
 * reference has words. */
START_TEST(len_decodes_to_the_reference)
{
    char base[128], data[160], run[160], out[192], task[200], ck[200], buf[1 << 14];
    snprintf(base, sizeof base, "/tmp/attnlab-testreflen-%ld", (long)getpid());
    snprintf(data, sizeof data, "%s/pairs.tsv", base);
    snprintf(run, sizeof run, "%s/run", base);
    snprintf(out, sizeof out, "%s/maps", base);
    snprintf(task, sizeof task, "file:%s", data);
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    ck_assert_int_eq(mkdir(base, 0755), 0);
    FILE *f = fopen(data, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 80; i++) /* 80 different sources; only the first has 7 words out */
        fprintf(f, "s%d t%d u%d v%d\t%s\n", i % 5, i / 5 % 4, i / 20, i % 3,
                i == 0 ? "a b c d e f g" : (i % 2 ? "a b" : "c d"));
    ck_assert_int_eq(fclose(f), 0);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "rnn_attention", "--hidden",
                                            "8", "--embed", "4", "--attn", "6", "--task", task,
                                            "--steps", "2", "--samples", "8", "--out", run,
                                            "--quiet", NULL});
    ck_assert_msg(r.status == 0, "train: %s", r.err);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--len", "4",
                                            "--out", out, NULL});
    ck_assert_msg(r.status == 0, "attention --len 4: %s", r.err);
    const char *ref = strstr(r.err, "reference:");
    ck_assert_ptr_nonnull(ref);
    size_t words = 0;
    for (const char *c = ref + strlen("reference:"); *c && *c != '\n'; c++)
        words += c[0] == ' ' && c[1] != ' ' && c[1] != '\n' && c[1] != '\0';
    ck_assert_msg(words == 2, "the fixture's first test sentence must have a 2-word "
                  "reference (the longest is 7), not %zu: %s", words, r.err);
    char path[256];
    snprintf(path, sizeof path, "%s/alignment.tsv", out);
    cli_slurp(path, buf, sizeof buf);
    const size_t rows = cli_count_lines(buf);
    ck_assert_msg(rows == 1 + words, "alignment.tsv has %zu rows for a %zu-word reference:\n%s",
                  rows - 1, words, buf);
    cli_remove(base);
}
END_TEST

Suite *make_cmd_attention_suite(void)
{
    Suite *s = suite_create("cmd_attention");
    TCase *tc = tcase_create("untrained");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, untrained_is_where_training_started);
    suite_add_tcase(s, tc);
    tc = tcase_create("len");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, len_takes_a_test_sentence);
    tcase_add_test(tc, len_decodes_to_the_reference);
    suite_add_tcase(s, tc);
    return s;
}
