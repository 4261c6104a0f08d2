/* test_fuzz.c — replays the fuzzers' seed corpus and every input that once made a fuzzer
 * fail (tests/fuzz/regressions/NAME/) through the same harness code, in every
 * `make check`: what was fixed stays fixed, also where clang's libFuzzer is absent. */
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The three harnesses, each compiled here under its own name. */
#define LLVMFuzzerTestOneInput fuzz_checkpoint_input
#include "fuzz/fuzz_checkpoint.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_args_input
#include "fuzz/fuzz_args.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_tokens_input
#include "fuzz/fuzz_tokens.c"
#undef LLVMFuzzerTestOneInput

typedef int (*harness)(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    harness run;
} harnesses[] = {
    {"checkpoint", fuzz_checkpoint_input},
    {"args", fuzz_args_input},
    {"tokens", fuzz_tokens_input},
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
    static const char args[] = "--steps\0" "99999999999999999999999999\0--train-len\0:\0--lr\0";
    ck_assert_int_eq(fuzz_args_input((const uint8_t *)args, sizeof args - 1), 0);
    static const char tok[] = "1\t2\t3\n\n4\t5\n999999999999999999999";
    ck_assert_int_eq(fuzz_tokens_input((const uint8_t *)tok, sizeof tok - 1), 0);
}
END_TEST

Suite *make_fuzz_suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("replay");
    tcase_add_loop_test(tc, replay_corpus_and_regressions, 0,
                        (int)(sizeof harnesses / sizeof harnesses[0]));
    tcase_add_test(tc, hostile_inputs);
    suite_add_tcase(s, tc);
    return s;
}
