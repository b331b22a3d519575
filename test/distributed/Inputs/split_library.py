"""split_library.py inputs DIR B T D H HKV SEED: a grouped-query layer's full
arrays (x, w_q, ..., b_o) as float32 .npy files in DIR, for mha-run
--inputs and the split library's ranks (split_library.c).
split_library.py reference DIR H HKV RANK0 RANK1 ...: each rank's output
against the layer computed in float64 with NumPy from DIR's arrays (mha-gen's
layer: x @ w + b, softmax(q k^T / sqrt(dk)) v per head, query head i on
key/value head i // (H / HKV)); prints the largest error, exits 1 over 1e-5."""
import os
import sys

import numpy as np


def inputs(folder, b, t, d, h, hkv, seed):
    rng = np.random.default_rng(seed)
    kv = d // h * hkv
    shapes = {"x": (b, t, d), "w_q": (d, d), "w_k": (d, kv), "w_v": (d, kv),
              "w_o": (d, d), "b_q": (d,), "b_k": (kv,), "b_v": (kv,),
              "b_o": (d,)}
    for name, shape in shapes.items():
        array = rng.standard_normal(shape).astype(np.float32) * 0.5
        np.save(os.path.join(folder, name + ".npy"), array)


def reference(folder, h, hkv):
    a = {name: np.load(os.path.join(folder, name + ".npy")).astype(np.float64)
         for name in ("x", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v",
                      "b_o")}
    b, t, d = a["x"].shape
    dk = d // h
    q = (a["x"] @ a["w_q"] + a["b_q"]).reshape(b, t, h, dk)
    k = (a["x"] @ a["w_k"] + a["b_k"]).reshape(b, t, hkv, dk)
    v = (a["x"] @ a["w_v"] + a["b_v"]).reshape(b, t, hkv, dk)
    heads = np.zeros((b, t, h, dk))
    for head in range(h):
        group = head // (h // hkv)
        scores = np.einsum("bqd,bkd->bqk", q[:, :, head], k[:, :, group])
        scores /= np.sqrt(dk)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        heads[:, :, head] = weights @ v[:, :, group]
    return heads.reshape(b, t, d) @ a["w_o"] + a["b_o"]


if sys.argv[1] == "inputs":
    inputs(sys.argv[2], *map(int, sys.argv[3:9]))
    sys.exit(0)
expected = reference(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
failed = False
for index, path in enumerate(sys.argv[5:]):
    error = float(np.max(np.abs(np.load(path) - expected)))
    failed |= not error <= 1e-5
    print(f"rank {index}: max |rank - float64 reference| {error:.1e}: "
          f"{'ok' if error <= 1e-5 else 'FAILED'}")
sys.exit(1 if failed else 0)
