#!/bin/sh
# build-page.sh — assembles the page: one HTML file holding its CSS, the WebAssembly
# module and every script, so that it opens from file:// with nothing fetched.
#
# usage: sh plots/web/build-page.sh CORE_JS SRC_DIR OUT_HTML
#
# SRC_DIR/page.html is copied line by line; a line "<!-- @inline NAME -->" is replaced by
# the file SRC_DIR/NAME, or by CORE_JS for the name CORE (emscripten's JavaScript with the
# WebAssembly inside it, -sSINGLE_FILE). The module and worker.js go into
# <script type="text/plain"> blocks, which the browser does not run: page.js makes a
# Blob URL of their text for its Workers. A file that would end its <script> or <style>
# block early ("</script", "</style" or "<!--" in it) is refused. The page is written to
# OUT_HTML.tmp and renamed, so an OUT_HTML that exists is whole.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: sh plots/web/build-page.sh CORE_JS SRC_DIR OUT_HTML" >&2
    exit 2
fi
core=$1 src=$2 out=$3
for f in "$core" "$src/worker.js" "$src/tar.js" "$src/page.js" "$src/page.css"; do
    if [ ! -f "$f" ]; then
        echo "build-page.sh: $f is missing" >&2
        exit 1
    fi
    if grep -qi '</script\|</style\|<!--' "$f"; then
        echo "build-page.sh: $f holds '</script', '</style' or '<!--', which would end its block in the page" >&2
        exit 1
    fi
done
tmp="$out.tmp"
: >"$tmp"
while IFS= read -r line || [ -n "$line" ]; do
    case $line in
    *'<!-- @inline '*' -->'*)
        name=${line#*@inline }
        name=${name%% -->*}
        if [ "$name" = CORE ]; then cat "$core" >>"$tmp"; else cat "$src/$name" >>"$tmp"; fi
        printf '\n' >>"$tmp"
        ;;
    *) printf '%s\n' "$line" >>"$tmp" ;;
    esac
done <"$src/page.html"
mv "$tmp" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
