"""Runs mha.sdpa and mha.attention_weights with the score steps (softcap,
ALiBi, bias, the score_mod region, window, sinks) through mha-run and
compares them with a float64 NumPy reference written from the ops'
description (dialects/MhaAttentionOps.td): one line per case and op,
`<case> <op>: ok` or what differs.

usage: score_steps.py MHA_RUN WORK_DIR [mha-run options...]
"""
import os
import subprocess
import sys

import numpy as np

RTOL = ATOL = 1e-5


def reference(q, k, v, scale, causal=False, bottom_right=False,
              positions=None, mask=None, bias=None, slopes=None, sinks=None,
              window=None, softcap=None, score_mod=None):
    """The outputs [B, H, T, dv] and the probabilities [B, H, T, S].
    `score_mod(s, b, h, p, j)` (b [B, 1, 1], p [B, T, 1], j [1, 1, S]
    arrays, h an int) is the region's formula."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    B, H, T, _ = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    i = np.arange(T)[None, :, None]
    j = np.arange(S)[None, None, :]
    if positions is not None:
        pos = np.asarray(positions, np.int64)[:, None, None] + i
    elif causal and bottom_right:
        pos = np.broadcast_to(i + (S - T), (B, T, 1))
    else:
        pos = np.broadcast_to(i, (B, T, 1))
    allowed = np.ones((B, T, S), bool)
    if causal:
        allowed &= j <= pos
    if window is not None:
        allowed &= j > pos - window
    if mask is not None:
        allowed &= np.broadcast_to(mask, (B, T, S))
    out = np.zeros((B, H, T, v.shape[3]))
    probs = np.zeros((B, H, T, S))
    for h in range(H):
        g = h // (H // Hkv)
        s = q[:, h] @ k[:, g].transpose(0, 2, 1) * scale
        if softcap is not None:
            s = softcap * np.tanh(s / softcap)
        if slopes is not None:
            s = s + np.float64(slopes[h]) * (j - pos)
        if bias is not None:
            b = np.asarray(bias, np.float64)
            s = s + np.broadcast_to(b[:, min(h, b.shape[1] - 1)], (B, T, S))
        if score_mod is not None:
            s = np.broadcast_to(
                score_mod(s, np.arange(B)[:, None, None], h, pos, j),
                (B, T, S))
        s = np.where(allowed, s, -np.inf)
        finite = np.isfinite(s)
        m = np.where(finite, s, -np.inf).max(-1, keepdims=True)
        if sinks is not None:
            m = np.maximum(m, np.float64(sinks[h]))
        m = np.where(np.isfinite(m), m, 0)
        e = np.where(finite, np.exp(np.where(finite, s, 0) - m), 0)
        den = e.sum(-1, keepdims=True)
        if sinks is not None:
            den = den + np.exp(np.float64(sinks[h]) - m)
        p = np.where(finite.any(-1, keepdims=True),
                     e / np.where(den > 0, den, 1), 0)
        probs[:, h] = p
        out[:, h] = p @ v[:, g]
    return out, probs


def ttype(shape, element="f32"):
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), element)


def graph(op, args, clauses, result_shape, region="", captured=()):
    """A function of the named arguments (name, array, element) returning
    one `op`, with `region` (a `score_mod` clause) after its clauses, which
    reads the arguments `captured` (not operands of the op)."""
    params = ", ".join('%%%s: %s {mha.name = "%s"}' % (n, ttype(a.shape, e), n)
                       for n, a, e in list(args) + list(captured))
    operands = [n for n, _, _ in args]
    types = ", ".join(ttype(a.shape, e) for _, a, e in args)
    head = ", ".join("%" + n for n in operands[:3 if op == "sdpa" else 2])
    result = ttype(result_shape)
    return ("func.func @f(%s) -> %s {\n"
            "  %%o = mha.%s %s %s %s : (%s) -> %s\n"
            "  return %%o : %s\n}\n" % (params, result, op, head, clauses,
                                        region, types, result, result))


def run_case(mha_run, work, options, name, B, H, Hkv, T, S, d, seed,
             scale=None, q_gain=1.0, causal=False, bottom_right=False,
             positions=None, mask=None, bias=None, slopes=False, sinks=False,
             window=None, softcap=None, score_mod=None):
    """`score_mod` is (MLIR body, NumPy formula, [(name, array, element)]
    of the function arguments the body reads)."""
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((B, H, T, d)) * q_gain).astype(np.float32)
    k = rng.standard_normal((B, Hkv, S, d)).astype(np.float32)
    v = rng.standard_normal((B, Hkv, S, d)).astype(np.float32)
    slope_values = (rng.uniform(0.05, 0.8, H).astype(np.float32)
                    if slopes else None)
    sink_values = (rng.uniform(-1.0, 2.0, H).astype(np.float32)
                   if sinks else None)
    pos = np.array(positions, np.int64) if positions is not None else None
    eff_scale = scale if scale is not None else 1 / np.sqrt(d)
    # The reference reads the f32 values the graph reads.
    ref_out, ref_probs = reference(
        q, k, v, np.float64(np.float32(eff_scale)), causal, bottom_right, pos,
        mask, bias, slope_values, sink_values, window,
        None if softcap is None else np.float64(np.float32(softcap)),
        None if score_mod is None else score_mod[1])

    clauses = []
    extra = []  # (name, array, element) after q, k (and v), in operand order
    if mask is not None:
        clauses.append("mask(%mask)")
        extra.append(("mask", mask, "i1"))
    if causal:
        if positions is not None:
            clauses.append("causal positions(%pos)")
            extra.append(("pos", pos, "i64"))
        else:
            clauses.append("causal(bottom_right)" if bottom_right else "causal")
    if scale is not None:
        clauses.append("scale(%r)" % float(np.float32(scale)))
    if bias is not None:
        clauses.append("bias(%bias)")
        extra.append(("bias", bias, "f32"))
    if slopes:
        clauses.append("alibi(%slopes)")
        extra.append(("slopes", slope_values, "f32"))
    if sinks:
        clauses.append("sinks(%sinks)")
        extra.append(("sinks", sink_values, "f32"))
    if window is not None:
        clauses.append("window(%d)" % window)
    if softcap is not None:
        clauses.append("softcap(%r)" % float(np.float32(softcap)))
    region, captured = "", []
    if score_mod is not None:
        captured = score_mod[2]
        region = ("score_mod {\n^bb0(%s: f32, %b: index, %h: index, "
                  "%p: index, %j: index):\n" + score_mod[0] + "\n}")

    ok = True
    for op, expect in (("sdpa", ref_out), ("attention_weights", ref_probs)):
        args = [("q", q, "f32"), ("k", k, "f32")]
        if op == "sdpa":
            args.append(("v", v, "f32"))
        args += extra
        base = os.path.join(work, "%s_%s" % (name, op))
        with open(base + ".mlir", "w") as f:
            f.write(graph(op, args, " ".join(clauses), expect.shape, region,
                          captured))
        command = [mha_run, base + ".mlir", "--output", base + ".out.npy"]
        for arg_name, array, _ in args + captured:
            path = "%s.%s.npy" % (base, arg_name)
            np.save(path, array)
            command += ["--input", "%s=%s" % (arg_name, path)]
        done = subprocess.run(command + options, capture_output=True,
                              text=True)
        if done.returncode != 0:
            print("%s %s: mha-run failed: %s" %
                  (name, op, done.stderr.strip().splitlines()[-1:]))
            ok = False
            continue
        got = np.load(base + ".out.npy").astype(np.float64)
        if got.shape != expect.shape:
            print("%s %s: shape %s, expected %s" %
                  (name, op, got.shape, expect.shape))
            ok = False
        elif not np.all(np.isfinite(got)):
            print("%s %s: not finite" % (name, op))
            ok = False
        elif not np.allclose(got, expect, rtol=RTOL, atol=ATOL):
            print("%s %s: max error %g" %
                  (name, op, np.abs(got - expect).max()))
            ok = False
        else:
            print("%s %s: ok" % (name, op))
    return ok


# The score_mod regions of the region cases and their NumPy formulas.
TABLE = np.array([[0.5, -0.25, 1.0, -1.5], [2.0, 0.75, -0.5, 0.0]],
                 np.float32)
DISTANCE_TABLE_BODY = """\
  %back = arith.subi %p, %j : index
  %c3 = arith.constant 3 : index
  %bucket = arith.minui %back, %c3 : index
  %bias = tensor.extract %table[%h, %bucket] : tensor<2x4xf32>
  %r = arith.addf %s, %bias : f32
  mha.yield %r : f32"""


def distance_table(s, b, h, p, j):
    back = p - j
    bucket = np.where(back < 0, 3, np.minimum(back, 3))
    return s + TABLE.astype(np.float64)[h][bucket]


INDICES_BODY = """\
  %c2 = arith.constant 2 : index
  %odd = arith.remui %j, %c2 : index
  %hb = arith.addi %h, %b : index
  %t = arith.addi %hb, %odd : index
  %ti = arith.index_cast %t : index to i64
  %tf = arith.sitofp %ti : i64 to f32
  %quarter = arith.constant 0.25 : f32
  %w = arith.mulf %tf, %quarter : f32
  %one = arith.constant 1.0 : f32
  %g = arith.addf %w, %one : f32
  %r = arith.mulf %s, %g : f32
  mha.yield %r : f32"""


def indices_formula(s, b, h, p, j):
    return s * (1.0 + 0.25 * (h + b + j % 2))


FAR_KEYS_BODY = """\
  %c3 = arith.constant 3 : index
  %edge = arith.addi %j, %c3 : index
  %far = arith.cmpi ult, %edge, %p : index
  %ninf = arith.constant 0xFF800000 : f32
  %r = arith.select %far, %ninf, %s : f32
  mha.yield %r : f32"""


def far_keys_formula(s, b, h, p, j):
    return np.where(j + 3 < p, -np.inf, s)


def main():
    mha_run, work, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)

    def bias_of(shape, seed):
        return np.random.default_rng(seed).standard_normal(shape).astype(
            np.float32)

    # A mask that empties query row 1 of batch 0 (all keys false).
    empty_row = np.ones((2, 4, 6), bool)
    empty_row[0, 1] = False
    empty_row[1, 2, ::2] = False
    # A bias of -inf on every key of query row 2 (and some keys elsewhere).
    neg_inf_bias = bias_of((2, 2, 4, 6), 11)
    neg_inf_bias[:, :, 2] = -np.inf
    neg_inf_bias[1, 0, 0, :3] = -np.inf

    cases = [
        ("softcap", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8, q_gain=4.0,
                         softcap=2.0)),
        ("softcap-causal", dict(B=1, H=2, Hkv=1, T=5, S=5, d=8, q_gain=3.0,
                                causal=True, softcap=1.5)),
        ("alibi", dict(B=2, H=4, Hkv=2, T=4, S=6, d=8, slopes=True)),
        ("alibi-bottom-right", dict(B=1, H=2, Hkv=2, T=3, S=7, d=8,
                                    causal=True, bottom_right=True,
                                    slopes=True)),
        ("bias-BHTS", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8,
                           bias=bias_of((2, 2, 4, 6), 1))),
        ("bias-1HTS", dict(B=2, H=2, Hkv=1, T=4, S=6, d=8,
                           bias=bias_of((1, 2, 4, 6), 2))),
        ("bias-B11S", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8,
                           bias=bias_of((2, 1, 1, 6), 3))),
        ("bias-11TS", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8, causal=True,
                           bias=bias_of((1, 1, 4, 6), 4))),
        ("bias-neg-inf-rows", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8,
                                   bias=neg_inf_bias)),
        ("bias-neg-inf-rows-sinks", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8,
                                         bias=neg_inf_bias, sinks=True)),
        ("window-1", dict(B=1, H=2, Hkv=2, T=5, S=5, d=8, causal=True,
                          window=1)),
        ("window-ge-T", dict(B=1, H=2, Hkv=2, T=5, S=5, d=8, causal=True,
                             window=7)),
        ("window-bottom-right", dict(B=2, H=2, Hkv=1, T=3, S=9, d=8,
                                     causal=True, bottom_right=True,
                                     window=4)),
        ("window-positions", dict(B=2, H=2, Hkv=2, T=2, S=12, d=8,
                                  causal=True, positions=[3, 8], window=3)),
        ("window-positions-decode", dict(B=3, H=4, Hkv=2, T=1, S=10, d=8,
                                         causal=True, positions=[0, 4, 9],
                                         window=4, slopes=True)),
        ("positions-alibi-sinks", dict(B=2, H=2, Hkv=2, T=3, S=9, d=8,
                                       causal=True, positions=[2, 6],
                                       slopes=True, sinks=True)),
        ("sinks", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8, sinks=True)),
        ("sinks-empty-row", dict(B=2, H=2, Hkv=2, T=4, S=6, d=8,
                                 mask=empty_row, sinks=True)),
        ("sinks-causal-scale", dict(B=1, H=2, Hkv=2, T=4, S=4, d=8,
                                    causal=True, scale=0.5, sinks=True)),
        ("all-steps", dict(B=2, H=4, Hkv=2, T=5, S=8, d=8, q_gain=3.0,
                           causal=True, bottom_right=True, scale=0.3,
                           softcap=3.0, slopes=True,
                           bias=bias_of((2, 1, 5, 8), 5), window=3,
                           sinks=True)),
        # The region: a table of one bias per head and distance back to the
        # key, read from a function argument (distances past 3, and the
        # keys after the query, which it also sees, read the last entry).
        ("region-distance-table", dict(
            B=2, H=2, Hkv=1, T=6, S=6, d=8, causal=True,
            score_mod=(DISTANCE_TABLE_BODY, distance_table,
                       [("table", TABLE, "f32")]))),
        # Every argument: the batch element, the head, the key's parity.
        ("region-indices", dict(B=2, H=3, Hkv=3, T=4, S=7, d=8,
                                score_mod=(INDICES_BODY, indices_formula,
                                           []))),
        # −inf from the region removes keys (those more than 3 before the
        # query: a window written as IR), with a cache's positions and one
        # query per sequence (the decoding shapes whose keys are split),
        # and sinks.
        ("region-far-keys-positions", dict(
            B=3, H=4, Hkv=2, T=1, S=10, d=8, causal=True,
            positions=[0, 4, 9], sinks=True,
            score_mod=(FAR_KEYS_BODY, far_keys_formula, []))),
        ("region-causal-positions", dict(
            B=2, H=2, Hkv=2, T=3, S=9, d=8, causal=True, positions=[2, 6],
            score_mod=(INDICES_BODY, indices_formula, []))),
        # After every other step and before the window.
        ("region-after-steps", dict(
            B=2, H=4, Hkv=2, T=5, S=8, d=8, q_gain=3.0, causal=True,
            bottom_right=True, scale=0.3, softcap=3.0, slopes=True,
            bias=bias_of((2, 1, 5, 8), 6), window=3, sinks=True,
            score_mod=(INDICES_BODY, indices_formula, []))),
    ]
    failed = 0
    for seed, (name, kwargs) in enumerate(cases):
        if not run_case(mha_run, work, options, name, seed=seed + 100,
                        **kwargs):
            failed += 1
    del rng
    print("ok" if failed == 0 else "%d cases failed" % failed)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
