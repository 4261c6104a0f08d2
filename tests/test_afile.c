/* test_afile.c — the files written whole or not at all of common/core/afile.c (suite:
 * afile).
 *
 * Design. A file is replaced by a temporary file renamed over it: a failed write leaves
 * the old file and no temporary one; the folders on the way are made when asked.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/core/afile.h"
#include "testutil.h"

START_TEST(afile_replaces_whole_or_not_at_all)
{
    char dir[] = "/tmp/attnlab-afile-XXXXXX", path[256], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.tsv", dir);
    afile a;
    ck_assert_int_eq(afile_open(&a, path, err, sizeof err), 0);
    fputs("first\n", a.f);
    ck_assert(access(path, F_OK) != 0); /* nothing at the path until commit */
    ck_assert_int_eq(afile_commit(&a, err, sizeof err), 0);
    ck_assert_int_eq(afile_open(&a, path, err, sizeof err), 0);
    fputs("second, abandoned half-way", a.f);
    afile_abort(&a);
    FILE *f = fopen(path, "r");
    char line[64] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "first\n"); /* the earlier file survives an abort */
    /* a path under a regular file cannot be opened, even by root */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/x.tsv", path);
    ck_assert_int_eq(afile_open(&a, bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot write"));
    ck_assert_int_eq(afile_mkdirs(path, err, sizeof err), -1);
    snprintf(bad, sizeof bad, "%s/a/b/c", dir);
    ck_assert_int_eq(afile_mkdirs(bad, err, sizeof err), 0);
    unlink(path);
    rmdir(bad);
    snprintf(bad, sizeof bad, "%s/a/b", dir);
    rmdir(bad);
    snprintf(bad, sizeof bad, "%s/a", dir);
    rmdir(bad);
    ck_assert_int_eq(rmdir(dir), 0); /* no temporary file left behind */
}
END_TEST

Suite *make_afile_suite(void)
{
    Suite *s = suite_create("afile");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, afile_replaces_whole_or_not_at_all);
    suite_add_tcase(s, tc);
    return s;
}
