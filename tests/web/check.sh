#!/bin/sh
# check.sh — the checks of the WebAssembly build (make check-web): every model's gradient
# check under node, then short trainings whose checkpoints must be, byte for byte, those
# that the native build on the same CBLAS (GSL's gslcblas) writes for the same command.
#
# usage: tests/web/check.sh "NODE WEB_CHECK_JS" NATIVE_ATTNLAB OUT_DIR ["NODE PAGE_JS CORE_JS"]
#
# web_check (common/web/web_check.c) trains every model and variant and lists in
# OUT_DIR/wasm/runs.tsv each run's name and its attnlab flags; each is run again here
# with the native program and both checkpoints (last.ckpt: the weights after the last
# step; model.ckpt: those of the best validation) are compared with cmp. A difference is
# reported with cmp's first differing byte and the tensor it falls in
# (tests/web/ckptdiff.py when python3 is there), and fails the check. With a fourth
# argument, the runs that tests/web/page.js trains through the page's entry point
# (build/web/attnlab_core.js, in chunks, as the page does) are compared the same way,
# with their eval.tsv and train_log.tsv (but for its seconds). The closing line
# counts the checks: "web: N passed, N failed".
set -u
if [ $# -ne 3 ] && [ $# -ne 4 ]; then
    echo "usage: tests/web/check.sh \"NODE WEB_CHECK_JS\" NATIVE_ATTNLAB OUT_DIR [\"NODE PAGE_JS CORE_JS\"]" >&2
    exit 2
fi
run_wasm=$1 native=$2 out=$3 run_page=${4:-}
passed=0 failed=0
rm -rf "$out"
mkdir -p "$out/wasm" "$out/native"

# 1. the gradient checks, in WebAssembly
# shellcheck disable=SC2086 # "node file.js" is meant to split
if $run_wasm gradcheck >"$out/gradcheck.txt" 2>&1; then
    passed=$((passed + 1))
    echo "web: $(tail -n 1 "$out/gradcheck.txt") (WebAssembly)"
else
    failed=$((failed + 1))
    grep -B1 -A0 'FAIL\|max relative' "$out/gradcheck.txt" >&2
    echo "web: the gradient checks failed in WebAssembly ($out/gradcheck.txt)" >&2
fi

# 2. the same trainings, in WebAssembly and natively
# shellcheck disable=SC2086
if ! $run_wasm train "$out/wasm" >"$out/train.txt" 2>&1; then
    cat "$out/train.txt" >&2
    echo "web: the WebAssembly trainings failed" >&2
    failed=$((failed + 1))
else
    tab=$(printf '\t')
    while IFS=$tab read -r name flags; do
        # shellcheck disable=SC2086 # flags are words
        if ! "$native" train --quiet --eval-lengths 4 --samples 1 --out "$out/native/$name" \
            $flags >"$out/native-$name.txt" 2>&1; then
            cat "$out/native-$name.txt" >&2
            echo "web: $name: the native training failed" >&2
            failed=$((failed + 1))
            continue
        fi
        for f in last.ckpt model.ckpt; do
            if cmp "$out/wasm/$name/$f" "$out/native/$name/$f" >"$out/cmp.txt" 2>&1; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "web: $name/$f differs from the native build's ($(cat "$out/cmp.txt"))" >&2
                if command -v python3 >/dev/null 2>&1; then
                    python3 "$(dirname "$0")/ckptdiff.py" "$out/wasm/$name/$f" \
                        "$out/native/$name/$f" >&2
                fi
            fi
        done
    done <"$out/wasm/runs.tsv"
fi
# 3. the page's entry point (common/web/web_page.c, as the page's Worker drives it, in
# chunks): the same comparison for each run of tests/web/page.js, its flags from the
# run's args.txt
if [ -n "$run_page" ]; then
    # shellcheck disable=SC2086
    if ! $run_page train "$out/page" >"$out/page.txt" 2>&1; then
        cat "$out/page.txt" >&2
        echo "web: the trainings through the page's entry point failed" >&2
        failed=$((failed + 1))
    else
        tab=$(printf '\t')
        while IFS=$tab read -r name flags; do
            # shellcheck disable=SC2086 # flags are words
            if ! "$native" train --quiet --out "$out/page-native/$name" $flags \
                >"$out/page-native-$name.txt" 2>&1; then
                cat "$out/page-native-$name.txt" >&2
                echo "web: page $name: the native training failed" >&2
                failed=$((failed + 1))
                continue
            fi
            for f in last.ckpt model.ckpt; do
                if cmp "$out/page/$name/$f" "$out/page-native/$name/$f" >"$out/cmp.txt" 2>&1; then
                    passed=$((passed + 1))
                else
                    failed=$((failed + 1))
                    echo "web: page $name/$f differs from the native build's ($(cat "$out/cmp.txt"))" >&2
                fi
            done
            # the evaluation of the same weights: the same table, to the last digit
            if cmp "$out/page/$name/eval.tsv" "$out/page-native/$name/eval.tsv" >"$out/cmp.txt" 2>&1; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "web: page $name/eval.tsv differs from the native build's" >&2
            fi
            # the log without its clock (seconds, seq_per_s): the same losses, and the same
            # validations, so the same step reaches a target or is the best
            for d in page page-native; do
                cut -f 1,3-7,9- "$out/$d/$name/train_log.tsv" >"$out/$d/$name/log.cut"
            done
            if cmp "$out/page/$name/log.cut" "$out/page-native/$name/log.cut" >"$out/cmp.txt" 2>&1; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "web: page $name/train_log.tsv differs from the native build's ($(cat "$out/cmp.txt"))" >&2
            fi
        done <"$out/page/runs.tsv"
        echo "web: $(grep -c . "$out/page/runs.tsv") runs through the page's entry point compared"
    fi
fi
echo "web: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
