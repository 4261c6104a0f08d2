#!/bin/sh
# arm64.sh — builds attnlab for arm64 (aarch64) with Debian's cross compiler and runs the
# fast tests and the three models' gradient checks under qemu-user, on an x86-64 Debian
# machine: the check that the code does not assume the processor it was written on.
#
# Debian's libgsl-dev is not multi-arch on bookworm (it cannot be installed beside the
# amd64 one), so the arm64 libraries are not installed: their packages are downloaded and
# unpacked into a private root (build/arm64-root), which pkg-config is pointed at
# (PKG_CONFIG_LIBDIR, PKG_CONFIG_SYSROOT_DIR) and the emulated program loads them from.
# Needs root (or sudo) the first time, to add the arm64 architecture and the cross tools.
#
#   sh .ci/arm64.sh            build, fast tests, gradchecks
#   ARM64_TIMEOUT=40 sh ...    Check's timeout multiplier under emulation (default 30)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)/build/arm64-root
LIB=$ROOT/usr/lib/aarch64-linux-gnu
BUILD=build/arm64

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# ---- the cross tools and the arm64 packages -------------------------------------------
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
    echo "arm64: installing the cross compiler and qemu-user" >&2
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y --no-install-recommends gcc-aarch64-linux-gnu \
        libc6-dev-arm64-cross qemu-user >/dev/null 2>&1 ||
        { as_root apt-get update -q >/dev/null && as_root apt-get install -y \
            --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null; }
fi
if [ ! -f "$LIB/pkgconfig/gsl.pc" ]; then
    echo "arm64: unpacking the arm64 libraries into $ROOT" >&2
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        as_root dpkg --add-architecture arm64
        as_root apt-get update -q >/dev/null
    fi
    debs=$(mktemp -d)
    pkgs="libgsl-dev:arm64 libgsl27:arm64 libgslcblas0:arm64 libopenblas-dev:arm64
          libopenblas-pthread-dev:arm64 libopenblas0-pthread:arm64 libopenblas0:arm64
          check:arm64 libsubunit-dev:arm64 libsubunit0:arm64 libgfortran5:arm64"
    # apt-get download writes into the working directory, as the user _apt when it can
    (cd "$debs" && chmod 777 . && apt-get download $pkgs >/dev/null 2>&1) ||
        (cd "$debs" && as_root apt-get update -q >/dev/null && apt-get download $pkgs >/dev/null)
    mkdir -p "$ROOT"
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$ROOT"; done
    rm -rf "$debs"
fi

# ---- build ------------------------------------------------------------------------------
export PKG_CONFIG_LIBDIR="$LIB/pkgconfig:$LIB/openblas-pthread/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$ROOT"
make --no-print-directory -j2 CC=aarch64-linux-gnu-gcc BUILD=$BUILD \
    LDFLAGS="-Wl,-rpath-link,$LIB -Wl,-rpath-link,$LIB/openblas-pthread" \
    $BUILD/attnlab $BUILD/attnlab-tests

# ---- run under emulation ------------------------------------------------------------------
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
export LD_LIBRARY_PATH="$LIB:$LIB/openblas-pthread"
# Without binfmt_misc the kernel cannot start an arm64 program itself, so the tests that
# run the program start it through this wrapper.
wrapper=$(pwd)/$BUILD/attnlab-qemu
printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$(pwd)/$BUILD/attnlab" > "$wrapper"
chmod +x "$wrapper"
# the worksheets' writer, which tests/test_worksheets.c runs, the same way
writer=$(pwd)/$BUILD/worksheet-qemu
printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$(pwd)/$BUILD/worksheet" > "$writer"
chmod +x "$writer"
"$wrapper" --version
for m in $("$wrapper" help models | awk '{print $1}'); do
    "$wrapper" gradcheck --model "$m" | tail -n 1
done
CK_EXCLUDE_TAGS="slow noqemu" CK_TIMEOUT_MULTIPLIER=${ARM64_TIMEOUT:-30} ATTNLAB="$wrapper" \
    ATTNLAB_WORKSHEET="$writer" \
    qemu-aarch64 $BUILD/attnlab-tests
