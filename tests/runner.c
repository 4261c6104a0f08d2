/* runner.c — runs every Check suite of the project in one SRunner.
 *
 * The suites are found by the Makefile (build/tests/suites.h: one SUITE(...) line per
 * suite constructor make_NAME_suite in the test files), so adding a test file needs no
 * edit here. Cases tagged "slow" are skipped with CK_EXCLUDE_TAGS=slow (`make check-fast`).
 * Exit status: 0 only when every test passed. */
#include <check.h>
#include <stdlib.h>

#include "../common/cli/buildinfo.h"
#include "../common/core/model.h"

#define SUITE(fn) Suite *fn(void);
#include "suites.h"
#undef SUITE

int main(void)
{
    /* one BLAS thread, as the program runs: OpenBLAS would otherwise start one thread per
     * core, and spinning threads of two runs at once slow both down */
    buildinfo_set_threads(1);
    /* as the program does: a model's error report is kept, not an abort */
    model_catch_errors();
    SRunner *sr = srunner_create(NULL);
#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.h"
#undef SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
