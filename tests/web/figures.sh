#!/bin/sh
# figures.sh — the figure scripts in gnuplot for WebAssembly against native gnuplot (make
# check-web): a smoke comparison made by the native program (and a small bench --layers
# beside it, for plots/layers.gp), then every plots/*.gp drawn
# from its files by both (tests/web/figures.js says what must match).
#
# usage: tests/web/figures.sh NODE GNUPLOT_JS NATIVE_ATTNLAB OUT_DIR
set -u
if [ $# -ne 4 ]; then
    echo "usage: tests/web/figures.sh NODE GNUPLOT_JS NATIVE_ATTNLAB OUT_DIR" >&2
    exit 2
fi
node=$1 gnuplot_js=$2 native=$3 out=$4
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "web: gnuplot not installed: skipping the comparison of the figures"
    exit 0
fi
rm -rf "$out"
mkdir -p "$out"
if ! "$native" compare --preset smoke --out "$out/smoke" >"$out/compare.txt" 2>&1; then
    tail -n 5 "$out/compare.txt" >&2
    echo "web: the smoke comparison failed ($out/compare.txt)" >&2
    exit 1
fi
# one layer of each kind at two small widths: the tables plots/layers.gp draws
if ! "$native" bench --layers --widths 8,16 --lengths 4,8,16 --reps 1 --out "$out/smoke" \
        >"$out/layers.txt" 2>&1; then
    tail -n 5 "$out/layers.txt" >&2
    echo "web: bench --layers failed ($out/layers.txt)" >&2
    exit 1
fi
"$node" "$(dirname "$0")/figures.js" "$gnuplot_js" "$out/smoke" "$out/svg"
