#!/bin/sh
# build-gsl.sh — GSL for WebAssembly: a pinned source, checked by its sha256, built with
# emcc into a prefix of its own (static libgsl.a and libgslcblas.a, headers under include/).
#
# Usage: build-gsl.sh PREFIX VERSION DEB_VERSION SHA256_DEB SHA256_GNU CFLAGS
#   PREFIX       where the libraries and headers go (the Makefile: build/web/gsl)
#   VERSION      GSL's release (2.7.1): the GNU tarball is gsl-VERSION.tar.gz
#   DEB_VERSION  Debian's source package of that release (2.7.1+dfsg-5+deb12u1)
#   SHA256_DEB   sha256 of Debian's original tarball (gsl_2.7.1+dfsg.orig.tar.gz)
#   SHA256_GNU   sha256 of the GNU release tarball (gsl-2.7.1.tar.gz)
#   CFLAGS       emcc's flags for GSL (the Makefile: -O2 -ffp-contract=off, -msimd128)
# The pins live in the Makefile, next to the flags that use the result.
#
# Design. The build is cached: PREFIX/pin records what was built, and when it names the
# same pins and flags the script does nothing. A source tarball is taken from the first of
#   1. $GSL_TARBALL, a file the user downloaded;
#   2. gsl.src/ beside PREFIX, where an earlier run kept what it fetched;
#   3. Homebrew's download cache of the source (`brew fetch --build-from-source gsl`);
#   4. Debian's archive, through a private deb-src list made from the system's own apt
#      sources and used by apt-get with its own list, state and cache folders
#      (fetch-source.sh, shared with build-gnuplot.sh): the system's apt configuration
#      is only read, never written, and no archive's address is written here;
# and is accepted only when its sha256 is one of the two pinned. Neither Debian's tarball
# (which drops GSL's manual, doc/) nor the GNU one is patched: both hold the same library
# sources. The parts attnlab uses are built (see subdirs below), with GSL's own CBLAS.
set -eu

if [ $# -ne 6 ]; then
    echo "usage: build-gsl.sh PREFIX VERSION DEB_VERSION SHA256_DEB SHA256_GNU CFLAGS" >&2
    exit 2
fi
prefix=$1 version=$2 deb_version=$3 sha_deb=$4 sha_gnu=$5 cflags=$6
pin="gsl $version ($deb_version) $sha_deb $sha_gnu; CFLAGS $cflags"

if [ -f "$prefix/pin" ] && [ "$(cat "$prefix/pin")" = "$pin" ] &&
   [ -f "$prefix/lib/libgsl.a" ] && [ -f "$prefix/lib/libgslcblas.a" ]; then
    exit 0
fi

say() { echo "build-gsl: $*" >&2; }
die() { echo "build-gsl: $*" >&2; exit 1; }
. "$(dirname "$0")/fetch-source.sh" # sha256_of, fetch_debian

pinned() { # is file $1 one of the two pinned tarballs?
    [ -f "$1" ] || return 1
    s=$(sha256_of "$1")
    [ "$s" = "$sha_deb" ] || [ "$s" = "$sha_gnu" ]
}

srcdir="$(dirname "$prefix")/gsl.src"
mkdir -p "$srcdir"

deb_tar="$srcdir/gsl_${deb_version%-*}.orig.tar.gz"
gnu_tar="$srcdir/gsl-$version.tar.gz"
tarball=""
if [ -n "${GSL_TARBALL:-}" ]; then
    pinned "$GSL_TARBALL" || die "$GSL_TARBALL is not GSL $version (its sha256 is neither $sha_gnu, GNU's gsl-$version.tar.gz, nor $sha_deb, Debian's gsl_${deb_version%-*}.orig.tar.gz)"
    tarball=$GSL_TARBALL
fi
for t in "$deb_tar" "$gnu_tar"; do
    [ -z "$tarball" ] && pinned "$t" && tarball=$t
done
if [ -z "$tarball" ] && command -v brew >/dev/null 2>&1; then
    t=$(brew --cache --build-from-source gsl 2>/dev/null || true)
    [ -n "$t" ] && pinned "$t" && tarball=$t
fi
if [ -z "$tarball" ] && fetch_debian "$srcdir" gsl "$deb_version"; then
    pinned "$deb_tar" || die "Debian's gsl_${deb_version%-*}.orig.tar.gz does not have the pinned sha256 $sha_deb"
    tarball=$deb_tar
fi
if [ -z "$tarball" ]; then
    die "no source of GSL $version: download gsl-$version.tar.gz from a GNU mirror (gnu/gsl/) or run \`brew fetch --build-from-source gsl\`, then run make web again (with GSL_TARBALL=/path/to/gsl-$version.tar.gz for a file elsewhere)"
fi
say "building GSL $version for WebAssembly from $tarball"

# Emscripten 3.1.6 loads its output with fetch() under node 18 and later, which cannot
# read a file: configure's test programs need node's fetch turned off. Its optimiser
# needs acorn, which Debian ships in /usr/share/nodejs, a folder only Debian's own node
# searches.
NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--no-experimental-fetch"
[ -d /usr/share/nodejs ] && NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"
export NODE_OPTIONS NODE_PATH
work="$prefix.build"
rm -rf "$work" "$prefix"
mkdir -p "$work" "$prefix"
tar -xzf "$tarball" -C "$work" --strip-components=1
abs_prefix=$(cd "$prefix" && pwd)
jobs=${GSL_JOBS:-2}
# Only the parts of GSL that attnlab calls, and what they call: matrices, vectors and
# their blocks, the BLAS wrappers and the CBLAS, the generators and the Gaussian. A
# static link takes nothing else, and the rest of GSL (some fifty more folders) would
# take most of the time. configure runs at -O0, where emcc links its test programs without
# its optimisers; the library is compiled with CFLAGS.
subdirs="gsl utils sys err complex block vector matrix permutation ieee-utils cblas blas rng randist"
(
    cd "$work"
    emconfigure ./configure --prefix="$abs_prefix" --disable-shared --enable-static \
        CFLAGS=-O0 >configure.log 2>&1 ||
        { tail -n 30 configure.log >&2; exit 1; }
    for d in $subdirs; do
        emmake make -C "$d" -j"$jobs" CFLAGS="$cflags" >>make.log 2>&1 ||
            { tail -n 30 make.log >&2; exit 1; }
    done
)
mkdir -p "$prefix/lib" "$prefix/include/gsl"
cp -L "$work"/gsl/gsl_*.h "$prefix/include/gsl/"
cp "$work/cblas/.libs/libgslcblas.a" "$prefix/lib/"
for d in $subdirs; do
    case $d in gsl | cblas) continue ;; esac
    emar qc "$prefix/lib/libgsl.a" "$work/$d"/*.o
done
emranlib "$prefix/lib/libgsl.a"
rm -rf "$work"
echo "$pin" > "$prefix/pin"
say "done: $prefix"
