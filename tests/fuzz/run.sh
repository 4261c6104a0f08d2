#!/bin/sh
# run.sh — runs each libFuzzer harness for a bounded time (called by `make fuzz`).
# usage: run.sh PROGRAM BUILD_DIR SECONDS NAME...
# The checkpoint corpus starts from real checkpoints made here by PROGRAM, so the fuzzer
# begins with valid files and mutates them, instead of having to discover the format (the
# harness repairs their CRCs, so the mutations reach the parsers behind them).
set -eu
program=$1 build=$2 seconds=$3
shift 3
mkdir -p "$build/corpus"
seeds="$build/seed-run"
if [ ! -f "$build/corpus/checkpoint/seed-lstm.ckpt" ]; then
    mkdir -p "$build/corpus/checkpoint"
    for m in lstm rnn_attention transformer; do
        "$program" train --model "$m" --hidden 6 --embed 4 --attn 5 --d-model 8 --heads 2 \
            --d-ff 8 --layers 1 --symbols 5 --steps 2 --train-len 3 --samples 2 \
            --eval-lengths 3 --checkpoint-every 1 --out "$seeds/$m" --quiet >/dev/null 2>&1 || continue
        cp "$seeds/$m/model.ckpt" "$build/corpus/checkpoint/seed-$m.ckpt"
        [ -f "$seeds/$m/checkpoint.ckpt" ] &&
            cp "$seeds/$m/checkpoint.ckpt" "$build/corpus/checkpoint/seed-$m-state.ckpt"
    done
fi
status=0
for name in "$@"; do
    mkdir -p "$build/corpus/$name"
    echo "fuzzing $name for $seconds s"
    if ! "$build/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
            -malloc_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
            -artifact_prefix="$build/crash-$name-" \
            "$build/corpus/$name" "tests/fuzz/corpus/$name" 2>"$build/$name.log"; then
        echo "fuzz_$name found a failure: see $build/$name.log and $build/crash-$name-*" >&2
        status=1
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$name.log" | sed "s/^/  $name /"
    # the edges reached and the corpus kept, from libFuzzer's last status line
    grep -a -E "^#[0-9]+.* cov: " "$build/$name.log" | tail -n 1 | sed "s/^/  $name /"
done
exit $status
