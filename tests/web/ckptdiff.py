#!/usr/bin/env python3
"""ckptdiff.py — where two checkpoints differ: the configuration text, and for each tensor
how many parameters differ and by how many units in the last place at most.

usage: tests/web/ckptdiff.py A.ckpt B.ckpt

Reads the layout of docs/checkpoint-format.md (version 1; the optional training state is
not compared). Used by tests/web/check.sh to say which part of a model a difference
between the WebAssembly and the native build is in.
"""
import struct
import sys


def read(path):
    """Returns (model, config text, [(name, rows, cols, [doubles])]) of a checkpoint."""
    data = open(path, "rb").read()
    pos = 28  # magic, version, flags, length, header CRC

    def u64():
        nonlocal pos
        (v,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        return v

    def text():
        nonlocal pos
        n = u64()
        s = data[pos:pos + n].decode("ascii")
        pos += n
        return s

    model, config = text(), text()
    table = [(text(), u64(), u64()) for _ in range(u64())]
    tensors = []
    for name, rows, cols in table:
        vals = struct.unpack_from("<%dd" % (rows * cols), data, pos)
        pos += 8 * rows * cols
        tensors.append((name, rows, cols, vals))
    return model, config, tensors


def ulps(a, b):
    """Distance of two doubles in units in the last place (their bit patterns as ordered
    integers)."""
    def key(x):
        (i,) = struct.unpack("<q", struct.pack("<d", x))
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)
    return abs(key(a) - key(b))


def main():
    if len(sys.argv) != 3:
        print("usage: ckptdiff.py A.ckpt B.ckpt", file=sys.stderr)
        return 2
    ma, ca, ta = read(sys.argv[1])
    mb, cb, tb = read(sys.argv[2])
    if ma != mb or ca != cb:
        print("  the model or configuration text differs:")
        for la, lb in zip(ca.splitlines(), cb.splitlines()):
            if la != lb:
                print("    %r  vs  %r" % (la, lb))
    for (na, r, c, va), (_, _, _, vb) in zip(ta, tb):
        diff = [(i, ulps(x, y)) for i, (x, y) in enumerate(zip(va, vb)) if x != y]
        if diff:
            worst = max(diff, key=lambda d: d[1])
            print("  %-24s (%d, %d): %d of %d values differ, at most %d ulp (index %d)"
                  % (na, r, c, len(diff), r * c, worst[1], worst[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
