"""The mha that pip installed (test/python/pip-install.test): it is the
copy under the install folder, not build/python, and a small layer on it
equals NumPy's float64 attention."""
import os
import sys

import numpy as np

import mha

target = os.path.realpath(sys.argv[1])
print("imported from the install folder:",
      os.path.realpath(mha.__file__).startswith(target + os.sep))
print("module from the install folder:",
      os.path.realpath(mha._mha.__file__).startswith(target + os.sep))

rng = np.random.default_rng(5)
B, T, D, H = 2, 7, 16, 4
layer = mha.layer(d_model=D, heads=H, causal=True)
a = {name: rng.uniform(-0.5, 0.5, (B, T, D) if name == "x" else shape)
     .astype(np.float32) for name, shape, _ in layer.arguments}
y = layer(**a)

f = {k: v.astype(np.float64) for k, v in a.items()}
dk = D // H


def heads(w, b):
    return (f["x"] @ f[w] + f[b]).reshape(B, T, H, dk).transpose(0, 2, 1, 3)


q, k, v = heads("w_q", "b_q"), heads("w_k", "b_k"), heads("w_v", "b_v")
s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
s[..., np.triu(np.ones((T, T), bool), 1)] = -np.inf
p = np.exp(s - s.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
want = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ f["w_o"] + f["b_o"]
print("y", y.shape, "within 1e-5 of NumPy float64:",
      bool(np.abs(y - want).max() <= 1e-5))
