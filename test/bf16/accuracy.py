#!/usr/bin/env python3
"""The accuracy bound of bf16 layers, on every case of
test/vectors: the max abs error of our bf16 layer (mha-gen --dtype bf16,
mha-run) against the float64 reference of the case's float32 inputs must be
at most FACTOR (1.5) times the max abs error of the float64 computation on
the bf16-rounded inputs and weights, which is the error that storing them
in bf16 alone causes; and never NaN.

The float64 reference is differential.py's (test/differential), written
from the semantics of test/vectors/README.md; the rounding to bf16 is done
here with NumPy bit operations (round to nearest even), independently of
the C++ code under test. Extra mha-run options (--attention fused, ...)
follow `--`.

With --wide, the cases are instead synthetic ones (WIDE below, NumPy random
inputs of a fixed seed) whose head dimensions are multiples of 16, so that
the projections take the bf16 dot-product path (mha-bf16-dot) where it is
on: the reference cases have mostly heads of 2 to 16 columns, which that
path leaves to f32. They cover the same features: causal, masks with a
fully masked row, grouped-query heads, cross-attention, dk != dv, no bias,
row counts that the register blocks (8 rows) and tiles (32) do not divide.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "differential"))
from differential import reference  # noqa: E402


def round_bf16(a):
    """float32 array -> float32 array of the nearest bf16 values (ties to
    even; the cases hold no NaN)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    lowest_kept = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lowest_kept) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def config_of(m):
    return {"B": m["B"], "T": m["T"], "S": m["S"], "D": m["D"], "Dkv": m["D_kv"],
            "Dout": m["D_out"], "H": m["H"], "Hkv": m["Hkv"], "dk": m["dk"],
            "dv": m["dv"], "causal": m["causal"],
            "causal_bottom_right": m.get("causal_bottom_right", False),
            "split_first": m["split_first"], "bias": m["bias"],
            "cross": m["cross"], "mask": "full" if m["mask"] else None}


def gen_args(m):
    args = ["--dtype", "bf16", "--batch", str(m["B"]), "--seq", str(m["T"]),
            "--d-model", str(m["D"]), "--heads", str(m["H"]),
            "--kv-heads", str(m["Hkv"]), "--head-dim", str(m["dk"]),
            "--value-dim", str(m["dv"]), "--out-dim", str(m["D_out"])]
    if m["cross"]:
        args += ["--kv-seq", str(m["S"]), "--kv-dim", str(m["D_kv"])]
    if m.get("causal_bottom_right"):
        args.append("--causal-bottom-right")
    elif m["causal"]:
        args.append("--causal")
    if m["mask"]:
        args.append("--mask")
    if not m["bias"]:
        args.append("--no-bias")
    if m["split_first"]:
        args.append("--split-first")
    return args


def wide_case(name, B, T, D, H, dk, dv=None, S=None, Dkv=None, Hkv=None,
              Dout=None, causal=False, bottom_right=False, cross=False,
              mask=False, bias=True):
    dv = dv or dk
    return {"name": name, "B": B, "T": T, "S": S or T, "D": D,
            "D_kv": Dkv or D, "D_out": Dout or D, "H": H, "Hkv": Hkv or H,
            "dk": dk, "dv": dv, "causal": causal,
            "causal_bottom_right": bottom_right, "split_first": False,
            "bias": bias, "cross": cross, "mask": mask}


WIDE = [
    wide_case("wide_self", B=2, T=40, D=128, H=4, dk=32),
    wide_case("wide_causal_gqa", B=1, T=37, D=128, H=4, Hkv=2, dk=32,
              causal=True),
    wide_case("wide_cross_mask_dk_ne_dv", B=2, T=9, S=21, D=64, Dkv=96, H=2,
              dk=32, dv=16, Dout=80, cross=True, mask=True),
    wide_case("wide_heads16_nobias", B=1, T=13, D=64, H=4, dk=16, bias=False),
    wide_case("wide_bottom_right", B=1, T=5, S=19, D=64, H=2, dk=32,
              causal=True, bottom_right=True, cross=True),
    # 509 rows: whole blocks, then a remainder that no block divides.
    wide_case("wide_long_odd", B=1, T=509, D=64, H=2, dk=32, causal=True),
    # Whole 16-row query tiles, keys in whole 16s and dk = 64: the scores on
    # AMX (mha-amx-scores) where the target has it; several query tiles
    # per head, causal with grouped-query heads, a single tile with masked
    # cross-attention.
    wide_case("wide_amx_self", B=2, T=128, D=128, H=2, dk=64),
    wide_case("wide_amx_causal_gqa", B=1, T=192, D=256, H=4, Hkv=2, dk=64,
              causal=True),
    wide_case("wide_amx_cross_mask", B=2, T=48, S=80, D=128, Dkv=96, H=2,
              dk=64, cross=True, mask=True),
]


def wide_inputs(m, seed):
    """Random float32 inputs of case `m` (and a mask with a fully masked
    row), by the argument names of mha-gen's graph."""
    rng = np.random.default_rng(seed)
    B, T, S, D, Dkv = m["B"], m["T"], m["S"], m["D"], m["D_kv"]
    H, Hkv, dk, dv, Dout = m["H"], m["Hkv"], m["dk"], m["dv"], m["D_out"]

    def normal(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    inputs = {"x": normal((B, T, D), 1.0),
              "w_q": normal((D, H * dk), D ** -0.5),
              "w_k": normal((Dkv, Hkv * dk), Dkv ** -0.5),
              "w_v": normal((Dkv, Hkv * dv), Dkv ** -0.5),
              "w_o": normal((H * dv, Dout), (H * dv) ** -0.5)}
    if m["cross"]:
        inputs["kv"] = normal((B, S, Dkv), 1.0)
    if m["bias"]:
        inputs.update(b_q=normal(H * dk, 0.1), b_k=normal(Hkv * dk, 0.1),
                      b_v=normal(Hkv * dv, 0.1), b_o=normal(Dout, 0.1))
    if m["mask"]:
        mask = rng.random((B, T, S)) < 0.7
        mask[0, 0, :] = False
        inputs["mask"] = mask
    return inputs


def cases(args, work):
    """(name, meta, inputs folder, inputs) of each case."""
    if not args.wide:
        for case in sorted(os.listdir(args.vectors)):
            folder = os.path.join(args.vectors, case)
            meta_path = os.path.join(folder, "meta.json")
            if not os.path.isfile(meta_path):
                continue
            with open(meta_path) as f:
                m = json.load(f)
            inputs = {name: np.load(os.path.join(folder, name + ".npy"))
                      for name in m["files"] if name != "y"}
            yield case, m, folder, inputs
        return
    for seed, m in enumerate(WIDE):
        folder = os.path.join(work, m["name"] + ".inputs")
        os.mkdir(folder)
        inputs = wide_inputs(m, seed)
        for name, value in inputs.items():
            np.save(os.path.join(folder, name + ".npy"), value)
        yield m["name"], m, folder, inputs


def run_bf16_layer(bin_dir, case, m, folder, work, run_args):
    """Our bf16 layer of case `m` on the inputs in `folder` (mha-gen, then
    mha-run with `run_args`): the output as float32, or None after printing
    why mha-run failed."""
    graph = os.path.join(work, case + ".mlir")
    out = os.path.join(work, case + ".npy")
    subprocess.run([os.path.join(bin_dir, "mha-gen")] + gen_args(m) +
                   ["-o", graph], check=True, capture_output=True)
    run = subprocess.run([os.path.join(bin_dir, "mha-run"), graph,
                          "--inputs", folder, "--output", out] + run_args,
                         capture_output=True, text=True)
    if run.returncode != 0:
        print("%s: mha-run failed (%d): %s" % (case, run.returncode,
                                               run.stderr.strip()))
        return None
    return np.load(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="folder of mha-gen and mha-run")
    parser.add_argument("--vectors", help="test/vectors (the reference cases)")
    parser.add_argument("--wide", action="store_true",
                        help="the synthetic cases with wide heads instead")
    parser.add_argument("--factor", type=float, default=1.5)
    parser.add_argument("run_args", nargs="*", help="extra mha-run options")
    args = parser.parse_args()
    if not args.wide and not args.vectors:
        parser.error("give --vectors or --wide")
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for case, m, folder, inputs in cases(args, work):
            c = config_of(m)
            exact = reference(c, inputs)
            rounded = {name: (value if name == "mask" else round_bf16(value))
                       for name, value in inputs.items()}
            storage_error = float(np.abs(reference(c, rounded) - exact).max())

            got = run_bf16_layer(args.bin, case, m, folder, work,
                                 args.run_args)
            if got is None:
                failed += 1
                continue
            error = float(np.abs(got.astype(np.float64) - exact).max())
            ok = (got.shape == exact.shape and not np.isnan(got).any() and
                  error <= args.factor * storage_error)
            print("%s: bf16 error %.3e, bf16 storage error %.3e, ratio %.2f: %s" % (
                case, error, storage_error,
                error / storage_error if storage_error else float("inf"),
                "ok" if ok else "FAILED"))
            failed += not ok
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
