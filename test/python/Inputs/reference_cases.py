"""The reference cases (test/vectors) through the Python package: for each,
mha.layer_graph must print what mha-gen prints for the same options, and the
compiled layer must give the case's y.npy (float64 NumPy reference,
cross-checked with PyTorch) within its tolerance: static and `?` sizes, both
attention paths, all arguments per call and weights bound by prepare().

    reference_cases.py VECTORS_DIR MHA_BIN_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np

import mha

# The options of test/integration/reference-cases/<case>.test.
CASES = {
    "batch_64x256x4": dict(batch=2, seq=64, d_model=256, heads=4),
    "causal": dict(batch=2, seq=37, d_model=64, heads=4, causal=True),
    "causal_cross": dict(batch=1, seq=6, kv_seq=10, d_model=32, kv_dim=32, heads=4, causal=True),
    "cross": dict(batch=2, seq=5, kv_seq=11, d_model=48, kv_dim=32, heads=3),
    "dk_ne_dv": dict(batch=1, seq=6, d_model=24, heads=3, head_dim=4, value_dim=10),
    "gqa": dict(batch=1, seq=12, d_model=64, heads=8, kv_heads=2),
    "large_logits": dict(batch=1, seq=16, d_model=32, heads=4),
    "masked_row": dict(batch=1, seq=4, d_model=8, heads=2, mask_broadcast=True),
    "padmask": dict(batch=3, seq=9, d_model=32, heads=2, mask=True),
    "seed003_split": dict(batch=1, seq=8, d_model=4, heads=2, split_first=True, bias=False),
    "seed003_standard": dict(batch=1, seq=8, d_model=4, heads=2),
    "seed004_3tok": dict(batch=1, seq=3, d_model=512, heads=8),
}


def gen_flags(options):
    flags = []
    for key, value in options.items():
        if key == "bias":
            flags.append("--no-bias")
        elif value is True:
            flags.append("--" + key.replace("_", "-"))
        else:
            flags += ["--" + key.replace("_", "-"), str(value)]
    return flags


def main():
    vectors, bin_dir = sys.argv[1], sys.argv[2]
    failures = 0
    for case, options in CASES.items():
        folder = os.path.join(vectors, case)
        with open(os.path.join(folder, "meta.json")) as f:
            tolerance = json.load(f)["tolerance"]
        expected = np.load(os.path.join(folder, "y.npy"))
        graph = mha.layer_graph(**options)
        printed = subprocess.run([os.path.join(bin_dir, "mha-gen")] + gen_flags(options),
                                 check=True, capture_output=True, text=True).stdout
        if graph != printed:
            print("%s: mha.layer_graph differs from mha-gen" % case)
            failures += 1
        dynamic = dict(options, batch=None, seq=None)
        if "kv_seq" in dynamic:
            dynamic["kv_seq"] = None
        for sizes, text in (("static", graph), ("dynamic", mha.layer_graph(**dynamic))):
            for attention in ("decomposed", "fused"):
                layer = mha.compile(text, attention=attention)
                names = [name for name, _, _ in layer.arguments]
                inputs = {n: np.load(os.path.join(folder, n + ".npy")) for n in names}
                y = layer(**inputs)
                ok = np.allclose(y, expected, atol=tolerance["atol"], rtol=tolerance["rtol"])
                # Positional, in the graph's order, must be the same call.
                same = np.array_equal(layer(*[inputs[n] for n in names]), y)
                weights = {n: a for n, a in inputs.items() if n not in ("x", "kv", "mask")}
                layer.prepare(**weights)
                activations = [inputs[n] for n in names if n not in weights]
                prepared = np.allclose(layer(*activations), expected,
                                       atol=tolerance["atol"], rtol=tolerance["rtol"])
                error = float(np.abs(y - expected).max())
                status = "ok" if ok and same and prepared else "FAILED"
                failures += status != "ok"
                print("%s %s %s: max abs error %.2e, positional %s, prepared %s: %s"
                      % (case, sizes, attention, error, same, prepared, status))
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
