"""Runs an mha.attention layer with a score_mod region (a bias per head and
distance back to the key, read from a table argument, and one per batch
element on the odd keys) through mha-run, in
f32 and in bf16, and compares it with a float64 NumPy layer written from the
op's description: one line per case, `<case>: ok` or what differs.

usage: layer_score_mod.py MHA_RUN WORK_DIR [mha-run options...]
"""
import os
import subprocess
import sys

import numpy as np

B, T, D, H = 2, 32, 64, 2
DK = D // H
TABLE = np.array([[1.5, -0.5, 0.25, -1.0], [-2.0, 1.0, 0.5, 0.0]], np.float32)
BODY = """\
  ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
    %back = arith.subi %p, %j : index
    %c3 = arith.constant 3 : index
    %bucket = arith.minui %back, %c3 : index
    %bias = tensor.extract %table[%h, %bucket] : tensor<2x4xf32>
    %biased = arith.addf %s, %bias : f32
    %c2 = arith.constant 2 : index
    %odd = arith.remui %j, %c2 : index
    %bodd = arith.muli %b, %odd : index
    %bi = arith.index_cast %bodd : index to i64
    %bf = arith.sitofp %bi : i64 to f32
    %quarter = arith.constant 0.75 : f32
    %shift = arith.mulf %bf, %quarter : f32
    %r = arith.addf %biased, %shift : f32
    mha.yield %r : f32"""


def round_bf16(a):
    """The nearest bf16 values (ties to even), as float32."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(
        np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def reference(x, wq, wk, wv, wo, region=True):
    """The causal layer of H heads, the region's bias added to the scaled
    scores."""
    x, wq, wk, wv, wo = (np.asarray(a, np.float64) for a in (x, wq, wk, wv,
                                                            wo))
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    back = i - j
    bucket = np.where(back < 0, 3, np.minimum(back, 3))
    heads = []
    for h in range(H):
        cols = slice(h * DK, (h + 1) * DK)
        q, k, v = x @ wq[:, cols], x @ wk[:, cols], x @ wv[:, cols]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(DK)
        if region:
            s = s + TABLE.astype(np.float64)[h][bucket]
            s = s + 0.75 * np.arange(B)[:, None, None] * (j % 2)
        s = np.where(j <= i, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        heads.append(e / e.sum(-1, keepdims=True) @ v)
    return np.concatenate(heads, -1) @ wo


def graph(element):
    x = "tensor<%dx%dx%dx%s>" % (B, T, D, element)
    w = "tensor<%dx%dx%s>" % (D, D, element)
    y = "tensor<%dx%dx%dxf32>" % (B, T, D)
    return ("func.func @layer(%%x: %s {mha.name = \"x\"}, "
            "%%wq: %s {mha.name = \"w_q\"}, %%wk: %s {mha.name = \"w_k\"}, "
            "%%wv: %s {mha.name = \"w_v\"}, %%wo: %s {mha.name = \"w_o\"}, "
            "%%table: tensor<2x4xf32> {mha.name = \"table\"}) -> %s {\n"
            "  %%y = mha.attention %%x weights(%%wq, %%wk, %%wv, %%wo) "
            "heads(%d) causal score_mod {\n%s\n  } : (%s, %s, %s, %s, %s) -> "
            "%s\n  return %%y : %s\n}\n" % (x, w, w, w, w, y, H, BODY, x, w,
                                           w, w, w, y, y))


def main():
    mha_run, work, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    inputs = {"x": rng.standard_normal((B, T, D)).astype(np.float32)}
    for name in ("w_q", "w_k", "w_v", "w_o"):
        inputs[name] = (rng.standard_normal((D, D)) / np.sqrt(D)).astype(
            np.float32)
    inputs["w_q"] *= 4  # scores of a few units, which the table moves
    inputs["table"] = TABLE
    failed = 0
    for element in ("f32", "bf16"):
        base = os.path.join(work, "layer_" + element)
        with open(base + ".mlir", "w") as f:
            f.write(graph(element))
        command = [mha_run, base + ".mlir", "--output", base + ".out.npy"]
        for name, array in inputs.items():
            path = "%s.%s.npy" % (base, name)
            np.save(path, array)
            command += ["--input", "%s=%s" % (name, path)]
        done = subprocess.run(command + options, capture_output=True,
                              text=True)
        if done.returncode != 0:
            print("%s: mha-run failed: %s" %
                  (element, done.stderr.strip().splitlines()[-1:]))
            failed += 1
            continue
        got = np.load(base + ".out.npy").astype(np.float64)
        layer = [inputs[n] for n in ("x", "w_q", "w_k", "w_v", "w_o")]
        if element == "bf16":
            layer = [round_bf16(a) for a in layer]
        expect = reference(*layer)
        error = np.abs(got - expect).max()
        # What the region moves: a bound that ignored it would fail.
        effect = np.abs(reference(*layer, region=False) - expect).max()
        # bf16 rounds the projections it stores (Q, K, V, the heads) too.
        bound = 1e-5 * (1 + np.abs(expect).max()) if element == "f32" else \
            2e-2 * np.abs(expect).max()
        if error > bound or effect < 5 * bound:
            print("%s: max error %g (bound %g), the region moves %g" %
                  (element, error, bound, effect))
            failed += 1
        else:
            print("%s: ok" % element)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
