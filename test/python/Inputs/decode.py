"""Decoding with a key/value cache from Python (test/python/decode.test).

A prefill then single-token steps through Layer.session() must give, row
by row, the plain causal layer over all the tokens so far; that layer is
computed here in NumPy float64 (independent of mha), per sequence.
"""
import os
import sys

import numpy as np

import mha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import random_weights  # noqa: E402

rng = np.random.default_rng(17)


def weights(d_model, heads, kv_heads, head_dim, value_dim, bias):
    return random_weights(rng, d_model, heads, kv_heads, head_dim, value_dim,
                          bias)


def causal_layer(x, w, heads, kv_heads, head_dim, value_dim):
    """y [T, D] of one sequence x [T, D], in float64: query i attends keys
    j <= i; query head h uses key/value head h // (heads // kv_heads)."""
    x = x.astype(np.float64)
    f = {k: v.astype(np.float64) for k, v in w.items()}
    t = x.shape[0]
    q = (x @ f["w_q"] + f.get("b_q", 0)).reshape(t, heads, head_dim)
    k = (x @ f["w_k"] + f.get("b_k", 0)).reshape(t, kv_heads, head_dim)
    v = (x @ f["w_v"] + f.get("b_v", 0)).reshape(t, kv_heads, value_dim)
    group = heads // kv_heads
    out = np.empty((t, heads, value_dim))
    future = np.triu(np.ones((t, t), bool), 1)
    for h in range(heads):
        s = q[:, h] @ k[:, h // group].T / np.sqrt(head_dim)
        s[future] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out[:, h] = p @ v[:, h // group]
    return out.reshape(t, heads * value_dim) @ f["w_o"] + f.get("b_o", 0)


def decode(name, batch, prefill, steps, d_model, heads, kv_heads=None,
           head_dim=None, value_dim=None, bias=True, starts=None, spare=3,
           borrow=False, **pipeline):
    kv_heads = kv_heads or heads
    head_dim = head_dim or d_model // heads
    value_dim = value_dim or head_dim
    starts = list(starts) if starts else [prefill] * batch
    total = max(prefill, max(starts) + steps)
    capacity = total + spare
    layer = mha.layer(d_model=d_model, heads=heads, kv_heads=kv_heads,
                      head_dim=head_dim, value_dim=value_dim, bias=bias,
                      kv_cache=capacity, **pipeline)
    w = weights(d_model, heads, kv_heads, head_dim, value_dim, bias)
    layer.prepare(**w)
    tokens = rng.uniform(-1, 1, (batch, total, d_model)).astype(np.float32)
    if borrow:
        k_cache = np.full((batch, kv_heads, capacity, head_dim), np.nan,
                          np.float32)
        v_cache = np.full((batch, kv_heads, capacity, value_dim), np.nan,
                          np.float32)
        session = layer.session(batch=batch, k_cache=k_cache, v_cache=v_cache)
    else:
        session = layer.session(batch=batch)
    worst = 0.0
    y0 = session.step(tokens[:, :prefill])
    for b in range(batch):
        want = causal_layer(tokens[b, :prefill], w, heads, kv_heads,
                            head_dim, value_dim)
        worst = max(worst, np.abs(y0[b] - want).max())
    assert list(session.lengths) == [prefill] * batch
    session.lengths = starts
    # Each sequence b continues with tokens[b, starts[b]:].
    for n in range(steps):
        x = np.stack([tokens[b, starts[b] + n][None] for b in range(batch)])
        y = session.step(x)
        for b in range(batch):
            length = starts[b] + n + 1
            want = causal_layer(tokens[b, :length], w, heads, kv_heads,
                                head_dim, value_dim)[-1]
            worst = max(worst, np.abs(y[b, 0] - want).max())
    want_lengths = [s + steps for s in starts]
    print("%s: max abs error %s 1e-5, lengths %s" % (
        name, "<=" if worst <= 1e-5 else ">", list(session.lengths)))
    assert list(session.lengths) == want_lengths
    if borrow:
        # The borrowed arrays are the caches the layer wrote.
        assert session.k_cache is k_cache
        print("%s: borrowed caches written in place: %s" % (
            name, bool(np.isfinite(k_cache[:, :, :min(want_lengths)]).all())))
    return worst


decode("mha", batch=2, prefill=5, steps=6, d_model=16, heads=2)
decode("batch 1, one head, no bias", batch=1, prefill=1, steps=8,
       d_model=8, heads=1, bias=False)
decode("ragged", batch=3, prefill=6, steps=5, d_model=16, heads=4,
       starts=[6, 2, 0])
decode("gqa", batch=2, prefill=4, steps=7, d_model=32, heads=8, kv_heads=2)
decode("gqa, dk != dv, decomposed", batch=2, prefill=3, steps=4, d_model=24,
       heads=6, kv_heads=3, head_dim=8, value_dim=5, attention="decomposed")
decode("borrowed NaN caches", batch=2, prefill=4, steps=4, d_model=16,
       heads=2, borrow=True, starts=[4, 1])

# The plain call of a cache graph: int64 lengths, caches updated in place,
# the lengths not (the caller advances them).
layer = mha.layer(d_model=16, heads=2, kv_cache=6)
w = weights(16, 2, 2, 8, 8, True)
x = rng.uniform(-1, 1, (1, 4, 16)).astype(np.float32)
k_cache = np.zeros((1, 2, 6, 8), np.float32)
v_cache = np.zeros((1, 2, 6, 8), np.float32)
lengths = np.zeros(1, np.int64)
y = layer(x, k_cache=k_cache, v_cache=v_cache, cache_lengths=lengths, **w)
want = causal_layer(x[0], w, 2, 2, 8, 8)
xk = (x[0].astype(np.float64) @ w["w_k"] + w["b_k"]).reshape(4, 2, 8)
print("plain call: y within 1e-5:", bool(np.abs(y[0] - want).max() <= 1e-5))
print("plain call: k_cache rows 0..3 written in place:",
      bool(np.abs(k_cache[0, :, :4] - xk.transpose(1, 0, 2)).max() <= 1e-5),
      "rows 4..5 untouched:", bool((k_cache[0, :, 4:] == 0).all()),
      "lengths unchanged:", lengths.tolist())
sys.stdout.flush()
