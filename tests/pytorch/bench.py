#!/usr/bin/python3
"""bench.py — training and greedy-decoding speed of the PyTorch twin (twin.py), the
figure `attnlab bench` is set beside (docs/performance.md).

    /usr/bin/python3 tests/pytorch/bench.py --threads 1 --dtypes f32 f64 --lens 32 128 \
        --infer-lens 128 [--models lstm rnn_attention transformer]

What it times, per model, dtype and length L, with the canonical sizes (CANONICAL, the
defaults of each model in C), batch 32, on the copy task (source L random symbols,
target = source, decoder input = BOS then the target shifted right):
    a training step: zero_grad, forward, mean cross-entropy, backward,
        clip_grad_norm_(1.0), Adam(lr 1e-3) step — what one step of `attnlab train` does;
    greedy decoding of the batch in eval mode, exactly L steps (for the transformer, the
        decoder on the whole prefix at every step: nn.Transformer has no key/value cache).
Method: --warm untimed steps, then --reps repetitions, each of as many steps as last
at least --min-time seconds; the figure is batch / the median time of one step
(sequences per second), with the fastest and slowest repetition beside it. The thread
count is set before torch loads (OMP_NUM_THREADS and OPENBLAS_NUM_THREADS: torch's own
setting does not reach OpenBLAS's pool), then with torch.set_num_threads.
"""
import argparse
import os
import statistics
import sys
import time

CANONICAL = {  # lstm/lstm_model.c, rnn_attention/rnnattn_model.c, transformer/tfm_model.c
    "lstm": {"symbols": "10", "embed": "32", "hidden": "128"},
    "rnn_attention": {"symbols": "10", "embed": "32", "hidden": "128", "attn": "128",
                      "cell": "gru"},
    "transformer": {"symbols": "10", "d_model": "64", "heads": "4", "d_ff": "256",
                    "layers": "2", "max_len": "256", "pos": "sinusoidal", "post_ln": "0",
                    "emb_scale": "1"},
}


def timeit(fn, warm, reps, min_time):
    """Median, fastest and slowest seconds per call of fn over reps repetitions."""
    for _ in range(warm):
        fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-9)
    n = max(1, int(min_time / once + 0.999))
    per_call = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per_call.append((time.perf_counter() - t0) / n)
    return statistics.median(per_call), min(per_call), max(per_call)


def copy_batch(torch, B, L, V):
    """src (B, L) uniform over the V − 1 data symbols, tgt = src, dec_in = (BOS, src
    shifted right) with BOS = V − 1."""
    src = torch.randint(0, V - 1, (B, L))
    dec_in = torch.cat([torch.full((B, 1), V - 1, dtype=torch.long), src[:, :-1]], 1)
    return src, dec_in, src.clone()


def main():
    p = argparse.ArgumentParser(description="Speed of the PyTorch twin.")
    p.add_argument("--models", nargs="+", default=list(CANONICAL), choices=list(CANONICAL))
    p.add_argument("--dtypes", nargs="+", default=["f32", "f64"], choices=["f32", "f64"])
    p.add_argument("--lens", type=int, nargs="+", default=[32, 128],
                   help="training lengths (source = target = L)")
    p.add_argument("--infer-lens", type=int, nargs="+", default=[128],
                   help="greedy-decoding lengths")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warm", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.25)
    a = p.parse_args()
    for flag, v in (("--batch", a.batch), ("--threads", a.threads), ("--reps", a.reps)):
        if v < 1:
            p.error(f"{flag} {v} is not accepted (accepted: 1 or more)")
    for L in a.lens + a.infer_lens:
        if not 2 <= L <= 256:
            p.error(f"length {L} is not accepted (accepted: 2 to 256, the canonical max_len)")

    # the thread count must be in the environment before torch (and OpenBLAS) load
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import twin as twins

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} thread(s), batch "
          f"{a.batch}; seq/s = batch / median time of a step (fastest .. slowest rep)")
    print(f"{'model':<14} {'dtype':<5} {'what':<7} {'L':>4} {'seq/s':>9} {'ms':>9}  range ms")
    dtypes = {"f32": torch.float32, "f64": torch.float64}
    for name in a.models:
        cfg = CANONICAL[name]
        V = int(cfg["symbols"]) + 1
        for dname in a.dtypes:
            m = twins.from_config(name, cfg, dtypes[dname])
            # the parameters attnlab trains (an LSTM's frozen bias_hh is not one of them)
            params = [p for p in m.parameters() if p.requires_grad]
            opt = torch.optim.Adam(params, lr=1e-3)
            for L in a.lens:
                src, dec_in, tgt = copy_batch(torch, a.batch, L, V)

                def step():
                    opt.zero_grad(set_to_none=True)
                    loss = F.cross_entropy(m(src, dec_in).reshape(-1, V), tgt.reshape(-1))
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    opt.step()
                med, lo, hi = timeit(step, a.warm, a.reps, a.min_time)
                print(f"{name:<14} {dname:<5} {'train':<7} {L:>4} {a.batch / med:>9.1f} "
                      f"{med * 1e3:>9.2f}  {lo * 1e3:.2f} .. {hi * 1e3:.2f}", flush=True)
            m.eval()  # decoding as a user would run it (nn.Transformer may take its fast path)
            for L in a.infer_lens:
                src, _, _ = copy_batch(torch, a.batch, L, V)
                med, lo, hi = timeit(lambda: m.greedy(src, L), 1, a.reps, a.min_time)
                print(f"{name:<14} {dname:<5} {'decode':<7} {L:>4} {a.batch / med:>9.1f} "
                      f"{med * 1e3:>9.2f}  {lo * 1e3:.2f} .. {hi * 1e3:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
