#!/bin/sh
# screenshot.sh — a report page as a reader sees it: renders it with headless Chromium to
# a PNG, so that one can look at the figures inside the page (are the heat-map cells
# sharp squares? do the captions and the tables fit?) without a desktop.
#
# Usage: tests/screenshot.sh PAGE [OUT.png [WIDTH [HEIGHT [SCALE]]]]
#   PAGE     a page attnlab report wrote (report.html, or report.zh.html with --lang zh)
#   OUT.png  where the screenshot goes (default: PAGE with .png instead of .html)
#   WIDTH    the window's width in CSS pixels (default 1600: wide enough for most figures
#            at their own size; in a narrower window every figure shrinks to fit)
#   HEIGHT   the window's height (default 7000, enough for the top of a long page; the
#            screenshot is the window, not the whole page)
#   SCALE    device pixels per CSS pixel (default 1; 2 shows what a high-density screen
#            does to the images: pixelated heat maps stay sharp, each cell twice as big)
# The Chromium program is $CHROMIUM, else the first of chromium, chromium-browser,
# google-chrome on the PATH (Debian: apt-get install chromium).
#
# Exit status: 0 the PNG is written; 2 a usage error; 3 no Chromium was found (a test
# that uses this script skips then: CI does not install it); 1 Chromium failed.
#
# Example, after `make demo`:
#     tests/screenshot.sh results/demo/report.html /tmp/report.png
#     tests/screenshot.sh results/demo/report.zh.html /tmp/report-zh.png 1600 3000 2
set -u

usage() {
    echo "screenshot.sh: $1" >&2
    echo "usage: tests/screenshot.sh PAGE [OUT.png [WIDTH [HEIGHT [SCALE]]]]" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 5 ] || usage "one page, then at most OUT.png WIDTH HEIGHT SCALE"
page=$1
[ -f "$page" ] || usage "no page $page (a report.html or report.zh.html)"
out=${2:-${page%.html}.png}
width=${3:-1600}
height=${4:-7000}
scale=${5:-1}
case $width in ''|*[!0-9]*) usage "WIDTH '$width' is not a number of pixels" ;; esac
case $height in ''|*[!0-9]*) usage "HEIGHT '$height' is not a number of pixels" ;; esac
case $scale in 1|2|3) ;; *) usage "SCALE '$scale' is not 1, 2 or 3" ;; esac

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" > /dev/null 2>&1; then browser=$b; break; fi
    done
fi
if [ -z "$browser" ] || ! command -v "$browser" > /dev/null 2>&1; then
    echo "screenshot.sh: no Chromium found (set CHROMIUM, or: apt-get install chromium)" >&2
    exit 3
fi

# Chromium wants a URL and an absolute path for the screenshot; its profile goes to a
# folder of its own, removed afterwards, so nothing of the user's is read or changed.
case $page in /*) abs=$page ;; *) abs=$(pwd)/$page ;; esac
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
profile=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-chromium-XXXXXX") || exit 1
trap 'rm -rf "$profile"' EXIT
rm -f "$out"
# --no-sandbox: Chromium refuses to start as root (containers, CI) without it; the page
# is a local file of our own.
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --no-first-run \
    --user-data-dir="$profile" --force-device-scale-factor="$scale" \
    --window-size="$width,$height" --screenshot="$out" "file://$abs" > "$profile/log" 2>&1
if [ ! -s "$out" ]; then
    echo "screenshot.sh: $browser wrote no $out; what it said:" >&2
    tail -n 5 "$profile/log" >&2
    exit 1
fi
echo "screenshot.sh: wrote $out ($width x $height CSS pixels, scale $scale)"
