/* test_cmd_attention.c — attnlab attention --untrained: the model as training found it.
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

Suite *make_cmd_attention_suite(void)
{
    Suite *s = suite_create("cmd_attention");
    TCase *tc = tcase_create("untrained");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, untrained_is_where_training_started);
    suite_add_tcase(s, tc);
    return s;
}
