#!/bin/sh
# deps.sh — installs the Debian packages attnlab needs, only when something is missing.
# Run by `make check`, `make demo`, `make bench` and .ci/run. When it cannot install (not
# root and no sudo, or no package archive), it prints the exact command to run and fails.
set -u
packages="libgsl-dev check gnuplot-nox libopenblas-dev pkg-config"
# `deps.sh fuzz` adds what `make fuzz` needs: clang and its libFuzzer runtime
[ "${1:-}" = fuzz ] && packages="clang libclang-rt-14-dev"
missing=""
for p in $packages; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "attnlab: missing packages:$missing; this is not a Debian system, install GSL, Check, gnuplot, OpenBLAS and pkg-config by hand" >&2
    exit 1
fi
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
else
    echo "attnlab: missing packages:$missing; install them with: sudo apt-get update && sudo $cmd" >&2
    exit 1
fi
echo "attnlab: installing missing packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo $cmd >/dev/null 2>&1; then
    $sudo apt-get update -q >/dev/null 2>&1
    if ! $sudo $cmd; then
        echo "attnlab: could not install:$missing; run: sudo apt-get update && sudo $cmd" >&2
        exit 1
    fi
fi
