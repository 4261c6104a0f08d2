#!/usr/bin/python3
"""check.py — holds attnlab to its PyTorch twin (twin.py): `make check-pytorch`.

    /usr/bin/python3 tests/pytorch/check.py --attnlab build/attnlab \
        --grads build/tests/pytorch/twin-grads [--work DIR] [--perturb NAME]

For every model and variant (VARIANTS): attnlab trains a small model for 300 steps (sizes
all different from each other, so a transposed index cannot hide), and writes its
model.ckpt; twin-grads (grads.c) loads it and writes attnlab's loss, the gradient of
every tensor, the forward's argmax and greedy decoding on one fixed batch (B = 3, Ts = 7,
Tt = 5: a source and a target of different lengths); the twin reads the same checkpoint
(checkpoint.py) and computes the same in float64 with autograd. Then:
    loss and every gradient: relative error ≤ 1e-9, where a tensor's error is
        max_i |attnlab_i − twin_i| / max_i max(|attnlab_i|, |twin_i|)
    (relative to the tensor's largest entry, so exact zeros, e.g. the rows of tokens the
    batch does not hold, count as agreement only when both are zero);
    the forward's argmax tokens and the greedy tokens: identical.
Every tensor's error is printed. After each comparison a control perturbs one weight of
the twin by 1e-6 and must be caught, so a comparison that cannot fail fails loudly; the
loader is shown a copy of the checkpoint with one byte flipped and one cut short, and
twin-grads a batch with a token outside the vocabulary, and each must be refused.
--perturb NAME adds 1e-6 to entry (0, 0) of tensor NAME of the twin in every variant
that has it, to watch the comparison fail. Exit status 0 when everything agrees, 1
otherwise, 2 for a usage error.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import torch                      # noqa: E402  (after the path: twin and checkpoint)
import torch.nn.functional as F   # noqa: E402

import checkpoint                 # noqa: E402
import twin as twins              # noqa: E402

TOL = 1e-9
MARKER = ".attnlab-twin-work"  # marks a --work directory as this script's to empty
CONTROL_DELTA = 1e-6
B, TS, TT, SEED = 3, 7, 5, 20251

# The sizes of each model: all different (E 5, H 6, A 9, V 8; D 12, dk 4, F 10), and
# different from the batch's B 3, Ts 7, Tt 5 where they meet in one product.
SIZES = {
    "lstm": ["--symbols", "7", "--embed", "5", "--hidden", "6"],
    "rnn_attention": ["--symbols", "7", "--embed", "5", "--hidden", "6", "--attn", "9"],
    "transformer": ["--symbols", "7", "--d-model", "12", "--heads", "3", "--d-ff", "10",
                    "--layers", "2", "--max-len", "16"],
}
# 300 steps at a high rate, about a second each: weights far from their initialisation
# (biases not zero, layer norm gains not one), and models that have begun to copy, so
# greedy decoding gives varied tokens (after 20 steps most repeat one token, and a
# decoder that fed back the wrong token would go unseen).
TRAIN = ["--task", "copy", "--train-len", "3:6", "--steps", "300", "--batch", "8", "--lr",
         "0.01", "--seed", "1", "--eval-lengths", "4", "--samples", "4", "--val-samples", "4",
         "--log-every", "10", "--checkpoint-every", "0", "--threads", "1", "--quiet"]
# (label, model, flags, tensor the control perturbs): every variant the models declare
# (their ops' variants), plus emb_scale for the transformer.
VARIANTS = [
    ("lstm", "lstm", [], "enc.Wh"),
    ("lstm feed_context=1", "lstm", ["--feed-context"], "dec.Wc"),
    ("rnn_attention", "rnn_attention", [], "enc.Wh"),
    ("rnn_attention cell=lstm", "rnn_attention", ["--cell", "lstm"], "enc.Wh"),
    ("rnn_attention bidirectional=1", "rnn_attention", ["--bidirectional"], "bwd.Wh"),
    ("rnn_attention bidirectional=1 cell=lstm", "rnn_attention",
     ["--bidirectional", "--cell", "lstm"], "bwd.Wh"),
    ("transformer", "transformer", [], "enc.0.attn.w_in"),
    ("transformer post_ln=1", "transformer", ["--post-ln"], "enc.0.attn.w_in"),
    ("transformer pos=learned", "transformer", ["--pos", "learned"], "enc.0.attn.w_in"),
    ("transformer pos=none", "transformer", ["--pos", "none"], "enc.0.attn.w_in"),
    ("transformer emb_scale=3", "transformer", ["--emb-scale", "3"], "enc.0.attn.w_in"),
]


# ---- the batch -------------------------------------------------------------------------------

def make_batch(V, seed):
    """src (B, Ts) and tgt (B, Tt) of data symbols 0..V−2, dec_in = (BOS, tgt shifted
    right), BOS = V − 1: lists of rows."""
    rng = random.Random(seed)
    src = [[rng.randrange(V - 1) for _ in range(TS)] for _ in range(B)]
    tgt = [[rng.randrange(V - 1) for _ in range(TT)] for _ in range(B)]
    dec_in = [[V - 1] + row[:-1] for row in tgt]
    return src, dec_in, tgt


def write_batch(path, src, dec_in, tgt):
    with open(path, "w") as f:
        f.write("what\trows\tcols\ttokens\n")
        for what, m in (("src", src), ("dec_in", dec_in), ("tgt", tgt)):
            f.write(f"{what}\t{len(m)}\t{len(m[0])}\t" +
                    " ".join(str(x) for row in m for x in row) + "\n")


# ---- the two sides ------------------------------------------------------------------------------

def read_attnlab(path):
    """twin-grads' OUT: {'loss': float, 'grads': [(name, tensor (rows, cols))],
    'pred': (B, Tt) tensor, 'decode': (B, Tt) tensor}."""
    res = {"grads": []}
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != "what\tname\trows\tcols\tvalues":
        raise ValueError(f"{path}: not a twin-grads output (header)")
    for line in lines[1:]:
        what, name, rows, cols, values = line.split("\t")
        shape = (int(rows), int(cols))
        if what == "loss":
            res["loss"] = float(values)
        elif what == "grad":
            g = torch.tensor([float(v) for v in values.split()], dtype=torch.float64)
            res["grads"].append((name, g.reshape(shape)))
        else:
            res[what] = torch.tensor([int(v) for v in values.split()]).reshape(shape)
    return res


def grad_of(p):
    """The gradient of a tensor of attnlab_tensors(): of the parameter itself, or, for a
    view of a parameter (Lstm's dec.Wx and dec.Wc with feed_context, two column blocks of
    one weight_ih), the same entries of that parameter's gradient."""
    base = p if p._base is None else p._base
    if base.grad is None:
        return torch.zeros_like(p)
    if base is p:
        return p.grad
    return base.grad.as_strided(p.shape, p.stride(), p.storage_offset() - base.storage_offset())


def run_twin(twin, src, dec_in, tgt):
    """The twin's side, in its dtype: the same dictionary as read_attnlab."""
    for p in twin.parameters():
        p.grad = None
    src, dec_in, tgt = (torch.tensor(m) for m in (src, dec_in, tgt))
    logits = twin(src, dec_in)                                    # (B, Tt, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
    loss.backward()
    grads = []
    for name, p in twin.attnlab_tensors():
        g = grad_of(p)
        grads.append((name, g.detach().reshape(1, -1) if p.dim() == 1 else g.detach()))
    return {"loss": loss.item(), "grads": grads, "pred": logits.argmax(-1),
            "decode": twin.greedy(src, tgt.shape[1])}


def rel_error(a, b):
    """max |a − b| over the entries, relative to the largest |entry| of either."""
    scale = max(a.abs().max().item(), b.abs().max().item())
    return 0.0 if scale == 0 else (a - b).abs().max().item() / scale


def compare(c, t):
    """[(what, shape, error)] for the loss and every gradient, and the token mismatches."""
    rows = [("loss", (1, 1), abs(c["loss"] - t["loss"]) / max(abs(c["loss"]), 1e-300))]
    names_c = [n for n, _ in c["grads"]]
    names_t = [n for n, _ in t["grads"]]
    if names_c != names_t:
        raise ValueError(f"tensor lists differ: attnlab {names_c}, twin {names_t}")
    for (name, gc), (_, gt) in zip(c["grads"], t["grads"]):
        if gc.shape != gt.shape:
            rows.append((name, tuple(gc.shape), float("inf")))
        else:
            rows.append((name, tuple(gc.shape), rel_error(gc, gt)))
    tokens = [w for w in ("pred", "decode") if not torch.equal(c[w], t[w])]
    return rows, tokens


def perturb(twin, name, delta):
    """Adds delta to entry (0, 0) (or 0) of the twin's tensor name; False when it has none."""
    for n, p in twin.attnlab_tensors():
        if n == name:
            with torch.no_grad():
                p[(0,) * p.dim()] += delta   # p may be a view with strides
            return True
    return False


def run(cmd):
    """Runs cmd; a failure raises RuntimeError with the program, its status and its last
    line on stderr."""
    p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        last = p.stderr.strip().splitlines()[-1:] or ["(nothing on stderr)"]
        raise RuntimeError(f"{' '.join(cmd[:2])} ... exited with status {p.returncode}: "
                           f"{last[0]}")


# ---- one variant ---------------------------------------------------------------------------------

def check_variant(a, label, model, flags, control, work):
    """Trains, runs both sides, prints the table; returns the number of failures."""
    slug = label.replace(" ", "-").replace("=", "-")
    run_dir = os.path.join(work, slug)
    cmd = [a.attnlab, "train", "--model", model] + SIZES[model] + flags + TRAIN + \
        ["--out", run_dir]
    run(cmd)
    ckpt = checkpoint.read(os.path.join(run_dir, "model.ckpt"))
    twin = twins.from_config(ckpt.model, ckpt.config)
    checkpoint.load_into(twin, ckpt)
    V = int(ckpt.config["symbols"]) + 1
    src, dec_in, tgt = make_batch(V, SEED)
    batch_path, out_path = os.path.join(run_dir, "batch.tsv"), os.path.join(run_dir, "grads.tsv")
    write_batch(batch_path, src, dec_in, tgt)
    run([a.grads, os.path.join(run_dir, "model.ckpt"), batch_path, out_path])
    c = read_attnlab(out_path)

    moved = a.perturb and perturb(twin, a.perturb, CONTROL_DELTA)
    t = run_twin(twin, src, dec_in, tgt)
    rows, tokens = compare(c, t)
    bad = [r for r in rows if not r[2] <= TOL]
    print(f"{label}: loss {c['loss']:.17g} (twin {t['loss']:.17g})")
    if a.perturb:
        print(f"  --perturb: {a.perturb}[0] + {CONTROL_DELTA:g} in the twin" if moved else
              f"  --perturb: this model has no tensor {a.perturb}: nothing moved")
    for name, shape, err in rows:
        flag = "" if err <= TOL else f"   MISMATCH (> {TOL:g})"
        print(f"  {name:<22} {str(shape):<10} {err:.1e}{flag}")
    for w in ("pred", "decode"):
        what = "forward argmax" if w == "pred" else "greedy decoding"
        if w in tokens:
            print(f"  {what}: attnlab {c[w].tolist()}, twin {t[w].tolist()}   MISMATCH")
        else:
            print(f"  {what}: the same {c[w].numel()} tokens")
    worst = max(rows, key=lambda r: r[2])
    failures = len(bad) + len(tokens)

    # the control: the same comparison with one weight of the twin moved must fail
    if not a.perturb:
        perturb(twin, control, CONTROL_DELTA)
        rows_p, tokens_p = compare(c, run_twin(twin, src, dec_in, tgt))
        caught = max(rows_p, key=lambda r: r[2])
        if caught[2] > TOL or tokens_p:
            print(f"  control: {control}[0] + {CONTROL_DELTA:g} in the twin is caught "
                  f"({caught[0]} {caught[2]:.1e} > {TOL:g})")
        else:
            print(f"  control: {control}[0] + {CONTROL_DELTA:g} in the twin is NOT caught "
                  f"(worst {caught[2]:.1e}): the comparison cannot fail")
            failures += 1
    print(f"  worst: {worst[0]} {worst[2]:.1e}; {'ok' if failures == 0 else 'FAILED'}")
    return failures, run_dir


# ---- what must be refused ------------------------------------------------------------------------

def check_refusals(a, run_dir):
    """A flipped byte and a short file for the loader, a bad token for twin-grads: each
    refused with one line. Returns the number of failures."""
    failures = 0
    data = open(os.path.join(run_dir, "model.ckpt"), "rb").read()
    cases = [("one byte flipped", data[:200] + bytes([data[200] ^ 0x10]) + data[201:], "CRC"),
             ("cut short", data[:len(data) // 2], "truncated")]
    for what, blob, expect in cases:
        path = os.path.join(run_dir, "bad.ckpt")
        with open(path, "wb") as f:
            f.write(blob)
        try:
            checkpoint.read(path)
            msg = None
        except checkpoint.CheckpointError as e:
            msg = str(e)
        ok = msg is not None and expect in msg
        failures += not ok
        print(f"loader, checkpoint {what}: {'refused: ' + msg if msg else 'ACCEPTED'}"
              f"{'' if ok else '   FAILED (expected ' + expect + ')'}")

    batch = os.path.join(run_dir, "bad-batch.tsv")
    out = os.path.join(run_dir, "grads.tsv")
    before = open(out, "rb").read()
    with open(batch, "w") as f:
        f.write("what\trows\tcols\ttokens\nsrc\t1\t2\t1 99\ndec_in\t1\t1\t0\ntgt\t1\t1\t0\n")
    p = subprocess.run([a.grads, os.path.join(run_dir, "model.ckpt"), batch, out],
                       stderr=subprocess.PIPE, text=True)
    err = p.stderr.strip()
    ok = p.returncode == 1 and err.count("\n") == 0 and "99" in err and \
        open(out, "rb").read() == before
    failures += not ok
    print(f"twin-grads, token 99: exit {p.returncode}, '{err}'"
          f"{'' if ok else '   FAILED (expected exit 1, one line, OUT unchanged)'}")
    return failures


def prepare_work(parser, work):
    """Empties --work DIR for a new round, but only a directory this script made (it leaves
    a marker there): any other directory that holds files is refused, never emptied."""
    marker = os.path.join(work, MARKER)
    if os.path.isdir(work) and os.listdir(work) and not os.path.exists(marker):
        parser.error(f"--work {work}: the directory holds files this script did not write "
                     f"(accepted: a new or empty directory, or one an earlier --work made)")
    if os.path.exists(work) and not os.path.isdir(work):
        parser.error(f"--work {work}: not a directory (accepted: a new or empty directory)")
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    open(marker, "w").close()


def main():
    p = argparse.ArgumentParser(description="Compare attnlab with its PyTorch twin.")
    p.add_argument("--attnlab", default="build/attnlab", help="the attnlab program")
    p.add_argument("--grads", default="build/tests/pytorch/twin-grads",
                   help="the twin-grads program (grads.c)")
    p.add_argument("--work", help="keep the runs and files here (default: a temporary "
                   "directory, removed after)")
    p.add_argument("--perturb", metavar="NAME",
                   help="add 1e-6 to entry (0, 0) of tensor NAME of the twin: the check "
                   "must then fail")
    a = p.parse_args()
    for prog in (a.attnlab, a.grads):
        if not os.access(prog, os.X_OK):
            p.error(f"{prog} is not an executable program (build it: make check-pytorch)")
    torch.set_num_threads(1)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    work = a.work or tempfile.mkdtemp(prefix="attnlab-twin-")
    if a.work:
        prepare_work(p, work)
    try:
        failures, last = 0, None
        for label, model, flags, control in VARIANTS:
            try:
                f, run_dir = check_variant(a, label, model, flags, control, work)
                last = run_dir
            except (OSError, RuntimeError, checkpoint.CheckpointError, ValueError) as e:
                print(f"{label}: FAILED before the comparison: {e}")
                f = 1
            failures += f
        if last:
            failures += check_refusals(a, last)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"check-pytorch: {len(VARIANTS)} variants, torch {torch.__version__}, tolerance "
          f"{TOL:g}: {'all agree' if failures == 0 else str(failures) + ' failures'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
