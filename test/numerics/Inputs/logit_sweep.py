#!/usr/bin/python3
"""Softmax at every magnitude of a float32 score, against float64.

Batch element b of one `mha.sdpa` holds the scores of one magnitude X
(from 1e-30 to 3e38) and one sign: query t is a one-hot row of the
identity, so its score with key j is exactly K[j, t] (no rounding in Q·Kᵀ),
and each of the 16 query rows lays the scores out differently: one key
far above the rest, all keys at -X, the largest key in the first or the
last key block, near-ties a few bf16 places apart, both signs at once, a
spread of powers of two, random draws. The expected output is the
float64 softmax of those exact scores times V, and every element must be
within float32 rounding of it: |got - want| <= 1e-5 (V is drawn from
[-1, 1], so the outputs are at most 1 in magnitude). A bf16 sdpa returns
bf16: its outputs may be off by the rounding of that storage too, 2^-8 of
|want|. The inputs are bf16 numbers in both cases, so the reference needs
no rounding of its own.

    logit_sweep.py MHA_RUN DIR --dtype f32|bf16 [--scale S] -- MHA_RUN_OPTIONS

prints one line per failing magnitude and a last line `N passed, M failed`
(exit 1 on a failure, or when mha-run fails).
"""

import argparse
import os
import subprocess
import sys

import numpy as np

QUERIES = 16  # one-hot queries: dk = T
KEYS = 48  # three key blocks of 16
VALUE_DIM = 16
TOLERANCE = 1e-5


def to_bf16(values):
    """float32 values rounded to bf16 (nearest even), kept in float32."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def magnitudes():
    """(X, sign) pairs: 1e-30 to 3.16e38, both signs, X a bf16 number."""
    xs = to_bf16(np.logspace(-30, 38.5, 35).astype(np.float32))
    return [(float(x), sign) for x in xs for sign in (1.0, -1.0)]


def score_rows(x, sign, rng):
    """[QUERIES, KEYS] float32 scores of magnitude x (bf16 numbers)."""
    s = np.float32(sign * x)
    step = np.float32(x * 2.0**-7)  # a bf16 place of x
    rows = np.zeros((QUERIES, KEYS), np.float32)
    rows[0, 0] = s  # one key at s, the rest 0
    rows[1, :] = -np.float32(x)  # every key at -x
    rows[1, 7] = -np.float32(x) + step
    rows[2, :] = s
    rows[2, -1] = s + step  # the largest key in the last block
    rows[3, :] = s - step
    rows[3, 0] = s  # the largest key in the first block
    rows[4, :] = s + step * (np.arange(KEYS) % 4)  # near-ties
    rows[5, :] = np.where(np.arange(KEYS) % 2 == 0, s, -s)  # both signs
    exponents = np.arange(KEYS) % 24
    rows[6, :] = s * np.float32(2.0) ** -exponents.astype(np.float32)
    rows[7, :] = s
    rows[7, 20] = np.float32(1e-30)  # a tiny score among large ones
    for t in range(8, QUERIES):
        rows[t, :] = s * rng.uniform(-1, 1, KEYS).astype(np.float32)
    return to_bf16(rows)


def reference(scores, values, scale):
    """float64 softmax(scores·scale)·values of one batch element."""
    s = scores.astype(np.float64) * scale
    weights = np.exp(s - s.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ values.astype(np.float64)


def write_graph(path, batch, dtype, scale):
    q = f"tensor<{batch}x1x{QUERIES}x{QUERIES}x{dtype}>"
    k = f"tensor<{batch}x1x{KEYS}x{QUERIES}x{dtype}>"
    v = f"tensor<{batch}x1x{KEYS}x{VALUE_DIM}x{dtype}>"
    o = f"tensor<{batch}x1x{QUERIES}x{VALUE_DIM}x{dtype}>"
    out = f"tensor<{batch}x1x{QUERIES}x{VALUE_DIM}xf32>"
    scale_attr = f" scale({scale:.9e})" if scale is not None else ""
    # A bf16 sdpa returns bf16, widened for mha-run, which returns f32.
    widen = (f"  %w = arith.extf %o : {o} to {out}\n" if dtype == "bf16"
             else "")
    result = "%w" if dtype == "bf16" else "%o"
    with open(path, "w") as f:
        f.write(
            f'func.func @sweep(%q: {q} {{mha.name = "q"}}, '
            f'%k: {k} {{mha.name = "k"}}, %v: {v} {{mha.name = "v"}}) '
            f"-> {out} {{\n"
            f"  %o = mha.sdpa %q, %k, %v{scale_attr} : ({q}, {k}, {v}) -> {o}\n"
            f"{widen}  return {result} : {out}\n}}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mha_run")
    parser.add_argument("dir")
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--scale", type=float, default=None,
                        help="the sdpa's scale (default: 1/sqrt(dk))")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    options = argv[split + 1:]
    args = parser.parse_args(argv[:split])

    cases = magnitudes()
    batch = len(cases)
    rng = np.random.default_rng(3)
    k = np.stack([score_rows(x, sign, rng).T for x, sign in cases])
    q = np.broadcast_to(np.eye(QUERIES, dtype=np.float32),
                        (batch, QUERIES, QUERIES))
    v = to_bf16(rng.uniform(-1, 1, (batch, KEYS, VALUE_DIM)))
    scale = args.scale if args.scale is not None else QUERIES**-0.5

    os.makedirs(args.dir, exist_ok=True)
    graph = os.path.join(args.dir, "sweep.mlir")
    write_graph(graph, batch, args.dtype, args.scale)
    inputs = {"q": q, "k": k, "v": v}
    command = [args.mha_run, graph]
    for name, array in inputs.items():
        path = os.path.join(args.dir, name + ".npy")
        np.save(path, np.ascontiguousarray(array[:, None], np.float32))
        command += ["--input", f"{name}={path}"]
    output = os.path.join(args.dir, "out.npy")
    command += ["--output", output] + options
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stdout.write(run.stdout + run.stderr)
        print(f"mha-run exited with {run.returncode}")
        return 1
    got = np.load(output)[:, 0]

    storage = 2.0**-8 if args.dtype == "bf16" else 0.0
    failed = 0
    for b, (x, sign) in enumerate(cases):
        want = reference(k[b].T, v[b], scale)
        bound = TOLERANCE + storage * np.abs(want)
        error = np.abs(got[b].astype(np.float64) - want) - bound + TOLERANCE
        error[np.isnan(error)] = np.inf
        if error.max() > TOLERANCE:
            failed += 1
            row = int(np.argmax(error.max(axis=1)))
            print(f"scores of magnitude {sign * x:.3e}: max abs error "
                  f"{error.max():.3e} past the bound in query row {row} "
                  f"(got {got[b, row, :3]}, want {want[row, :3]})")
    print(f"{batch - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
