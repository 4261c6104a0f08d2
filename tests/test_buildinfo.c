/* test_buildinfo.c — how the program finds itself, in common/cli/buildinfo.c (suite:
 * buildinfo).
 *
 * Design. Without /proc the path comes from argv[0]: as a path relative to the working
 * directory, or as a bare name searched along PATH, made absolute by realpath.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cli/buildinfo.h"
#include "testutil.h"

/* The program finds itself without /proc: from argv[0] as a path (relative to the
 * working directory) or as a bare name searched along PATH, made absolute by realpath. */
START_TEST(test_self_path_from_argv0)
{
    const char *prog = getenv("ATTNLAB");
    ck_assert_msg(prog && *prog, "ATTNLAB is not set");
    char want[4096], got[4096];
    ck_assert_ptr_nonnull(realpath(prog, want));
    ck_assert_int_eq(buildinfo_path_from_argv0(prog, got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    /* a bare name: found in the PATH entry that holds it, not in the others */
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s", want);
    *strrchr(dir, '/') = '\0';
    const char *base = strrchr(want, '/') + 1;
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    snprintf(path, sizeof path, "/nonexistent-dir::%s", dir);
    setenv("PATH", path, 1);
    ck_assert_int_eq(buildinfo_path_from_argv0(base, got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    setenv("PATH", "/nonexistent-dir", 1);
    ck_assert_int_eq(buildinfo_path_from_argv0(base, got, sizeof got), -1);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    /* nothing that does not exist, nothing that does not fit */
    ck_assert_int_eq(buildinfo_path_from_argv0("./no/such/program", got, sizeof got), -1);
    ck_assert_int_eq(buildinfo_path_from_argv0(prog, got, 4), -1);
    ck_assert_int_eq(buildinfo_path_from_argv0("", got, sizeof got), -1);
    /* and the whole lookup agrees with the fallback on this system */
    buildinfo_set_argv0(prog);
    ck_assert_int_eq(buildinfo_self_path(got, sizeof got), 0);
}
END_TEST

Suite *make_buildinfo_suite(void)
{
    Suite *s = suite_create("buildinfo");
    TCase *tc = tcase_create("buildinfo");
    tcase_add_test(tc, test_self_path_from_argv0);
    suite_add_tcase(s, tc);
    return s;
}
