"""checkpoint.py — reads an attnlab checkpoint (model.ckpt) in Python, checked as the C
loader checks it, and copies its tensors into a twin (twin.py).

The layout is docs/checkpoint-format.md, version 1, read here with struct alone:

    magic "ATTNCKPT" | u32 version = 1 | u32 flags | u64 L | u32 CRC-32 of bytes 0-23
    u64 n, model name | u64 c, configuration text ("key<TAB>value" lines)
    u64 K, then K times: u64 n, tensor name, u64 rows, u64 cols
    the parameters: every tensor row-major, little-endian float64, in table order
    (flags bit 0: step, Adam's m and v, three generator states — skipped here)
    u32 CRC-32 of every byte before it

Every integer is little-endian and unaligned ("<" in struct). The two CRCs are zlib's
(Python's zlib.crc32). As in common/core/checkpoint_format.c, nothing is trusted: the header
CRC before L is used, the file CRC before any value is, and every length against the
bytes that remain before it is read. A failure raises CheckpointError with one line,
"checkpoint PATH: ...", in the C loader's words where there is one.
"""
import struct
import zlib

MAGIC = b"ATTNCKPT"
VERSION = 1
FLAG_TRAIN_STATE = 1
NAME_MAX, MODEL_NAME_MAX, CONFIG_MAX, TENSORS_MAX = 47, 63, 65536, 65536


class CheckpointError(Exception):
    """A checkpoint that cannot be read: the message is one line naming the file."""


class Checkpoint:
    """What a checkpoint holds: model (its registry name), config (key -> value text, as
    config.tsv), tensors (a list of (name, rows, cols, values) in arena order, values a
    list of rows·cols floats, row-major), has_train_state."""

    def __init__(self, model, config, tensors, has_train_state):
        self.model = model
        self.config = config
        self.tensors = tensors
        self.has_train_state = has_train_state


class _Reader:
    """Walks the bytes before the file CRC; every read checks that its bytes are there."""

    def __init__(self, data, end, path):
        self.data, self.pos, self.end, self.path = data, 0, end, path

    def fail(self, msg):
        raise CheckpointError(f"checkpoint {self.path}: {msg}")

    def take(self, n, what):
        if n > self.end - self.pos:
            self.fail(f"malformed: {what} ({n} bytes at offset {self.pos}) runs past the "
                      f"end of the data")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u64(self, what):
        return struct.unpack("<Q", self.take(8, what))[0]

    def text(self, lo, hi, what):
        """A u64 length in [lo, hi], then that many bytes of printable ASCII."""
        n = self.u64(f"length of {what}")
        if not lo <= n <= hi:
            self.fail(f"malformed: {what} has length {n} (accepted: {lo} to {hi})")
        b = self.take(n, what)
        if any(c < 0x20 or c > 0x7E for c in b):
            self.fail(f"malformed: {what} holds a byte that is not printable ASCII")
        return b.decode("ascii")


def read(path):
    """Reads and checks the checkpoint at path; returns a Checkpoint."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CheckpointError(f"checkpoint {path}: {e.strerror}") from None
    where = f"checkpoint {path}"
    # the fixed header: magic, version (before any CRC: a later version may place them
    # elsewhere), then the header CRC, which vouches for the flags and L
    if len(data) < len(MAGIC) or data[:8] != MAGIC:
        if len(data) < len(MAGIC) and MAGIC.startswith(data):
            raise CheckpointError(f"{where}: truncated (the file ends inside the magic)")
        raise CheckpointError(f"{where}: not an attnlab checkpoint (bad magic)")
    if len(data) < 28:
        raise CheckpointError(f"{where}: truncated (the file ends inside the header)")
    version, flags, total = struct.unpack_from("<IIQ", data, 8)
    if version != VERSION:
        raise CheckpointError(f"{where}: format version {version} is not supported "
                              f"(this reads version {VERSION})")
    (head_crc,) = struct.unpack_from("<I", data, 24)
    if zlib.crc32(data[:24]) != head_crc:
        raise CheckpointError(f"{where}: header CRC mismatch: the file is corrupt")
    if flags & ~FLAG_TRAIN_STATE:
        raise CheckpointError(f"{where}: unknown flags 0x{flags:x}")
    if total < 32:
        raise CheckpointError(f"{where}: malformed: length {total} (accepted: at least 32)")
    if len(data) < total:
        raise CheckpointError(f"{where}: truncated ({total} bytes expected, the file has "
                              f"{len(data)})")
    if len(data) > total:
        raise CheckpointError(f"{where}: unexpected bytes after the end")
    # the file CRC covers everything before it, the header included
    (file_crc,) = struct.unpack_from("<I", data, total - 4)
    computed = zlib.crc32(data[:total - 4])
    if computed != file_crc:
        raise CheckpointError(f"{where}: CRC mismatch (stored 0x{file_crc:08x}, computed "
                              f"0x{computed:08x}): the file is corrupt")

    r = _Reader(data, total - 4, path)
    r.pos = 28
    model = r.text(1, MODEL_NAME_MAX, "the model name")
    # the configuration holds tabs and newlines: not printable ASCII, so not text()
    n = r.u64("length of the configuration")
    if not 1 <= n <= CONFIG_MAX:
        r.fail(f"malformed: the configuration has length {n} (accepted: 1 to {CONFIG_MAX})")
    lines = r.take(n, "the configuration").decode("ascii", "replace").split("\n")
    if lines[0] != "key\tvalue":
        r.fail("malformed: the configuration does not start with its header 'key<TAB>value'")
    config = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition("\t")
            config[key] = value
    if config.get("model") != model:
        r.fail(f"the header names model '{model}' but the configuration "
               f"'{config.get('model')}'")

    count = r.u64("the tensor count")
    if not 1 <= count <= TENSORS_MAX or count > (r.end - r.pos) // 25:
        r.fail(f"malformed: {count} tensors (accepted: 1 to {TENSORS_MAX}, and at most "
               f"the bytes left / 25)")
    table = []
    for k in range(count):
        name = r.text(1, NAME_MAX, f"the name of tensor {k}")
        rows, cols = r.u64(f"the rows of '{name}'"), r.u64(f"the cols of '{name}'")
        if rows < 1 or cols < 1 or rows * cols * 8 > r.end - r.pos:
            r.fail(f"malformed: tensor '{name}' of shape ({rows}, {cols}) does not fit in "
                   f"the bytes left")
        table.append((name, rows, cols))
    tensors = []
    for name, rows, cols in table:
        raw = r.take(8 * rows * cols, f"the values of tensor '{name}'")
        tensors.append((name, rows, cols, list(struct.unpack(f"<{rows * cols}d", raw))))
    if flags & FLAG_TRAIN_STATE:
        _skip_train_state(r, sum(rows * cols for _, rows, cols in table))
    if r.pos != r.end:
        r.fail(f"malformed: {r.end - r.pos} bytes between the last section and the CRC")
    return Checkpoint(model, config, tensors, bool(flags & FLAG_TRAIN_STATE))


def _skip_train_state(r, n_params):
    """Walks the optional training state (step, m, v, generator states) without keeping
    it: the twin needs the weights only."""
    r.u64("the optimiser step")
    n = r.u64("the length of the moments")
    if n != n_params:
        r.fail(f"malformed: moments of length {n} for {n_params} parameters")
    r.take(8 * n, "Adam's first moment")
    r.take(8 * n, "Adam's second moment")
    streams = r.u64("the number of generator streams")
    if streams != 3:
        r.fail(f"malformed: {streams} generator streams (accepted: 3)")
    for k in range(streams):
        size = r.u64(f"the size of generator state {k}")
        if not 1 <= size <= 1 << 20:
            r.fail(f"malformed: generator state {k} of {size} bytes (accepted: 1 to 1048576)")
        r.take(size, f"generator state {k}")


def load_into(twin, ckpt):
    """Copies the tensors of ckpt into twin, whose attnlab_tensors() lists (name,
    parameter) in arena order: the names, their order and every shape must agree (a
    (1, n) row of the file fills a parameter of n entries, e.g. a bias). Raises
    CheckpointError naming the first difference."""
    import torch

    mine = twin.attnlab_tensors()
    if len(mine) != len(ckpt.tensors):
        raise CheckpointError(f"the file holds {len(ckpt.tensors)} tensors but the twin "
                              f"has {len(mine)}")
    with torch.no_grad():
        for k, ((name, rows, cols, values), (tname, p)) in enumerate(zip(ckpt.tensors, mine)):
            if name != tname:
                raise CheckpointError(f"tensor {k} is '{name}' in the file but '{tname}' in "
                                      f"the twin")
            if p.numel() != rows * cols or (p.dim() == 2 and tuple(p.shape) != (rows, cols)):
                raise CheckpointError(f"tensor '{name}' has shape ({rows}, {cols}) in the "
                                      f"file but {tuple(p.shape)} in the twin")
            p.copy_(torch.tensor(values, dtype=p.dtype).reshape(p.shape))
