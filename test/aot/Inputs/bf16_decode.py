"""Checks bf16_decode.c's output rows (a bf16 cache layer's session over a
causal reference case) with the accuracy rule of bf16 layers:
the max abs error against the float64 reference of the case's float32
inputs is at most 1.5 times that of the float64 reference computed on the
inputs and weights rounded to bf16 here (NumPy bit arithmetic, ties to
even, independent of the library), and no NaN.

  bf16_decode.py CASE_DIR OUT
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "differential"))
from differential import reference  # noqa: E402

NAMES = ("x", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")


def round_bf16(a):
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    bits = bits.astype(np.uint64)
    return ((((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16)
            .astype(np.uint32).view(np.float32))


def main():
    case, out = sys.argv[1], sys.argv[2]
    m = json.load(open(os.path.join(case, "meta.json")))
    config = {"B": m["B"], "T": m["T"], "S": m["S"], "D": m["D"],
              "Dkv": m["D_kv"], "Dout": m["D_out"], "H": m["H"],
              "Hkv": m["Hkv"], "dk": m["dk"], "dv": m["dv"], "causal": True,
              "causal_bottom_right": False, "split_first": False,
              "bias": True, "cross": False, "mask": None}
    inputs = {n: np.load(os.path.join(case, n + ".npy")) for n in NAMES}
    exact = reference(config, inputs)
    rounded = reference(config, {n: round_bf16(v) for n, v in inputs.items()})
    got = np.fromfile(out, dtype=np.float32).reshape(exact.shape)
    error = float(np.abs(got - exact).max())
    storage = float(np.abs(rounded - exact).max())
    ok = not np.isnan(got).any() and error <= 1.5 * storage
    print("bf16 session: max abs error %.2e, of float64 on the bf16-rounded "
          "inputs %.2e (bound 1.5x): %s"
          % (error, storage, "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
