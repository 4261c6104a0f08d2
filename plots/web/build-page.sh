#!/bin/sh
# build-page.sh — assembles the page: one HTML file holding its CSS, the WebAssembly
# modules, every script and the figure scripts, so that it opens from file:// with
# nothing fetched.
#
# usage: sh plots/web/build-page.sh CORE_JS GNUPLOT_JS SRC_DIR OUT_HTML
#
# SRC_DIR/page.html is copied line by line; a line "<!-- @inline NAME -->" is replaced by
# the file SRC_DIR/NAME (NAME may climb to the figure scripts: ../curves.gp), by CORE_JS
# for the name CORE (emscripten's JavaScript with the WebAssembly inside it,
# -sSINGLE_FILE) or by GNUPLOT_JS for the name GNUPLOT (gnuplot, built the same way).
# The modules, worker.js, figworker.js, figures.js and the figure scripts go into
# <script type="text/plain"> blocks, which the browser does not run: page.js makes Blob
# URLs of their text for its Workers and hands the scripts' text to gnuplot. A file that
# would end its <script> or <style> block early ("</script", "</style" or "<!--" in it)
# is refused. The page is written to OUT_HTML.tmp and renamed, so an OUT_HTML that
# exists is whole.
set -eu
if [ $# -ne 4 ]; then
    echo "usage: sh plots/web/build-page.sh CORE_JS GNUPLOT_JS SRC_DIR OUT_HTML" >&2
    exit 2
fi
core=$1 gnuplot=$2 src=$3 out=$4
tmp="$out.tmp"
trap 'rm -f "$tmp"' EXIT
: >"$tmp"
while IFS= read -r line || [ -n "$line" ]; do
    case $line in
    *'<!-- @inline '*' -->'*)
        name=${line#*@inline }
        name=${name%% -->*}
        case $name in
        CORE) f=$core ;;
        GNUPLOT) f=$gnuplot ;;
        *) f=$src/$name ;;
        esac
        if [ ! -f "$f" ]; then
            echo "build-page.sh: $f is missing" >&2
            exit 1
        fi
        if grep -qi '</script\|</style\|<!--' "$f"; then
            echo "build-page.sh: $f holds '</script', '</style' or '<!--', which would end its block in the page" >&2
            exit 1
        fi
        cat "$f" >>"$tmp"
        printf '\n' >>"$tmp"
        ;;
    *) printf '%s\n' "$line" >>"$tmp" ;;
    esac
done <"$src/page.html"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out ($(wc -c <"$out") bytes)"
