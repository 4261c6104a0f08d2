#!/bin/sh
# golden.sh — writes tests/fixtures/golden-checkpoints.tsv: the CRC-32 of model.ckpt after
# a 60-step training run of every model and variant, for each BLAS kernel named.
#
# When to run it. Only when a change is MEANT to alter the numerics (a different
# operation, order of summation, initialisation or training recipe), or to add the lines
# of a newly registered model or variant. A refactoring must leave every line as it is:
# then the golden test of `make check` passes and this script is not run. After running
# it, `git diff tests/fixtures/golden-checkpoints.tsv` shows exactly which runs changed;
# commit the fixture together with the change that explains it.
#
# What it does. Builds the program and the tests from this tree (the build is the
# reference), then, for each kernel, runs the golden test case (tests/test_models.c) with
# OPENBLAS_CORETYPE set to it and ATTNLAB_GOLDEN_WRITE set, so that the test writes one
# line per run (kernel, model, variant, crc32) instead of comparing. The bits depend on
# the BLAS kernel, not on the compiler (docs/reliability.md), so lines are keyed by
# kernel; the test forces the kernels of the fixture in turn, so that any machine that
# can run one of them is checked. A kernel this machine cannot run is skipped (OpenBLAS
# then falls back to another, which the build facts show).
#
# The kernel name gsl stands for the program built on GSL's CBLAS (make BLAS=gsl, in
# build/gslblas: the browser page's CBLAS, with the project's own cblas_dgemm), whose
# runs the test case golden_gsl makes; its lines pin GSL's order of operations.
#
# usage: tests/golden.sh [KERNEL ...]    (default: Haswell SkylakeX Sandybridge gsl)
set -eu
cd "$(dirname "$0")/.."
fixture=tests/fixtures/golden-checkpoints.tsv
[ $# -gt 0 ] || set -- Haswell SkylakeX Sandybridge gsl
make --no-print-directory -j2 build/attnlab build/attnlab-tests >/dev/null
make --no-print-directory -j2 BLAS=gsl BUILD=build/gslblas build/gslblas/attnlab >/dev/null
all=$(mktemp)
new=$(mktemp)
trap 'rm -f "$all" "$new"' EXIT
printf 'blas_core\tmodel\tvariant\tcrc32\n' >"$all"
for kernel in "$@"; do
    : >"$new"
    if [ "$kernel" = gsl ]; then
        CK_RUN_SUITE=models CK_RUN_CASE=golden_gsl ATTNLAB=build/attnlab \
            ATTNLAB_GSL=build/gslblas/attnlab ATTNLAB_SRC=. ATTNLAB_GOLDEN_WRITE="$new" \
            build/attnlab-tests >/dev/null
    else
        OPENBLAS_CORETYPE=$kernel CK_RUN_SUITE=models CK_RUN_CASE=golden ATTNLAB=build/attnlab \
            ATTNLAB_SRC=. ATTNLAB_GOLDEN_WRITE="$new" build/attnlab-tests >/dev/null
    fi
    if [ ! -s "$new" ] || [ "$(cut -f1 "$new" | sort -u)" != "$kernel" ]; then
        echo "golden.sh: this machine does not run kernel $kernel; skipped" >&2
        continue
    fi
    cat "$new" >>"$all"
    echo "golden.sh: $(wc -l <"$new") lines for kernel $kernel" >&2
done
mv "$all" "$fixture"
trap - EXIT
rm -f "$new"
