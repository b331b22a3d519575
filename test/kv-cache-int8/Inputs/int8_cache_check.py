#!/usr/bin/env python3
"""Checks decoding with int8 key/value caches against float64 NumPy.

For each case folder that KvCacheInt8Test wrote (MHA_KV_DUMP_DIR): tokens
[B, total, D], the weights and biases, starts [B] (where each sequence's
steps begin), sizes [H, Hkv, T0], lengths [B] (the tokens each sequence held
after the last step), the outputs prefill [B, T0, D] and steps [N, B, D],
and the caches as the steps left them: k_cache, v_cache [B, Hkv, C, d]
(int8) and k_scales, v_scales [B, Hkv, C].

Everything here is written from the definition of the int8 cache, in
float64, sharing no code with the compiler (test/Inputs/
causal_decode_reference.py): each key or value row x of a head is stored as
scale = max|x| / 127 and codes round_half_even(x / scale) clamped to
[-127, 127] (0 for a row of zeros), and attention reads codes * scale. Two
references per row:

- exact: the causal layer with unquantized keys and values;
- quantized: the same with every key and value row quantized as above.

The rules, each of which a wrong layer breaks:

1. The stored caches are the formula's: every scale within 1e-5 (relative)
   of the float64 one, every code equal, or one step away where x / scale
   is within 1e-3 of a tie (the layer's keys are float32 products).
2. The layer computes the quantized attention: its error against the
   quantized reference is at most a tenth of the quantization's own effect
   (max |quantized - exact|) plus 1e-5 (float32 rounding). A layer that
   did not quantize would be off by about the quantization's effect.
3. Accuracy: the layer's error against the exact float64 layer is at most
   2x that of quantizing the caches alone (max |quantized - exact|).

Prints one line per case with the figures; exits 1 if any rule fails.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import (check_folders, project,  # noqa: E402
                                     quantize)


def check_cache(codes, scales, x, w, kv_heads, name, length):
    """Rule 1 for one sequence's cache of `name` (k or v)."""
    rows = project(x[:length], w, kv_heads, name)
    want_codes, want_scales = quantize(rows)
    got_scales = scales[:, :length].astype(np.float64)
    scale_error = (np.abs(got_scales - want_scales) /
                   np.maximum(want_scales, 1e-30)).max()
    got_codes = codes[:, :length].astype(np.float64)
    ratio = rows / np.where(want_scales == 0, 1.0,
                            want_scales)[..., None]
    near_tie = np.abs(np.abs(ratio - np.floor(ratio)) - 0.5) < 1e-3
    off = np.abs(got_codes - want_codes)
    codes_ok = ((off == 0) | ((off == 1) & near_tie)).all()
    return scale_error <= 1e-5 and codes_ok, scale_error, int((off != 0).sum())


def check(case):
    lengths = case.load("lengths")
    against_quantized = against_exact = quantization = 0.0
    for got, tokens, first in case.rows():
        exact = case.reference(tokens, first)
        quant = case.reference(tokens, first, quantized=True)
        against_quantized = max(against_quantized, np.abs(got - quant).max())
        against_exact = max(against_exact, np.abs(got - exact).max())
        quantization = max(quantization, np.abs(quant - exact).max())
    caches_ok, worst_scale, flipped = True, 0.0, 0
    for b in range(case.tokens.shape[0]):
        for name in ("k", "v"):
            ok, scale_error, off = check_cache(
                case.load(name + "_cache")[b], case.load(name + "_scales")[b],
                case.tokens[b], case.weights, case.kv_heads, name,
                int(lengths[b]))
            caches_ok &= ok
            worst_scale = max(worst_scale, scale_error)
            flipped += off
    computes = against_quantized <= 0.1 * quantization + 1e-5
    accurate = against_exact <= 2 * quantization
    ok = caches_ok and computes and accurate
    print("%s: caches %s (scales within %.1e, %d codes one step off at a "
          "tie); error against the quantized reference %.2e, against the "
          "exact one %.2e, quantization alone %.2e (%.2fx): %s"
          % (case.name, "ok" if caches_ok else "WRONG",
             worst_scale, flipped, against_quantized, against_exact,
             quantization, against_exact / quantization,
             "ok" if ok else "FAILED"))
    return ok


if __name__ == "__main__":
    sys.exit(check_folders(sys.argv[1], check))
