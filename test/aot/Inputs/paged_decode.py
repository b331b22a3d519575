"""The inputs and the check of Inputs/paged_decode.c (test/aot/paged-decode.test).

  paged_decode.py make DIR          writes DIR/x.npy [4, 40, 32] and weights
  paged_decode.py check DIR Y [bf16]  compares Y with the float64 layer

The rows paged_decode.c writes for each of the four sequences (40, 32, 8
and 40 rows) are compared with the float64 causal layer of that sequence's
own tokens, test/Inputs/causal_decode_reference.py (written from the
definitions, independent of mha); with `bf16`, with the layer on what bf16
stores (x, the weights, the cached keys and values rounded to bf16 here,
by bit arithmetic of this file's own).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import WEIGHTS, causal_layer  # noqa: E402

HEADS, KV_HEADS, D_MODEL = 4, 2, 32
# The rows of sequences 0, 1, the new 1 and 2 that paged_decode.c decodes.
ROWS = (40, 32, 8, 40)


def make(folder):
    rng = np.random.default_rng(37)

    def r(*shape, scale=1.0):
        return (rng.uniform(-1, 1, shape) * scale).astype(np.float32)
    inner = HEADS * (D_MODEL // HEADS)
    kv = KV_HEADS * (D_MODEL // HEADS)
    arrays = {"x": r(4, 40, D_MODEL),
              "w_q": r(D_MODEL, inner, scale=D_MODEL ** -0.5),
              "w_k": r(D_MODEL, kv, scale=D_MODEL ** -0.5),
              "w_v": r(D_MODEL, kv, scale=D_MODEL ** -0.5),
              "w_o": r(inner, D_MODEL, scale=inner ** -0.5),
              "b_q": r(inner, scale=0.1), "b_k": r(kv, scale=0.1),
              "b_v": r(kv, scale=0.1), "b_o": r(D_MODEL, scale=0.1)}
    os.makedirs(folder, exist_ok=True)
    for name, array in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), array)


def round_bf16(a):
    """Nearest bfloat16 (ties to even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def stored_layer(x, w):
    """The float64 causal layer on what a bf16 layer stores."""
    x, f = round_bf16(x), {k: round_bf16(v) for k, v in w.items()}
    t, group = x.shape[0], HEADS // KV_HEADS
    q = (x @ f["w_q"] + f["b_q"]).reshape(t, HEADS, -1)
    k = round_bf16(x @ f["w_k"] + f["b_k"]).reshape(t, KV_HEADS, -1)
    v = round_bf16(x @ f["w_v"] + f["b_v"]).reshape(t, KV_HEADS, -1)
    out = []
    for h in range(HEADS):
        s = q[:, h] @ k[:, h // group].T / np.sqrt(q.shape[2])
        s[np.triu(np.ones((t, t), bool), 1)] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out.append((p / p.sum(axis=1, keepdims=True)) @ v[:, h // group])
    return np.concatenate(out, axis=1) @ f["w_o"] + f["b_o"]


def check(folder, path, bf16):
    x = np.load(os.path.join(folder, "x.npy"))
    w = {name: np.load(os.path.join(folder, name + ".npy")).astype(
        np.float64) for name in WEIGHTS}
    y = np.fromfile(path, np.float32).reshape(x.shape)
    worst, tolerance = 0.0, 1e-4 if bf16 else 1e-5
    for s, rows in enumerate(ROWS):
        if bf16:
            expected = stored_layer(x[s, :rows], w)
        else:
            expected = causal_layer(x[s, :rows], w, HEADS, KV_HEADS)
        worst = max(worst, np.abs(y[s, :rows] - expected).max())
    print("paged calls: %d rows, max abs error %.1e: %s" % (
        sum(ROWS), worst, "ok" if worst <= tolerance else "FAILED"))
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], "bf16" in sys.argv[4:]))
