#!/bin/sh
# deps.sh — makes sure what attnlab needs is installed, installing only what is missing.
# Run by `make check`, `make demo`, `make bench` and .ci/run.
#
# What is present is found the way the build finds it — pkg-config for the libraries
# (GSL, Check, OpenBLAS), command -v for programs (pkg-config, gnuplot) — so it works the
# same on any system. What is missing is installed with apt-get on Debian and Ubuntu (WSL
# included) and with Homebrew on macOS; anywhere else, or without the rights to install,
# it prints the exact packages to install and fails. When everything is there it does
# nothing and succeeds, whatever the system.
#
# Then, best effort, a font that draws Chinese, for the figures of `attnlab report --lang
# zh` (without one they keep their English labels, and the report says so): Debian's
# fonts-wqy-microhei (1.6 MB). macOS has its own (PingFang SC, Hiragino Sans GB), which
# the fontconfig Homebrew's gnuplot depends on finds, so nothing is installed there.
#
# `deps.sh fuzz` checks what `make fuzz` needs instead: clang with its libFuzzer runtime.
# `deps.sh web` checks what `make web` and `make check-web` need: emscripten's emcc and
# node (to run the WebAssembly build's tests); the C toolchain, GSL's source and the
# checks of the native build are the caller's business.
set -u
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# Homebrew's OpenBLAS is keg-only: its pkg-config file is outside the default path
if command -v brew >/dev/null 2>&1; then
    brew_openblas=$(brew --prefix openblas 2>/dev/null)
    [ -n "$brew_openblas" ] && PKG_CONFIG_PATH="$brew_openblas/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export PKG_CONFIG_PATH
fi

have_prog() { command -v "$1" >/dev/null 2>&1; }
have_lib() { have_prog "$PKG_CONFIG" && "$PKG_CONFIG" --exists "$1" 2>/dev/null; }

# Can clang build a libFuzzer harness here?
have_fuzzer() {
    have_prog clang || return 1
    dir=$(mktemp -d 2>/dev/null) || return 1
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' > "$dir/f.c"
    clang -fsanitize=fuzzer -o "$dir/f" "$dir/f.c" >/dev/null 2>&1
    rc=$?
    rm -rf "$dir"
    return $rc
}

# Each need: a name for messages, how to test it, its Debian and Homebrew packages.
missing_names=""
missing_deb=""
missing_brew=""
need() { # need NAME TEST DEBIAN_PKG BREW_PKG
    if ! eval "$2"; then
        missing_names="$missing_names $1"
        missing_deb="$missing_deb $3"
        missing_brew="$missing_brew $4"
    fi
}

if [ "${1:-}" = fuzz ]; then
    # Debian names the runtime after clang's major version (bookworm: 14)
    v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n 1)
    need "clang+libFuzzer" have_fuzzer "clang libclang-rt-${v:-14}-dev" "llvm"
elif [ "${1:-}" = web ]; then
    need emscripten "have_prog emcc" emscripten emscripten
    need node "have_prog node" nodejs node
else
    need pkg-config "have_prog $PKG_CONFIG" pkg-config pkg-config
    need GSL "have_lib gsl" libgsl-dev gsl
    need Check "have_lib check" check check
    need OpenBLAS "have_lib openblas" libopenblas-dev openblas
    need gnuplot "have_prog gnuplot" gnuplot-nox gnuplot
fi

as_root() { # runs "$@" as root: directly, with sudo, or fails
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif have_prog sudo && sudo -n true 2>/dev/null; then
        sudo "$@"
    else
        return 126
    fi
}

# What the page's browser test needs (tests/web/browser.js), for `deps.sh web` only and
# best effort: make web builds without it and make check-web skips that test with one
# line. Debian's chromium (apt-get, when root or sudo without a password; Homebrew has no
# unattended one), and playwright-core at the version tests/web/package-lock.json pins,
# by `npm ci` (it downloads no browser). Beside chromium, Debian's poppler-utils
# (pdfimages, pdftotext, pdfinfo), with which tests/test_report_pdf.c reads the report
# Chromium printed (that test, of make check, skips with one line without either).
web_test_tools() {
    [ "${1:-}" = web ] || return 0
    if ! have_prog chromium && have_prog apt-get && as_root true 2>/dev/null; then
        echo "attnlab: installing chromium for the page's browser test" >&2
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends \
            chromium >/dev/null 2>&1 || echo "attnlab: could not install chromium (the browser test will be skipped)" >&2
    fi
    if have_prog chromium && ! have_prog pdfimages && have_prog apt-get && as_root true 2>/dev/null; then
        echo "attnlab: installing poppler-utils to read the printed report (tests/test_report_pdf.c)" >&2
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends \
            poppler-utils >/dev/null 2>&1 || echo "attnlab: could not install poppler-utils (the printed report will not be checked)" >&2
    fi
    web_dir=$(dirname "$0")/../tests/web
    if have_prog npm && [ ! -d "$web_dir/node_modules/playwright-core" ]; then
        echo "attnlab: npm ci in tests/web (playwright-core, pinned)" >&2
        (cd "$web_dir" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null 2>&1) ||
            echo "attnlab: npm ci failed in tests/web (the browser test will be skipped)" >&2
    fi
    return 0
}

# The Chinese font (see the top), for the default check only and best effort: its absence
# fails nothing. fc-list is fontconfig's, which gnuplot's cairo terminals need anyway.
cjk_font() {
    [ -z "${1:-}" ] || return 0
    have_prog fc-list || return 0
    [ -n "$(fc-list :lang=zh family 2>/dev/null)" ] && return 0
    if have_prog apt-get && as_root true 2>/dev/null; then
        echo "attnlab: installing fonts-wqy-microhei (Chinese labels in the figures of report --lang zh)" >&2
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get install -y --no-install-recommends fonts-wqy-microhei >/dev/null 2>&1 ||
            { as_root apt-get update -q >/dev/null 2>&1 &&
              as_root apt-get install -y --no-install-recommends fonts-wqy-microhei >/dev/null 2>&1; } ||
            echo "attnlab: could not install fonts-wqy-microhei: the figures of report --lang zh keep English labels" >&2
    elif have_prog apt-get; then
        echo "attnlab: no Chinese font: the figures of report --lang zh keep English labels (to have Chinese ones: sudo apt-get install fonts-wqy-microhei)" >&2
    else
        echo "attnlab: fontconfig finds no Chinese font (fc-list :lang=zh): the figures of report --lang zh keep English labels" >&2
    fi
    return 0
}

if [ -z "$missing_names" ]; then
    cjk_font "${1:-}"
    web_test_tools "${1:-}"
    exit 0
fi

os=$(uname -s 2>/dev/null)
if [ "$os" = Darwin ]; then
    if ! have_prog brew; then
        echo "attnlab: missing:$missing_names; install Homebrew (https://brew.sh), then: brew install$missing_brew" >&2
        exit 1
    fi
    echo "attnlab: installing missing packages with Homebrew:$missing_brew" >&2
    # shellcheck disable=SC2086 # the list is meant to split into words
    if ! brew install $missing_brew; then
        echo "attnlab: could not install:$missing_brew; run: brew install$missing_brew" >&2
        exit 1
    fi
    [ "${1:-}" = fuzz ] && echo "attnlab: Apple's clang has no libFuzzer; run make fuzz FUZZ_CC=\$(brew --prefix llvm)/bin/clang" >&2
    cjk_font "${1:-}"
    web_test_tools "${1:-}"
    exit 0
fi

if ! have_prog apt-get; then
    echo "attnlab: missing:$missing_names; this system has neither apt-get nor Homebrew: install them with its package manager (Debian's names:$missing_deb)" >&2
    exit 1
fi
cmd="apt-get install -y --no-install-recommends$missing_deb"
if ! as_root true 2>/dev/null; then
    echo "attnlab: missing:$missing_names; install them with: sudo apt-get update && sudo $cmd" >&2
    exit 1
fi
echo "attnlab: installing missing packages:$missing_deb" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! as_root $cmd >/dev/null 2>&1; then
    as_root apt-get update -q >/dev/null 2>&1
    if ! as_root $cmd; then
        echo "attnlab: could not install:$missing_deb; run: sudo apt-get update && sudo $cmd" >&2
        exit 1
    fi
fi
cjk_font "${1:-}"
web_test_tools "${1:-}"
