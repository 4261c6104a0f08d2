/* test_fulldisk.c — a training run on a full disk: what the failure message names is on
 * disk and whole, and --resume either continues with a complete log or refuses.
 *
 * Design. The disk fills at several points, by RLIMIT_FSIZE in the child that runs the
 * program (ru_run, SIGXFSZ ignored: a write beyond the limit fails as ENOSPC would): below
 * the size of a checkpoint (no checkpoint can be written), at it, and at two sizes the
 * growing log outgrows only later in the run (the checkpoint fits, the log beside it does
 * not). The limits come from an unlimited run of the same command, so no size is written
 * into the test. After each failure the program runs again without a limit as --resume;
 * a resumed run's log must be the uninterrupted run's row for row (the timing columns
 * aside).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

/* A tiny model whose log (a row every step) outgrows its checkpoint before the end. */
#define FULL_ARGS "train", "--model", "lstm", "--hidden", "2", "--embed", "2", "--steps", \
    "300", "--checkpoint-every", "5", "--log-every", "1", "--train-len", "3:4", \
    "--eval-lengths", "3", "--samples", "2", "--quiet"

static long file_size(const char *dir, const char *name)
{
    char path[RU_PATH];
    struct stat st;
    ru_fmt(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A log line without its timing columns (2: seconds, 8: seq_per_s), into buf. */
static void untimed(const char *line, char *buf, size_t n)
{
    size_t k = 0, col = 1;
    for (const char *p = line; *p && *p != '\n' && k + 1 < n; p++) {
        if (col != 2 && col != 8)
            buf[k++] = *p;
        if (*p == '\t')
            col++;
    }
    buf[k] = '\0';
}

/* Whether the log text holds a row for step. */
static int has_row(const char *log, size_t step)
{
    char key[32];
    snprintf(key, sizeof key, "\n%zu\t", step);
    return strstr(log, key) != NULL;
}

/* Asserts that the logs a and b hold the same rows, timing aside. */
static void assert_same_rows(const char *a, const char *b)
{
    char la[512], lb[512];
    size_t row = 0;
    while (*a || *b) {
        untimed(a, la, sizeof la);
        untimed(b, lb, sizeof lb);
        ck_assert_msg(strcmp(la, lb) == 0, "row %zu differs:\n%s\n%s", row, la, lb);
        a += strcspn(a, "\n");
        b += strcspn(b, "\n");
        a += *a == '\n';
        b += *b == '\n';
        row++;
    }
}

START_TEST(a_full_disk_keeps_what_it_names_and_resume_continues)
{
    char ref[RU_PATH], dir[RU_PATH], path[RU_PATH], line[2048];
    ru_fresh_dir(ref, sizeof ref);
    ru_fresh_dir(dir, sizeof dir);
    ru_result r;
    ru_run(&r, (const char *const[]){FULL_ARGS, "--out", ref, "--force", NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "unlimited run: %s", r.err);
    free(r.out);
    free(r.err);
    const long C = file_size(ref, "checkpoint.ckpt"), F = file_size(ref, "train_log.tsv");
    ck_assert_msg(C > 0 && F > C, "the log (%ld bytes) must outgrow the checkpoint (%ld)", F,
                  C);
    const long limits[] = {C / 2, C, C + (F - C) / 3, C + 2 * (F - C) / 3};
    const rlim_t limit = (rlim_t)limits[_i];

    ru_run(&r, (const char *const[]){FULL_ARGS, "--out", dir, "--force", NULL}, NULL, limit);
    ck_assert_msg(r.status == 1, "limit %ld: status %d, %s", (long)limit, r.status, r.err);
    ck_assert_msg(!cli_has_temporary(dir), "a temporary file was left in %s", dir);
    /* the last line says what is kept: everything it names is there and whole */
    ru_line_with(r.err, "kept", line, sizeof line);
    char *log = NULL;
    ru_fmt(path, sizeof path, "%s/train_log.tsv", dir);
    if (strstr(line, "the log")) {
        log = ru_slurp(path, NULL);
        ck_assert_msg(log && strncmp(log, "step\tseconds", 12) == 0, "named but no log: %s",
                      line);
    }
    const char *ck = strstr(line, "checkpoint (");
    if (ck) {
        size_t step = 0;
        const char *at = strstr(ck, ", step ");
        ck_assert_msg(at && sscanf(at, ", step %zu", &step) == 1 && step > 0,
                      "the message names a checkpoint but not its step: %s", line);
        ru_fmt(path, sizeof path, "%s/checkpoint.ckpt", dir);
        run_out e;
        cli_run(&e, NULL, (const char *const[]){"eval", "--checkpoint", path, "--lengths",
                                                "3", "--samples", "2", NULL});
        ck_assert_msg(e.status == 0, "the checkpoint named does not load: %s", e.err);
        if (log)
            ck_assert_msg(has_row(log, step), "the log kept has no row for step %zu, the "
                          "checkpoint's: %s", step, line);
    }
    free(log);
    free(r.out);
    free(r.err);

    /* --resume: continues to the very log of the uninterrupted run, or refuses clearly */
    ru_run(&r, (const char *const[]){"train", "--resume", dir, "--quiet", NULL}, NULL, 0);
    if (r.status == 0) {
        char *a = NULL, *b = NULL;
        ru_fmt(path, sizeof path, "%s/train_log.tsv", ref);
        ck_assert((a = ru_slurp(path, NULL)) != NULL);
        ru_fmt(path, sizeof path, "%s/train_log.tsv", dir);
        ck_assert((b = ru_slurp(path, NULL)) != NULL);
        assert_same_rows(a, b);
        free(a);
        free(b);
    } else {
        ck_assert_msg(r.status == 1 && cli_count_lines(r.err) == 1,
                      "refusal of --resume: status %d, %s", r.status, r.err);
    }
    free(r.out);
    free(r.err);
    ru_remove_tree(ref);
    ru_remove_tree(dir);
}
END_TEST

/* Cuts the log of dir to its first `rows` rows (0: removes it). */
static void cut_log(const char *dir, size_t rows)
{
    char path[RU_PATH];
    ru_fmt(path, sizeof path, "%s/train_log.tsv", dir);
    if (rows == 0) {
        ck_assert_int_eq(unlink(path), 0);
        return;
    }
    size_t len = 0;
    char *text = ru_slurp(path, &len);
    ck_assert(text);
    char *p = text;
    for (size_t k = 0; k <= rows && *p; k++) /* the header, then the rows */
        p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
    ru_spit(path, text, (size_t)(p - text));
    free(text);
}

START_TEST(resume_refuses_a_log_short_of_the_checkpoint)
{
    char dir[RU_PATH], ckpt[RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    ru_result r;
    /* a run stopped by a full disk after some checkpoints: the checkpoint fits, the log
     * outgrows the limit (its size: that of the checkpoint of an unlimited run) */
    ru_run(&r, (const char *const[]){FULL_ARGS, "--out", dir, "--force", NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "%s", r.err);
    free(r.out);
    free(r.err);
    const long C = file_size(dir, "checkpoint.ckpt");
    ru_run(&r, (const char *const[]){FULL_ARGS, "--out", dir, "--force", NULL}, NULL,
           (rlim_t)C);
    ck_assert_msg(r.status == 1, "%s", r.err);
    free(r.out);
    free(r.err);
    ru_fmt(ckpt, sizeof ckpt, "%s/checkpoint.ckpt", dir);
    ck_assert_int_eq(access(ckpt, F_OK), 0);
    cut_log(dir, _i); /* missing, then the first row only */
    ru_run(&r, (const char *const[]){"train", "--resume", dir, "--quiet", NULL}, NULL, 0);
    ck_assert_msg(r.status == 1, "a short log was accepted: %s", r.err);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "train_log.tsv") && strstr(r.err, "--force"), "%s", r.err);
    free(r.out);
    free(r.err);
    ru_remove_tree(dir);
}
END_TEST

Suite *make_fulldisk_suite(void)
{
    Suite *s = suite_create("fulldisk");
    TCase *tc = tcase_create("train");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, a_full_disk_keeps_what_it_names_and_resume_continues, 0, 4);
    tcase_add_loop_test(tc, resume_refuses_a_log_short_of_the_checkpoint, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
