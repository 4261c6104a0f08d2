#!/bin/sh
# build-gnuplot.sh — gnuplot for WebAssembly: a pinned source, checked by its sha256, built
# with emcc into one JavaScript file (the wasm inside) that a page runs in a Web Worker.
#
# Usage: build-gnuplot.sh OUT VERSION DEB_VERSION SHA256_DEB SHA256_UPSTREAM
#   OUT              the module to write (the Makefile: build/web/gnuplot.js); its folder
#                    keeps the cache (gnuplot/pin) and the download (gnuplot.src/)
#   VERSION          gnuplot's release (5.4.4): upstream's tarball is gnuplot-VERSION.tar.gz
#   DEB_VERSION      Debian's source package of it (5.4.4+dfsg1-2)
#   SHA256_DEB       sha256 of Debian's original tarball (gnuplot_5.4.4+dfsg1.orig.tar.xz)
#   SHA256_UPSTREAM  sha256 of upstream's tarball, or "-" when none is pinned
# The pins live in the Makefile, next to GSL's.
#
# Design. As build-gsl.sh (the shared part is fetch-source.sh): the build is cached, its
# pins recorded in gnuplot/pin beside OUT; a source tarball is taken from the first of
# $GNUPLOT_TARBALL, gnuplot.src/ beside OUT (an earlier download), Homebrew's download
# cache (`brew fetch --build-from-source gnuplot`), Debian's archive through a private
# deb-src list; and it is accepted only when its sha256 is pinned. It is configured
# with everything a browser has no use for off (readline, X, cairo, Qt, wxWidgets, Lua,
# gd, libcerf): the terminals left that write files are svg and canvas (no png, which
# needs gd or cairo). Debian's tarball lacks src/beos/ (dropped as not free of doubt),
# which configure still names: an empty Makefile.in stands for it. Linked as a module
# (-sMODULARIZE, AttnGnuplot) whose main is called by the page (callMain), with its file
# system (FS) exported, for web, workers and node.
set -eu

if [ $# -ne 5 ]; then
    echo "usage: build-gnuplot.sh OUT VERSION DEB_VERSION SHA256_DEB SHA256_UPSTREAM" >&2
    exit 2
fi
out=$1 version=$2 deb_version=$3 sha_deb=$4 sha_up=$5
say() { echo "build-gnuplot: $*" >&2; }
die() { echo "build-gnuplot: $*" >&2; exit 1; }
. "$(dirname "$0")/fetch-source.sh"

# what the module is linked with: a change rebuilds it
link="-O2 -sMODULARIZE=1 -sEXPORT_NAME=AttnGnuplot -sSINGLE_FILE=1 -sINVOKE_RUN=0"
link="$link -sEXIT_RUNTIME=0 -sFORCE_FILESYSTEM=1 -sALLOW_MEMORY_GROWTH=1"
link="$link -sENVIRONMENT=web,worker,node -sEXPORTED_RUNTIME_METHODS=FS,callMain"
webdir=$(dirname "$out")
cache="$webdir/gnuplot"
pin="gnuplot $version ($deb_version) $sha_deb $sha_up; LINK $link"
if [ -f "$cache/pin" ] && [ "$(cat "$cache/pin")" = "$pin" ] && [ -f "$out" ]; then
    exit 0
fi

pinned() { # is file $1 one of the pinned tarballs?
    [ -f "$1" ] || return 1
    s=$(sha256_of "$1")
    [ "$s" = "$sha_deb" ] || { [ "$sha_up" != "-" ] && [ "$s" = "$sha_up" ]; }
}

srcdir="$webdir/gnuplot.src"
mkdir -p "$srcdir"
deb_tar="$srcdir/gnuplot_${deb_version%-*}.orig.tar.xz"
up_tar="$srcdir/gnuplot-$version.tar.gz"
tarball=""
if [ -n "${GNUPLOT_TARBALL:-}" ]; then
    pinned "$GNUPLOT_TARBALL" || die "$GNUPLOT_TARBALL is not a pinned gnuplot $version (its sha256 is not $sha_deb, Debian's gnuplot_${deb_version%-*}.orig.tar.xz, nor the pinned upstream one, $sha_up)"
    tarball=$GNUPLOT_TARBALL
fi
for t in "$deb_tar" "$up_tar"; do
    [ -z "$tarball" ] && pinned "$t" && tarball=$t
done
if [ -z "$tarball" ] && command -v brew >/dev/null 2>&1; then
    t=$(brew --cache --build-from-source gnuplot 2>/dev/null || true)
    [ -n "$t" ] && pinned "$t" && tarball=$t
fi
if [ -z "$tarball" ] && fetch_debian "$srcdir" gnuplot "$deb_version"; then
    pinned "$deb_tar" || die "Debian's gnuplot_${deb_version%-*}.orig.tar.xz does not have the pinned sha256 $sha_deb"
    tarball=$deb_tar
fi
[ -n "$tarball" ] || die "no source of gnuplot $version: on Debian or Ubuntu with deb sources the script fetches it; elsewhere download Debian's gnuplot_${deb_version%-*}.orig.tar.xz and run make web-gnuplot GNUPLOT_TARBALL=/path/to/it"
say "building gnuplot $version for WebAssembly from $tarball"

# emscripten 3.1.6 under node 18 or later (as build-gsl.sh says)
NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--no-experimental-fetch"
[ -d /usr/share/nodejs ] && NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"
export NODE_OPTIONS NODE_PATH
work="$cache.build"
rm -rf "$work" "$cache"
mkdir -p "$work" "$cache"
case $tarball in
    *.xz) xz -dc "$tarball" | tar -xf - -C "$work" --strip-components=1 ;;
    *) tar -xzf "$tarball" -C "$work" --strip-components=1 ;;
esac
[ -f "$work/src/beos/Makefile.in" ] || {
    mkdir -p "$work/src/beos"
    printf 'all:\ninstall:\nuninstall:\nclean:\ndistclean:\ncheck:\n' > "$work/src/beos/Makefile.in"
}
jobs=${GNUPLOT_JOBS:-2}
(
    cd "$work"
    emconfigure ./configure --disable-shared --without-readline --without-x \
        --without-cairo --with-qt=no --disable-wxwidgets --without-lua --without-gd \
        --without-libcerf --disable-plugins CFLAGS=-O2 >configure.log 2>&1 ||
        { tail -n 30 configure.log >&2; exit 1; }
    emmake make -C src -j"$jobs" gnuplot >make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
    # shellcheck disable=SC2086 # $link is a list of flags
    emcc $link -o gnuplot.js src/*.o -lm >>make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
)
cp "$work/gnuplot.js" "$out"
rm -rf "$work"
echo "$pin" > "$cache/pin"
say "done: $out"
