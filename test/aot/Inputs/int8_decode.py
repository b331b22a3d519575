"""Checks int8_decode.c's output rows (the plain calls of an int8 cache
layer over a causal reference case) against the float64 causal layers of
test/Inputs/causal_decode_reference.py: within a tenth of the
quantization's own effect (+1e-5 for float32) of the layer with quantized
keys and values, and within 2x the error of quantizing the caches alone of
the exact layer; no NaN.

  int8_decode.py CASE_DIR OUT
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Inputs"))
from causal_decode_reference import WEIGHTS, causal_layer  # noqa: E402


def main():
    case, out = sys.argv[1], sys.argv[2]
    m = json.load(open(os.path.join(case, "meta.json")))
    x = np.load(os.path.join(case, "x.npy"))
    w = {n: np.load(os.path.join(case, n + ".npy")).astype(np.float64)
         for n in WEIGHTS}
    got = np.fromfile(out, dtype=np.float32).reshape(
        m["B"], m["T"], m["D_out"])
    against_quantized = against_exact = quantization = 0.0
    for b in range(m["B"]):
        exact = causal_layer(x[b], w, m["H"], m["Hkv"])
        quant = causal_layer(x[b], w, m["H"], m["Hkv"], quantized=True)
        against_quantized = max(against_quantized,
                                np.abs(got[b] - quant).max())
        against_exact = max(against_exact, np.abs(got[b] - exact).max())
        quantization = max(quantization, np.abs(quant - exact).max())
    ok = (not np.isnan(got).any() and
          against_quantized <= 0.1 * quantization + 1e-5 and
          against_exact <= 2 * quantization)
    print("int8 calls: error against the quantized layer %.2e, against the "
          "exact one %.2e, quantization alone %.2e: %s"
          % (against_quantized, against_exact, quantization,
             "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
