#!/bin/sh
# golden.sh — writes this machine's lines of tests/fixtures/golden-checkpoints.tsv, the
# CRC-32 of model.ckpt after a 60-step training run of every model and variant.
#
# When to run it. Only when a change is MEANT to alter the numerics (a different
# operation, order of summation, initialisation or training recipe), or to add the lines
# of a newly registered model or variant. A refactoring must leave every line as it is:
# then the golden test of `make check` passes and this script is not run. After running
# it, `git diff tests/fixtures/golden-checkpoints.tsv` shows exactly which runs changed;
# commit the fixture together with the change that explains it.
#
# What it does. Builds the program and the tests from this tree (the build is the
# reference), then runs the golden test case (tests/test_models.c) with
# ATTNLAB_GOLDEN_WRITE set, so that the test writes one line per run instead of
# comparing: blas_core, compiler, model, variant, crc32. The bits depend on the BLAS
# kernel (OpenBLAS picks one for the CPU at run time) and on the compiler, so the lines
# are keyed by both; the lines of other kernels and compilers are kept, this machine's
# are replaced. A machine with no line of its own is not checked (the test says so).
#
# usage: tests/golden.sh            (from anywhere; builds with make -j2)
set -eu
cd "$(dirname "$0")/.."
fixture=tests/fixtures/golden-checkpoints.tsv
make --no-print-directory -j2 build/attnlab build/attnlab-tests >/dev/null
new=$(mktemp)
trap 'rm -f "$new" "$new.all"' EXIT
CK_RUN_SUITE=models CK_RUN_CASE=golden ATTNLAB=build/attnlab \
    ATTNLAB_SRC=. ATTNLAB_GOLDEN_WRITE="$new" build/attnlab-tests
[ -s "$new" ] || { echo "golden.sh: the golden test wrote nothing" >&2; exit 1; }
{
    printf 'blas_core\tcompiler\tmodel\tvariant\tcrc32\n'
    # the other machines' lines (header dropped), then this machine's
    if [ -f "$fixture" ]; then
        awk -F'\t' 'NR == FNR { mine[$1 FS $2] = 1; next }
                    FNR > 1 && !(($1 FS $2) in mine)' "$new" "$fixture"
    fi
    cat "$new"
} >"$new.all"
mv "$new.all" "$fixture"
machine=$(cut -f1,2 "$new" | sort -u | tr '\t' ' ')
echo "golden.sh: wrote $(wc -l <"$new") lines for $machine to $fixture"
