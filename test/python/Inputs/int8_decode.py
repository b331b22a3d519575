"""Decoding with int8 key/value caches from Python (test/python/int8-cache.test).

A session of mha.layer(kv_cache=C, cache_dtype="int8") keeps int8 codes
and float32 scales; its prefill and single-token steps are checked against
the float64 causal layer of test/Inputs/causal_decode_reference.py (written
from the definitions, independent of mha): within a tenth of the
quantization's own effect of the quantized layer (+1e-5 for float32), and
within 2x the error of quantizing the caches alone of the exact layer; the
codes and scales it stores are the formula's.
"""
import os
import sys

import numpy as np

import mha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import (  # noqa: E402
    causal_layer, project, quantize, random_weights)

rng = np.random.default_rng(23)


def weights(d_model, heads, kv_heads, head_dim):
    return random_weights(rng, d_model, heads, kv_heads, head_dim)


def decode(name, batch, prefill, steps, d_model, heads, kv_heads, borrow=False,
           **pipeline):
    head_dim = d_model // heads
    capacity = prefill + steps + 2
    layer = mha.layer(d_model=d_model, heads=heads, kv_heads=kv_heads,
                      kv_cache=capacity, cache_dtype="int8", **pipeline)
    w = weights(d_model, heads, kv_heads, head_dim)
    layer.prepare(**w)
    w64 = {k: v.astype(np.float64) for k, v in w.items()}
    tokens = rng.uniform(-1, 1, (batch, prefill + steps, d_model)).astype(
        np.float32)
    lent = {}
    if borrow:
        # NaN scales: a read of the unused capacity would show.
        for cache in ("k", "v"):
            lent[cache + "_cache"] = np.zeros(
                (batch, kv_heads, capacity, head_dim), np.int8)
            lent[cache + "_scales"] = np.full((batch, kv_heads, capacity),
                                              np.nan, np.float32)
    session = layer.session(batch=batch, **lent)
    print("%s: caches %s %s, scales %s %s" % (
        name, session.k_cache.dtype, list(session.k_cache.shape),
        session.k_scales.dtype, list(session.k_scales.shape)))
    rows = [session.step(tokens[:, :prefill])]
    for n in range(steps):
        rows.append(session.step(tokens[:, prefill + n:prefill + n + 1]))
    got = np.concatenate(rows, axis=1)
    against_quantized = against_exact = quantization = 0.0
    for b in range(batch):
        exact = causal_layer(tokens[b], w64, heads, kv_heads)
        quant = causal_layer(tokens[b], w64, heads, kv_heads, quantized=True)
        against_quantized = max(against_quantized,
                                np.abs(got[b] - quant).max())
        against_exact = max(against_exact, np.abs(got[b] - exact).max())
        quantization = max(quantization, np.abs(quant - exact).max())
    print("%s: computes the quantized layer: %s" % (
        name, "ok" if against_quantized <= 0.1 * quantization + 1e-5
        else "FAILED %.2e (quantization %.2e)" % (against_quantized,
                                                  quantization)))
    print("%s: error <= 2x quantizing the caches alone: %s" % (
        name, "ok" if against_exact <= 2 * quantization else "FAILED"))
    # The stored codes and scales of the keys, from the formula.
    length = prefill + steps
    worst_scale, codes_off = 0.0, 0
    for b in range(batch):
        codes, scales = quantize(project(tokens[b], w64, kv_heads, "k"))
        stored = session.k_scales[b, :, :length].astype(np.float64)
        worst_scale = max(worst_scale,
                          (np.abs(stored - scales) / scales).max())
        codes_off += int((np.abs(session.k_cache[b, :, :length] - codes)
                          > 1).sum())
    print("%s: stored keys are the formula's: %s" % (
        name, "ok" if worst_scale <= 1e-5 and codes_off == 0 else "FAILED"))
    print("%s: lengths %s" % (name, list(session.lengths)))
    if borrow:
        print("%s: borrowed arrays written in place: %s" % (
            name, session.k_scales is lent["k_scales"] and
            bool(np.isfinite(lent["v_scales"][:, :, :length]).all())))


decode("mha", batch=2, prefill=6, steps=4, d_model=32, heads=4, kv_heads=4)
decode("gqa, decomposed", batch=1, prefill=9, steps=3, d_model=32, heads=4,
       kv_heads=2, attention="decomposed")
decode("borrowed", batch=2, prefill=5, steps=3, d_model=16, heads=2,
       kv_heads=1, borrow=True)


def attempt(label, action):
    try:
        action()
        print("%s: no error" % label)
    except (TypeError, ValueError) as error:
        print("%s: %s: %s" % (label, type(error).__name__, error))


int8 = mha.layer(d_model=16, heads=2, kv_cache=8, cache_dtype="int8")
f32 = mha.layer(d_model=16, heads=2, kv_cache=8)
attempt("scales for an f32 cache",
        lambda: f32.session(batch=1, k_scales=np.zeros((1, 2, 8), np.float32)))
attempt("scales of the wrong shape",
        lambda: int8.session(batch=1, k_scales=np.zeros((1, 2, 4), np.float32)))
attempt("float32 codes", lambda: int8(
    np.zeros((1, 1, 16), np.float32),
    **weights(16, 2, 2, 8), k_cache=np.zeros((1, 2, 8, 8), np.float32),
    v_cache=np.zeros((1, 2, 8, 8), np.int8),
    k_scales=np.zeros((1, 2, 8), np.float32),
    v_scales=np.zeros((1, 2, 8), np.float32),
    cache_lengths=np.zeros(1, np.int64)))
attempt("cache_dtype int4",
        lambda: mha.layer(d_model=16, heads=2, kv_cache=8, cache_dtype="int4"))
