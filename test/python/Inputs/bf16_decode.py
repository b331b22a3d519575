"""Decoding with bf16 key/value caches from Python (test/python/bf16-cache.test).

mha.layer(kv_cache=C, dtype="bf16") stores its caches in bfloat16: a session
allocates them as uint16 arrays of bf16 bits (or borrows the caller's), and
each step writes the new keys and values into them, rounded. Every output
row is compared with NumPy float64 references computed here, per sequence:

- "stored": the causal layer on the bf16-rounded tokens and weights, with
  the keys and values rounded to bf16 as the cache stores them: what the
  layer computes, up to float32 arithmetic (within 1e-4);
- "exact": the same layer on the unrounded float32 values. The bf16
  accuracy rule (test/bf16/accuracy.test): mha's error against it is at
  most 1.5 times the storage error, that of float64 arithmetic on what bf16
  stores (here the tokens, the weights and the cached keys and values).

The caches themselves hold the bf16 keys and values (within one bf16 step
of the float64 ones, rounded here by bit arithmetic independent of the
runtime's). The rounding in this file is its own: it must not share code
with the layer.
"""
import os
import sys

import numpy as np

import mha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import random_weights  # noqa: E402

rng = np.random.default_rng(29)
failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s: %s%s" % (what, "ok" if ok else "FAILED", detail))
    failures += not ok


def round_bf16(a):
    """float64/float32 -> nearest bfloat16 (ties to even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def weights(d_model, heads, kv_heads, dk, dv):
    return random_weights(rng, d_model, heads, kv_heads, dk, dv)


def causal_layer(x, w, heads, kv_heads, dk, dv, stored):
    """y [T, D] of one sequence x [T, D] in float64, and its keys and values
    [Hkv, T, d]; `stored`: x, the weights and the keys and values rounded
    to bf16 first."""
    rnd = round_bf16 if stored else (lambda a: np.asarray(a, np.float64))
    x = rnd(x)
    f = {k: rnd(v) for k, v in w.items()}
    t = x.shape[0]
    q = (x @ f["w_q"] + f["b_q"]).reshape(t, heads, dk)
    k = rnd(x @ f["w_k"] + f["b_k"]).reshape(t, kv_heads, dk)
    v = rnd(x @ f["w_v"] + f["b_v"]).reshape(t, kv_heads, dv)
    group = heads // kv_heads
    out = np.empty((t, heads, dv))
    future = np.triu(np.ones((t, t), bool), 1)
    for h in range(heads):
        s = q[:, h] @ k[:, h // group].T / np.sqrt(dk)
        s[future] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out[:, h] = p @ v[:, h // group]
    y = out.reshape(t, heads * dv) @ f["w_o"] + f["b_o"]
    return y, k.transpose(1, 0, 2), v.transpose(1, 0, 2)


def decode(name, batch, prefill, steps, d_model, heads, kv_heads=None,
           dk=None, dv=None, starts=None, borrow=False, **pipeline):
    kv_heads = kv_heads or heads
    dk = dk or d_model // heads
    dv = dv or dk
    starts = list(starts) if starts else [prefill] * batch
    total = max(prefill, max(starts) + steps)
    capacity = total + 2
    layer = mha.layer(d_model=d_model, heads=heads, kv_heads=kv_heads,
                      head_dim=dk, value_dim=dv, kv_cache=capacity,
                      dtype="bf16", **pipeline)
    w = weights(d_model, heads, kv_heads, dk, dv)
    layer.prepare(**w)
    tokens = rng.uniform(-1, 1, (batch, total, d_model)).astype(np.float32)
    if borrow:
        # NaN bits: a row the layer read before writing would show.
        k_cache = np.full((batch, kv_heads, capacity, dk), 0x7FC0, np.uint16)
        v_cache = np.full((batch, kv_heads, capacity, dv), 0x7FC0, np.uint16)
        session = layer.session(batch=batch, k_cache=k_cache, v_cache=v_cache)
        check("%s: borrowed caches kept" % name,
              session.k_cache is k_cache and session.v_cache is v_cache)
    else:
        session = layer.session(batch=batch)
    check("%s: the session's caches are bf16 bits" % name,
          session.k_cache.dtype == np.uint16
          and session.k_cache.shape == (batch, kv_heads, capacity, dk)
          and session.v_cache.shape == (batch, kv_heads, capacity, dv))
    worst_stored, worst, worst_exact = 0.0, 0.0, 0.0

    def compare(b, got, length, rows):
        nonlocal worst_stored, worst, worst_exact
        seq = tokens[b, :length]
        stored, _, _ = causal_layer(seq, w, heads, kv_heads, dk, dv, True)
        exact, _, _ = causal_layer(seq, w, heads, kv_heads, dk, dv, False)
        worst_stored = max(worst_stored, np.abs(got - stored[rows]).max())
        worst = max(worst, np.abs(got - exact[rows]).max())
        # The storage error: float64 arithmetic on what bf16 stores.
        worst_exact = max(worst_exact, np.abs(stored[rows] - exact[rows]).max())

    y = session.step(tokens[:, :prefill])
    for b in range(batch):
        compare(b, y[b], prefill, slice(0, prefill))
    session.lengths = starts
    for n in range(steps):
        x = np.stack([tokens[b, starts[b] + n][None] for b in range(batch)])
        y = session.step(x)
        for b in range(batch):
            compare(b, y[b, 0], starts[b] + n + 1, -1)
    check("%s: within 1e-4 of the bf16-stored reference" % name,
          worst_stored <= 1e-4, " (%.2e)" % worst_stored)
    ratio = worst / worst_exact
    check("%s: error <= 1.5x the bf16 storage error" % name,
          ratio <= 1.5 and np.isfinite(ratio), " (%.2f)" % ratio)
    # The caches hold each sequence's bf16 keys and values.
    lengths = session.lengths
    check("%s: lengths" % name, lengths.tolist() == [s + steps for s in starts],
          " %s" % lengths.tolist())
    step = 0.0
    for b in range(batch):
        _, k, v = causal_layer(tokens[b, :lengths[b]], w, heads, kv_heads, dk,
                               dv, True)
        for cache, want in ((session.k_cache, k), (session.v_cache, v)):
            got = mha.from_bf16_bits(cache[b, :, :lengths[b]]).astype(np.float64)
            # One bf16 step at most: float32 and float64 sums may round to
            # neighbouring bf16 values.
            ulp = np.maximum(np.abs(want), 1e-30) * 2.0 ** -7
            step = max(step, (np.abs(got - want) / ulp).max())
    check("%s: caches hold the bf16 keys and values" % name, step <= 1.0,
          " (%.2f bf16 steps at most)" % step)


decode("mha", batch=2, prefill=5, steps=6, d_model=16, heads=2)
decode("ragged, fused", batch=3, prefill=6, steps=5, d_model=32, heads=4,
       starts=[6, 2, 0], attention="fused")
decode("gqa, dk != dv, decomposed", batch=2, prefill=3, steps=4, d_model=24,
       heads=6, kv_heads=3, dk=8, dv=4, attention="decomposed")
decode("borrowed NaN caches", batch=2, prefill=4, steps=4, d_model=16,
       heads=2, borrow=True, starts=[4, 1])

# mha.to_bf16_bits rounds as the layer does: nearest, ties to even, the
# signs, infinities and NaN kept.
values = np.array([1.0, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -2.5, np.inf,
                   -np.inf, 3.0e38], np.float32)
bits = mha.to_bf16_bits(values)
check("to_bf16_bits", bits.dtype == np.uint16 and bits.tolist() ==
      [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0xFF80, 0x7F62],
      " %s" % [hex(b) for b in bits.tolist()])
check("from_bf16_bits", mha.from_bf16_bits(bits).tolist() ==
      round_bf16(values).astype(np.float32).tolist())
# The bits start on a cache line: the layer's bf16 copies of its float32
# arguments are made the same way, and its AMX tiles read them in place.
check("to_bf16_bits starts on a cache line",
      mha.to_bf16_bits(np.ones((300, 301), np.float32)).ctypes.data % 64 == 0)
check("to_bf16_bits of NaN is NaN",
      bool(np.isnan(mha.from_bf16_bits(mha.to_bf16_bits(
          np.array([np.nan], np.float32))))[0]))

# The refusals: a bf16 cache is the caller's uint16 array, updated in
# place, so float32 (which would need a rounded copy) and a strided view
# are ValueErrors, with the tools' words.
layer = mha.layer(d_model=16, heads=2, kv_cache=8, dtype="bf16")
layer.prepare(**weights(16, 2, 2, 8, 8))
x = np.zeros((1, 1, 16), np.float32)
good = np.zeros((1, 2, 8, 8), np.uint16)
lengths = np.zeros(1, np.int64)
for label, k_cache in (
        ("float32", np.zeros((1, 2, 8, 8), np.float32)),
        ("strided", np.zeros((1, 2, 8, 16), np.uint16)[..., ::2]),
        ("read-only", np.zeros((1, 2, 8, 8), np.uint16)),
        ("wrong shape", np.zeros((1, 2, 8, 4), np.uint16))):
    if label == "read-only":
        k_cache.flags.writeable = False
    try:
        layer(x, k_cache=k_cache, v_cache=good, cache_lengths=lengths)
        print("%s: no error" % label)
        failures += 1
    except ValueError as error:
        print("%s: ValueError: %s" % (label, error))
# A NumPy scalar gives a scalar, a 0-d array a 0-d array, as NumPy's own
# functions do; the bits of 1.0 and of 1.5 are 0x3F80 and 0x3FC0.
one = mha.to_bf16_bits(np.float32(1.0))
check("to_bf16_bits of a float32 scalar",
      type(one) is np.uint16 and one == 0x3F80, " %r" % (one,))
half = mha.to_bf16_bits(np.array(1.5, np.float32))
check("to_bf16_bits of a 0-d array",
      half.shape == () and half.dtype == np.uint16 and half == 0x3FC0,
      " %r" % (half,))
check("from_bf16_bits of a uint16 scalar",
      mha.from_bf16_bits(np.uint16(0x3FC0)) == 1.5)
for label, value in (("to_bf16_bits of float64", np.zeros(2)),
                     ("to_bf16_bits of a float64 scalar", np.float64(1.0)),
                     ("to_bf16_bits of a float", 1.0),
                     ("to_bf16_bits of a list", [1.0])):
    try:
        mha.to_bf16_bits(value)
        print("%s: no error" % label)
        failures += 1
    except ValueError as error:
        print("%s: ValueError: %s" % (label, error))
try:
    mha.from_bf16_bits(np.zeros(2, np.float32))
    failures += 1
except ValueError as error:
    print("from_bf16_bits of float32: ValueError: %s" % error)

sys.stdout.flush()
sys.exit(1 if failures else 0)
