/* test_fuzz.c — replays the fuzzers' seed corpus and every input that once made a fuzzer
 * fail (tests/fuzz/regressions/NAME/) through the same harness code, in every
 * `make check`: what was fixed stays fixed, also where clang's libFuzzer is absent.
 *
 * The harnesses are included whole, so their own pieces are tested here too: that the
 * checkpoint harness's repair turns a damaged file back into the one that was saved
 * (else its mutations would stop at the CRCs), that the argument harness gives each
 * command's status for hand-made lines, that the run-directory harness writes a
 * directory rundir_load reads, and that the output-directory harness plants what its
 * input says and runs the report's steps on it. */
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/core/checkpoint.h"
#include "../common/core/config.h"
#include "../common/core/model.h"
#include "../common/cli/rundir.h"
#include "testutil.h"

/* The five harnesses, each compiled here under its own name. */
#define LLVMFuzzerTestOneInput fuzz_checkpoint_input
#include "fuzz/fuzz_checkpoint.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_args_input
#include "fuzz/fuzz_args.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_tokens_input
#include "fuzz/fuzz_tokens.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_rundir_input
#include "fuzz/fuzz_rundir.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_outdir_input
#include "fuzz/fuzz_outdir.c"
#undef LLVMFuzzerTestOneInput

typedef int (*harness)(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    harness run;
} harnesses[] = {
    {"checkpoint", fuzz_checkpoint_input},
    {"args", fuzz_args_input},
    {"tokens", fuzz_tokens_input},
    {"rundir", fuzz_rundir_input},
    {"outdir", fuzz_outdir_input},
};

/* Feeds every file of dir to h; returns how many were fed. */
static size_t replay_dir(const char *dir, harness h)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        uint8_t buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        ck_assert_int_eq(h(buf, n), 0); /* a crash would end the test before this */
        count++;
    }
    closedir(d);
    return count;
}

START_TEST(replay_corpus_and_regressions)
{
    const char *src = getenv("ATTNLAB_SRC");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src && *src ? src : ".",
             harnesses[_i].name);
    size_t seeds = replay_dir(dir, harnesses[_i].run);
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", src && *src ? src : ".",
             harnesses[_i].name);
    replay_dir(dir, harnesses[_i].run);
    if (harnesses[_i].run != fuzz_checkpoint_input) /* its seeds are made at fuzz time */
        ck_assert_msg(seeds > 0, "no seed corpus for %s in %s", harnesses[_i].name, dir);
}
END_TEST

/* A few hand-made hostile inputs, so the harnesses are exercised even with empty dirs. */
START_TEST(hostile_inputs)
{
    static const char ckpt[] = "ATTNCKPT\x01\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f";
    ck_assert_int_eq(fuzz_checkpoint_input((const uint8_t *)ckpt, sizeof ckpt - 1), 0);
    ck_assert_int_eq(fuzz_checkpoint_input((const uint8_t *)"", 0), 0);
    static const char args[] = "t--steps\0" "99999999999999999999999999\0--train-len\0:\0--lr\0";
    ck_assert_int_eq(fuzz_args_input((const uint8_t *)args, sizeof args - 1), 0);
    static const char tok[] = "1\t2\t3\n\n4\t5\n999999999999999999999";
    ck_assert_int_eq(fuzz_tokens_input((const uint8_t *)tok, sizeof tok - 1), 0);
    static const char run[] = "\0key\tvalue\nmodel\tlstm\x1e\x1e\x1e\x1e\x1e\x1e\n\n";
    ck_assert_int_eq(fuzz_rundir_input((const uint8_t *)run, sizeof run - 1), 0);
    ck_assert_int_eq(fuzz_rundir_input((const uint8_t *)"\xff", 1), 0);
}
END_TEST

/* A small model saved as a checkpoint (with its training state when state is set);
 * returns the file's bytes (free them) and their count. */
static uint8_t *saved_checkpoint(int state, size_t *len)
{
    const model_ops *ops = model_registry[0];
    config c;
    config_defaults(&c);
    ops->defaults(&c);
    ops->gradcheck_sizes(&c);
    model *m = ops->alloc(&c);
    ck_assert_ptr_nonnull(m);
    for (size_t i = 0; i < m->params.size; i++)
        m->params.data[i] = 0.001 * (double)i;
    double *moments = calloc(2 * m->params.size, sizeof *moments);
    unsigned char rng_state[3][8] = {{1}, {2}, {3}};
    ckpt_train_state ts = {7, m->params.size, moments, moments + m->params.size,
                           {rng_state[0], rng_state[1], rng_state[2]}, {8, 8, 8}};
    char path[64], err[512] = "";
    snprintf(path, sizeof path, "/tmp/attnlab-fuzz-test-%ld.ckpt", (long)getpid());
    ck_assert_msg(ckpt_save(path, m, state ? &ts : NULL, err, sizeof err) == 0, "%s", err);
    m->ops->free(m);
    free(moments);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *b = malloc(1 << 20);
    *len = fread(b, 1, 1 << 20, f);
    fclose(f);
    unlink(path);
    ck_assert_uint_lt(*len, 1 << 20);
    return b;
}

/* The repair of the checkpoint harness, on a saved file whose length field and both CRCs
 * were overwritten: the full repair gives back the saved file byte for byte (so a
 * mutation behind the CRCs reaches the parser), the header-only repair mends the header
 * and keeps the rest, and the raw mode changes nothing. Checked with and without a
 * training state. */
START_TEST(checkpoint_repair_restores_the_saved_file)
{
    size_t n;
    uint8_t *saved = saved_checkpoint(_i, &n), *b = malloc(n);
    ck_assert_uint_gt(n, CKPT_HEADER_SIZE + CKPT_CRC_SIZE);
    for (unsigned mode = 0; mode < 16; mode++) {
        memcpy(b, saved, n);
        memset(b + CKPT_HEADER_CRC_AT, 0xA5, 4); /* the header CRC */
        memset(b + n - CKPT_CRC_SIZE, 0x5A, 4);  /* the file CRC */
        if (mode >= 2)
            memset(b + 16, 0x33, 8); /* the recorded length: rewritten only by the full repair */
        uint8_t *damaged = malloc(n);
        memcpy(damaged, b, n);
        fuzz_ckpt_repair(b, n, mode);
        if (mode == 0) {
            ck_assert_int_eq(memcmp(b, damaged, n), 0);
        } else if (mode == 1) {
            ck_assert_int_eq(memcmp(b, saved, n - CKPT_CRC_SIZE), 0);
            ck_assert_int_eq(memcmp(b + n - 4, damaged + n - 4, 4), 0);
        } else {
            ck_assert_msg(memcmp(b, saved, n) == 0, "mode %u did not restore the file", mode);
        }
        free(damaged);
    }
    /* through the harness: a damaged file whose last byte asks for the full repair loads */
    memcpy(b, saved, n);
    memset(b + 16, 0, 12);
    b[n - 1] = 0x02;
    ck_assert_int_eq(fuzz_checkpoint_input(b, n), 0);
    char err[512] = "";
    ckpt_train_state ts;
    model *m = ckpt_load(fuzz_ckpt_path, &ts, err, sizeof err);
    ck_assert_msg(m != NULL, "the repaired file was refused: %s", err);
    ck_assert_int_eq(ts.m != NULL, _i);
    m->ops->free(m);
    ckpt_train_state_free(&ts);
    free(b);
    free(saved);
}
END_TEST

/* Command lines of every command and the status the argument harness must report. */
static const struct {
    const char *text; /* first byte: the command; then the arguments, NUL-separated */
    size_t len;
    int status;
} arg_cases[] = {
#define ARG_CASE(s, status) {s, sizeof s - 1, status}
    ARG_CASE("t--model\0lstm\0--steps\0" "80", 0),
    ARG_CASE("t--steps\0" "0", 2),
    ARG_CASE("e--checkpoint\0m.ckpt\0--lengths\0" "4:64:4\0--seed\0" "3", 0),
    ARG_CASE("e--checkpoint\0m.ckpt\0--hidden\0" "8", 2),
    ARG_CASE("e--lengths\0" "4:8", 2),
    ARG_CASE("c--preset\0smoke\0--models\0lstm,transformer\0--seeds\0" "2", 0),
    ARG_CASE("c--models\0lstm,,nope", 2),
    ARG_CASE("c--preset\0huge", 2),
    ARG_CASE("c--out", 2),
    ARG_CASE("r--out\0x\0results/demo", 1),
    ARG_CASE("r.", 1),
    ARG_CASE("r--out\0/tmp", 2),
    ARG_CASE("r--bogus", 2),
    ARG_CASE("b--models\0transformer\0--lengths\0" "32,128\0--reps\0" "9", 0),
    ARG_CASE("b--lengths\0" "8:512:8\0--max-len\0" "64", 2),
    ARG_CASE("b--model\0lstm", 2),
    ARG_CASE("a--checkpoint\0m.ckpt\0--input\0" "3 1 4 1 5", 0),
    /* the symbols of --input are read with the model's task, after the checkpoint */
    ARG_CASE("a--checkpoint\0m.ckpt\0--input\0" "3 1 99", 0),
    ARG_CASE("a--input\0" "3 1 4", 2),
    ARG_CASE("a--checkpoint\0m.ckpt", 2),
    ARG_CASE("g--model\0rnn_attention\0--cell\0lstm\0--len\0" "5", 0),
    ARG_CASE("g--len\0" "99", 2),
    /* args.txt: a valid command ends at the missing checkpoint.ckpt (1) */
    ARG_CASE("f--model=lstm\n--steps=40\n--out=results/x\n", 1),
    ARG_CASE("f--steps=zero\n", 2),
    ARG_CASE("f--resume\nsomewhere\n", 1),
    ARG_CASE("f", 1),
#undef ARG_CASE
};

START_TEST(args_harness_statuses)
{
    unsigned statuses = 0;
    const int rc = fuzz_args_run((const uint8_t *)arg_cases[_i].text, arg_cases[_i].len,
                                 &statuses);
    ck_assert_msg(rc == arg_cases[_i].status, "'%s': status %d, expected %d",
                  arg_cases[_i].text, rc, arg_cases[_i].status);
    ck_assert_msg(statuses >> rc & 1u, "'%s': status %d is not one it may give",
                  arg_cases[_i].text, rc);
    /* and through the entry libFuzzer calls, which aborts on a status not promised */
    ck_assert_int_eq(fuzz_args_input((const uint8_t *)arg_cases[_i].text, arg_cases[_i].len),
                     0);
}
END_TEST

/* The run-directory harness writes the files it was given: a seed of a real run loads,
 * and the same seed with eval.tsv absent (bit 2 of the first byte) is refused, naming
 * the file. */
START_TEST(rundir_harness_writes_the_run)
{
    const char *src = getenv("ATTNLAB_SRC");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/rundir/smoke-lstm",
             src && *src ? src : ".");
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_int_eq(buf[0], 0);
    ck_assert_int_eq(fuzz_rundir_input(buf, n), 0);
    rundir r;
    char err[512] = "";
    ck_assert_msg(rundir_load(&r, fuzz_rundir_dir, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_gt(r.n_eval, 0);
    ck_assert_uint_gt(r.n_cost, 0);
    ck_assert_str_eq(r.cfg.model, "lstm");
    rundir_free(&r);
    buf[0] = 1u << 2;
    ck_assert_int_eq(fuzz_rundir_input(buf, n), 0);
    ck_assert_int_eq(rundir_load(&r, fuzz_rundir_dir, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "eval.tsv") != NULL, "message '%s' does not name eval.tsv", err);
}
END_TEST

START_TEST(outdir_harness_plants_and_reports)
{
    char path[700];
    struct stat st;
    /* trace/ a link to the outside directory: planted, refused, the outside intact */
    ck_assert_int_eq(fuzz_outdir_input((const uint8_t *)"\0\2", 2), 0);
    snprintf(path, sizeof path, "%s/trace", fuzz_outdir_out);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    /* trace/ a real folder: the report's copy of the run's trace is made in trace/lstm/ */
    ck_assert_int_eq(fuzz_outdir_input((const uint8_t *)"\0\1", 2), 0);
    snprintf(path, sizeof path, "%s/trace/lstm/enc.cell.tsv", fuzz_outdir_out);
    ck_assert_msg(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "no copy in %s", path);
    snprintf(path, sizeof path, "%s/figures/accuracy.png", fuzz_outdir_out);
    ck_assert_msg(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "no figure in %s", path);
}
END_TEST

Suite *make_fuzz_suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("replay");
    tcase_add_loop_test(tc, replay_corpus_and_regressions, 0,
                        (int)(sizeof harnesses / sizeof harnesses[0]));
    tcase_add_test(tc, hostile_inputs);
    tcase_add_loop_test(tc, checkpoint_repair_restores_the_saved_file, 0, 2);
    tcase_add_loop_test(tc, args_harness_statuses, 0,
                        (int)(sizeof arg_cases / sizeof arg_cases[0]));
    tcase_add_test(tc, rundir_harness_writes_the_run);
    tcase_add_test(tc, outdir_harness_plants_and_reports);
    suite_add_tcase(s, tc);
    return s;
}
