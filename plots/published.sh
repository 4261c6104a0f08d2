#!/bin/sh
# published.sh — makes again, with one build's `attnlab report`, the tables and figures
# published in docs/figures/NAME/ from the runs committed beside them (NAME/runs/, the
# compare's NAME/manifest.tsv), so that every one of them comes from a single commit.
#
# usage: sh plots/published.sh ATTNLAB [DIR...]
#   ATTNLAB  the program to merge with (make published passes build/attnlab)
#   DIR      experiment folders (default: every docs/figures/*/ that holds runs/, or
#            subfolders that do)
#
# An experiment is one comparison (DIR/runs/, DIR/manifest.tsv) or several merged by one
# report (DIR/SUB/runs/ and DIR/SUB/manifest.tsv for each SUB, taken in name order, as
# docs/figures/bahdanau/ merges the comparisons trained up to 30 and up to 50 words).
# For each folder: `attnlab report --out TMP DIR` (or DIR/SUB1 DIR/SUB2 ...), then into DIR
#   - every table the report wrote that has a row below its header (manifest.tsv, the
#     compare's own, stays; the report's goes in as report-manifest.tsv, with its commit);
#   - every figure DIR already publishes (DIR/NAME.png from TMP/figures/NAME.png): which
#     figures an experiment shows is chosen once, by copying them in by hand.
# Each file goes in under a temporary name and is then renamed over the old one, so an
# interrupted run leaves every file whole. A folder whose report fails is left as it was;
# the script goes on with the others and exits 1 at the end.
set -u

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: sh plots/published.sh ATTNLAB [DIR...] (ATTNLAB: the attnlab program, e.g. build/attnlab)" >&2
    exit 2
fi
attnlab=$1
shift

# the comparisons merged in DIR, one per line: DIR itself if it holds runs/, else each
# DIR/SUB that does (none: nothing printed)
inputs() {
    if [ -d "$1/runs" ]; then
        printf '%s\n' "$1"
        return
    fi
    for sub in "$1"/*/; do
        [ -d "${sub}runs" ] && printf '%s\n' "${sub%/}"
    done
}
if [ $# -eq 0 ]; then
    for d in docs/figures/*/; do
        [ -n "$(inputs "${d%/}")" ] && set -- "$@" "${d%/}"
    done
fi
if [ $# -eq 0 ]; then
    echo "published.sh: no experiment folder with runs/ under docs/figures (run it from the top of the tree)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-published-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# put SRC into DIR as NAME: a copy under a temporary name (whatever stood there, a link
# too, removed first, so nothing is written through it), then a rename
put() {
    rm -f "$2/.$3.new" && cp "$1" "$2/.$3.new" && mv -f "$2/.$3.new" "$2/$3"
}

status=0
for dir in "$@"; do
    dir=${dir%/}
    list=$(inputs "$dir")
    if [ -z "$list" ]; then
        echo "published.sh: $dir has no runs/ folder, nor subfolders with one: not an experiment of docs/figures" >&2
        status=1
        continue
    fi
    out="$tmp/$(basename "$dir")"
    # one path per line: split on newlines alone and without globbing, so a path with
    # spaces or wildcards in it survives
    old_ifs=$IFS
    IFS='
'
    set -f
    # shellcheck disable=SC2086
    set -- $list
    set +f
    IFS=$old_ifs
    if ! "$attnlab" report --out "$out" "$@" > "$tmp/report.log" 2>&1; then
        echo "published.sh: attnlab report failed on $dir (left as it was):" >&2
        tail -n 3 "$tmp/report.log" >&2
        status=1
        continue
    fi
    tables=0 figures=0
    for t in "$out"/*.tsv; do
        name=$(basename "$t")
        lines=$(($(wc -l < "$t"))) # arithmetic drops the blanks BSD wc puts before it
        [ "$lines" -gt 1 ] || continue
        case $name in
        manifest.tsv) put "$t" "$dir" report-manifest.tsv || status=1 ;;
        *) put "$t" "$dir" "$name" || status=1 ;;
        esac
        tables=$((tables + 1))
    done
    for f in "$dir"/*.png; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        if [ -f "$out/figures/$name" ]; then
            put "$out/figures/$name" "$dir" "$name" || status=1
            figures=$((figures + 1))
        else
            echo "published.sh: $dir publishes $name, which the report no longer draws (kept as it was)" >&2
            status=1
        fi
    done
    echo "$dir: $tables tables, $figures figures made again"
done
exit $status
