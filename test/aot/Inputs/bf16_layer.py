"""The inputs and the float64 references of bf16.test's layer (mha-gen
--dtype bf16 --dynamic --cross --mask, D = 16, Dkv = 12, 4 heads, 2 kv heads,
B = 2, T = 9, S = 7).

  bf16_layer.py inputs DIR    writes DIR/NAME.bin (raw float32, the mask
                              raw bytes) for bf16_calls.c
  bf16_layer.py compare DIR   compares bf16_calls.c's results (y_run.bin,
                              y_call.bin) with the float64 layer on the
                              inputs rounded to bf16 here

The rounding is NumPy bit arithmetic (round to nearest, ties to even),
independent of the library's C; the layer is test/differential's float64
reference, written from test/vectors/README.md's semantics.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "differential"))
from differential import reference  # noqa: E402

B, T, S, D, DKV, H, HKV, DK = 2, 9, 7, 16, 12, 4, 2, 4
CONFIG = {"B": B, "T": T, "S": S, "D": D, "Dkv": DKV, "Dout": D, "H": H,
          "Hkv": HKV, "dk": DK, "dv": DK, "causal": False,
          "causal_bottom_right": False, "split_first": False, "bias": True,
          "cross": True, "mask": "full"}
SHAPES = {"x": (B, T, D), "kv": (B, S, DKV), "w_q": (D, H * DK),
          "w_k": (DKV, HKV * DK), "w_v": (DKV, HKV * DK), "w_o": (H * DK, D),
          "b_q": (H * DK,), "b_k": (HKV * DK,), "b_v": (HKV * DK,),
          "b_o": (D,)}


def round_bf16(a):
    """float32 -> float32 holding the nearest bf16 (ties to even; no NaN
    here)."""
    bits = a.view(np.uint32).astype(np.uint64)
    return ((((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16)
            .astype(np.uint32).view(np.float32))


def make_inputs():
    rng = np.random.default_rng(1616)
    inputs = {}
    for name, shape in SHAPES.items():
        a = rng.uniform(-1, 1, shape).astype(np.float32)
        # Ties: 1 + 2^-8 rounds down to 1 (even), 1 + 3 * 2^-8 up.
        a.flat[0] = 1 + 2.0 ** -8
        a.flat[1] = 1 + 3 * 2.0 ** -8
        inputs[name] = a
    mask = rng.uniform(size=(B, T, S)) < 0.7
    mask[1, 2, :] = False  # a row that may attend no key: zeros
    inputs["mask"] = mask
    return inputs


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    inputs = make_inputs()
    if mode == "inputs":
        for name, value in inputs.items():
            value.astype(np.uint8 if name == "mask" else np.float32).tofile(
                os.path.join(folder, name + ".bin"))
        return 0
    rounded = {name: value if name == "mask" else round_bf16(value)
               for name, value in inputs.items()}
    expected = reference(CONFIG, rounded)
    unrounded = reference(CONFIG, inputs)
    scale = float(np.abs(expected).max())
    failed = 0
    for name in ("y_run", "y_call"):
        got = np.fromfile(os.path.join(folder, name + ".bin"),
                          dtype=np.float32).reshape(B, T, D)
        error = float(np.abs(got - expected).max())
        difference = float(np.abs(got - unrounded).max())
        # float32 accuracy on the rounded inputs; the unrounded ones give a
        # result bf16's 8 bits away (relative 2^-9 per input).
        ok = (not np.isnan(got).any() and error <= 1e-5 * max(scale, 1.0)
              and difference > 100 * error and difference > 1e-4)
        print("%s: max abs error %.1e against float64 on the bf16-rounded "
              "inputs, %.1e from float64 on the unrounded ones: %s"
              % (name, error, difference, "ok" if ok else "FAILED"))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
