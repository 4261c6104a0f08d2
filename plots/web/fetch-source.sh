#!/bin/sh
# fetch-source.sh — what build-gsl.sh and build-gnuplot.sh share: checking a tarball
# against its pinned sha256 and fetching a source package from Debian's archive.
#
# Sourced, not run (. plots/web/fetch-source.sh), after the caller has defined
# say() and die(). It defines:
#   sha256_of FILE                    prints the file's sha256
#   fetch_debian SRCDIR PACKAGE VER   downloads Debian's source package PACKAGE=VER into
#                                     SRCDIR (its .dsc, original tarball and Debian part)
#
# Design. Debian's archive is reached through the system's own apt sources, never a
# written address: fetch_debian makes a private deb-src copy of each deb entry of
# /etc/apt/sources.list.d/*.sources and /etc/apt/sources.list(.d/*.list) in
# SRCDIR/apt/, and runs apt-get with its own list, state and cache folders there; the
# system's apt configuration is only read, never written, and no root is needed.

sha256_of() { # prints the sha256 of file $1 (GNU coreutils, or macOS's shasum)
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    else
        shasum -a 256 "$1" | cut -d ' ' -f 1
    fi
}

fetch_debian() { # $1 SRCDIR, $2 source package, $3 its Debian version
    command -v apt-get >/dev/null 2>&1 || return 1
    fd_dir=$1
    apt="$fd_dir/apt"
    rm -rf "$apt"
    mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
    : > "$apt/sources.list"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822: every stanza of Types deb becomes Types deb-src, the rest unchanged
        sed -n 's/^Types:.*\bdeb\b.*/Types: deb-src/; p' "$f" > "$apt/sources.list.d/${f##*/}"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # one-line form: "deb [opts] URI suite comps" becomes "deb-src [opts] URI suite comps"
        sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >> "$apt/sources.list"
    done
    abs=$(cd "$apt" && pwd)
    o="-o Dir::Etc::SourceList=$abs/sources.list -o Dir::Etc::SourceParts=$abs/sources.list.d"
    o="$o -o Dir::State::Lists=$abs/lists -o Dir::Cache=$abs/cache"
    o="$o -o Debug::NoLocking=1 -o APT::Sandbox::User=$(id -un)"
    say "fetching Debian's source package $2 $3"
    # shellcheck disable=SC2086 # $o is a list of options
    apt-get $o -q update >"$apt/log" 2>&1 || { cat "$apt/log" >&2; return 1; }
    # shellcheck disable=SC2086
    (cd "$fd_dir" && apt-get $o -q source --download-only "$2=$3") >"$apt/log" 2>&1 ||
        { cat "$apt/log" >&2; return 1; }
    rm -rf "$apt"
}
