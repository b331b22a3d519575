"""Decoding configurations of the differential test (differential.py).

About one seed in five (is_decoding: a fixed function of the seed) draws a
layer with a key/value cache instead of a plain one: `mha-gen --kv-cache C`
with f32, bf16 (`--dtype bf16`) or int8 (`--cache-dtype int8`) caches,
dense or paged (`--paged-kv P`), grouped-query heads, the variants the cache
graph takes, and `mha-run --prefill T --steps N --lengths ...` with ragged
lengths: one sequence at 0 context, one that ends exactly at the capacity.
The expected outputs are the float64 layer of layer_reference.py over each
sequence alone (its tokens: the prefill's, then the kept ones and the
steps'), with the caches' rounding of the keys and values (int8: the
quantization of test/Inputs/causal_decode_reference.py).
"""

import os

import numpy as np

import layer_reference
from model_variants import chance, pick, variant_gen_args

HEADS = [1, 1, 2, 3, 4, 6, 8]
HEAD_DIMS = [1, 2, 3, 4, 5, 7, 8, 16]
CAPACITIES = [1, 2, 3, 5, 8, 13, 17, 31, 40, 64, 100]
# Tolerances of the NumPy comparison, per cache type (f32: --atol and
# --rtol, 1e-4). The reference rounds the keys and values as the cache
# stores them, in float64 from float64 rows; the compiled code rounds
# float32 rows. int8: where x / scale lies within float32's error of a half,
# the two round to neighbouring codes, one scale (max|x| / 127) apart; bf16:
# an element may round to the neighbouring bf16 value (2^-8 relative). Either
# moves an output by up to about 1e-3; without such a tie both agree to a
# few 1e-6. A wrong page, code or scale moves outputs by O(1).
NUMPY_TOLERANCES = {"f32": None, "int8": (5e-3, 5e-3), "bf16": (5e-3, 5e-3)}
# The paged graph against the dense one on the same inputs, f32, bf16 and
# int8 alike: the pools hold the bits the dense caches hold (the same rows
# rounded or quantized the same way), and the arithmetic differs only where
# the key blocks end (a key tile divides the page): float32's rounding of
# the sums.
PAGED_TOLERANCE = 1e-6


def is_decoding(seed):
    """Whether seed draws a decoding configuration: about one in five."""
    return chance(np.random.default_rng([seed, 0x646563]), 0.2)


def draw_sizes(c, rng):
    """Batch, heads and widths: a long context of one head now and then
    (key splits), else small sizes."""
    if c["long"]:
        c["B"], c["H"], c["Hkv"] = 1, 1, 1
        c["dk"] = pick(rng, [4, 8, 16])
        c["dv"] = c["dk"]
        c["D"] = pick(rng, [8, 16])
        c["gen"] = {"head_dim": c["dk"]}
    else:
        c["B"] = int(rng.integers(1, 5))
        c["H"] = pick(rng, HEADS)
        c["Hkv"] = pick(rng, [d for d in range(1, c["H"] + 1) if c["H"] % d == 0])
        c["dk"] = pick(rng, HEAD_DIMS)
        c["dv"] = pick(rng, HEAD_DIMS) if chance(rng, 0.4) else c["dk"]
        gen = {}
        if chance(rng, 0.5):
            c["D"] = c["H"] * c["dk"]
        else:
            c["D"] = pick(rng, [1, 2, 3, 5, 8, 12, 16, 24])
            gen["head_dim"] = c["dk"]
        if c["D"] % c["H"] or c["D"] // c["H"] != c["dk"]:
            gen["head_dim"] = c["dk"]
        if c["dv"] != c["dk"]:
            gen["value_dim"] = c["dv"]
        c["gen"] = gen
    c["Dout"] = c["D"]
    if chance(rng, 0.3):
        c["Dout"] = pick(rng, [1, 2, 3, 5, 9, 16])
        c["gen"]["out_dim"] = c["Dout"]
    c["bias"] = chance(rng, 0.7)


def draw_calls(c, rng):
    """Capacity, prefill, steps and lengths; static sizes or `?` ones."""
    if c["long"]:
        c["C"] = int(rng.integers(200, 700))
    else:
        c["C"] = pick(rng, CAPACITIES) if not c["paged"] else int(rng.integers(1, 200))
    P = c["paged"]
    # Rows a sequence holds: C, or a whole number of pages.
    cap = c["C"] if not P else -(-c["C"] // P) * P
    c["capacity"] = cap
    c["dynamic"] = c["long"] or chance(rng, 0.8)
    B = c["B"]
    if not c["dynamic"] and chance(rng, 0.5):
        T, lengths = 1, [int(rng.integers(0, 2)) for _ in range(B)]  # one token per call
    elif not c["dynamic"]:
        # The prefill alone; mha-gen takes a static --seq up to C.
        T = int(rng.integers(1, min(c["C"], 40) + 1))
        c["T"], c["N"] = T, 0
        c["lengths"] = [int(rng.integers(0, T + 1)) for _ in range(B)]
        return
    else:
        top = min(cap, 600 if c["long"] else 40)
        T = int(rng.integers(max(1, top // 2) if c["long"] else 1, top + 1))
        lengths = [int(rng.integers(0, T + 1)) for _ in range(B)]
    budget = 40 if c["long"] else 150
    N, fill = None, None
    if chance(rng, 0.7):
        # One sequence ends exactly at the capacity, the others before.
        fill = int(rng.integers(B))
        low = max(max(lengths), cap - budget)
        if low <= T:
            lengths[fill] = int(rng.integers(low, T + 1))
            N = cap - lengths[fill]
    others = [b for b in range(B) if b != fill]
    if others and (B > 1 or chance(rng, 0.3)):
        lengths[pick(rng, others)] = 0  # a sequence that starts empty
    if N is None:
        N = int(rng.integers(0, min(cap - max(lengths), budget) + 1))
    c["T"], c["N"], c["lengths"] = T, N, lengths


def draw_variants(c, rng):
    """The served models' steps that a cache graph takes (no attn_bias)."""
    if chance(rng, 0.4):
        return
    if chance(rng, 0.35):
        cap = c["capacity"]
        c["window"] = pick(rng, [1, 1, 2, 3, max(1, cap // 2), cap, cap + 5, 4096])
    # Not on one feature per head in a `?`-sized graph: its fused lowering
    # fails to verify (an arith.mulf of two f32 giving a vector).
    if chance(rng, 0.3) and not (c["dk"] == 1 and c["dynamic"]):
        c["alibi"] = pick(rng, ["bloom", "random"])
    if chance(rng, 0.3):
        c["sinks"] = pick(rng, ["normal", "large"])
    if chance(rng, 0.25):
        c["softcap"] = float(np.float32(pick(rng, [1.0, 5.0, 20.0, 50.0])))
        c["query_gain"] = pick(rng, [1.0, 4.0])
    if c["dk"] >= 2 and chance(rng, 0.4):
        R = c["dk"] if c["dk"] % 2 == 0 and chance(rng, 0.6) else \
            2 * int(rng.integers(1, c["dk"] // 2 + 1))
        c["rope"] = {"layout": pick(rng, ["half", "interleaved"]),
                     "base": pick(rng, [10000.0, 500000.0, 100.0, 10.0]),
                     "rotary_dim": R, "pass_rotary_dim": R != c["dk"],
                     "scale": pick(rng, [1.0, 1.0, 2.0, 0.5]),
                     "mscale": pick(rng, [1.0, 1.0, 1.5]), "inv_freq": None}
        if chance(rng, 0.2):
            c["rope"]["inv_freq"] = 1.0 / 100.0 ** (np.arange(0, R, 2) / R) * \
                rng.uniform(0.5, 1.5, R // 2)
            c["rope"]["inv_freq_kind"] = "random"
    if chance(rng, 0.3):
        c["qk_norm_eps"] = pick(rng, [None, 1e-5]) if c["dk"] >= 4 else 0.5
    if chance(rng, 0.2):
        c["scale"] = pick(rng, [1.0, 0.5, 0.125, float(np.float32(0.3))])


def make_config(seed, variants):
    """The decoding configuration of seed (is_decoding(seed) is true)."""
    rng = np.random.default_rng([seed, 0x6B7663])
    c = {"seed": seed, "decoding": True}
    c["cache"] = pick(rng, ["f32", "f32", "bf16", "int8", "int8"])
    c["paged"] = 16 * int(rng.integers(1, 9)) if chance(rng, 0.5) else None
    c["long"] = chance(rng, 0.12)
    draw_sizes(c, rng)
    draw_calls(c, rng)
    run = ["--attention", pick(rng, ["fused", "fused", "decomposed", "auto"])]
    if c["long"] or chance(rng, 0.3):
        run += ["--key-splits", str(pick(rng, [2, 3, 4, 7, 16]))]
    if c["long"] or chance(rng, 0.3):
        run += ["--key-tile", str(pick(rng, [1, 3, 5, 7, 16, 128]))]
    if chance(rng, 0.2):
        run += ["--query-tile", str(pick(rng, [1, 2, 3, 64]))]
    if c["Hkv"] != c["H"] and chance(rng, 0.2):
        run.append("--group-query-heads=false")
    run += ["--threads", str(pick(rng, [1, 2]))]
    c["run"] = run
    if variants:
        draw_variants(c, rng)
    return c


def gen_args(c, paged=True):
    """mha-gen's options; paged=False: the dense graph of the same layer,
    whose capacity is the paged one's (M * P)."""
    args = ["--d-model", str(c["D"]), "--heads", str(c["H"]), "--kv-heads", str(c["Hkv"])]
    for key, flag in (("head_dim", "--head-dim"), ("value_dim", "--value-dim"),
                      ("out_dim", "--out-dim")):
        if key in c["gen"]:
            args += [flag, str(c["gen"][key])]
    if c["dynamic"]:
        args.append("--dynamic")
    else:
        args += ["--batch", str(c["B"]), "--seq", str(c["T"])]
    if not c["bias"]:
        args.append("--no-bias")
    if c["cache"] == "bf16":
        args += ["--dtype", "bf16"]
    elif c["cache"] == "int8":
        args += ["--cache-dtype", "int8"]
    if c["paged"] and paged:
        args += ["--kv-cache", str(c["C"]), "--paged-kv", str(c["paged"])]
    else:
        args += ["--kv-cache", str(c["capacity"])]
    args += variant_gen_args(c)
    return args


def run_args(c):
    """mha-run's decoding options (the pipeline options are c["run"])."""
    args = ["--prefill", str(c["T"]), "--steps", str(c["N"])]
    if c["lengths"] != [c["T"]] * c["B"]:
        args += ["--lengths", ",".join(str(l) for l in c["lengths"])]
    return args + c["run"]


def describe(c):
    parts = ["decoding: %s %s cache C=%d (capacity %d), B=%d D=%d H=%d Hkv=%d dk=%d dv=%d "
             "Dout=%d, prefill %d, %d steps, lengths %s" % (
                 c["cache"], "paged P=%d" % c["paged"] if c["paged"] else "dense", c["C"],
                 c["capacity"], c["B"], c["D"], c["H"], c["Hkv"], c["dk"], c["dv"], c["Dout"],
                 c["T"], c["N"], ",".join(str(l) for l in c["lengths"]))]
    parts.append("dynamic" if c["dynamic"] else "static")
    if c["long"]:
        parts.append("long context")
    parts.append("bias" if c["bias"] else "no bias")
    for key in ("window", "softcap", "alibi", "sinks", "scale", "qk_norm_eps"):
        if key in c:
            parts.append("%s=%s" % (key, c[key]))
    if c.get("rope"):
        rope = c["rope"]
        parts.append("rope=%s R=%d base=%g scale=%g mscale=%g%s" % (
            rope["layout"], rope["rotary_dim"], rope["base"], rope["scale"], rope["mscale"],
            " inv_freq" if rope["inv_freq"] is not None else ""))
    return " ".join(parts)


def make_inputs(c):
    """float32 inputs named as the graph's arguments: x [B, T + N, D] (the
    prefill's rows, then one per step), the weights, the variants' arrays."""
    rng = np.random.default_rng([c["seed"], 0x64696E])
    B, D, H, Hkv, dk, dv, Dout = (c[k] for k in ("B", "D", "H", "Hkv", "dk", "dv", "Dout"))
    f32 = np.float32
    inputs = {"x": rng.standard_normal((B, c["T"] + c["N"], D)).astype(f32),
              "w_q": (rng.standard_normal((D, H * dk)) / np.sqrt(D)).astype(f32),
              "w_k": (rng.standard_normal((D, Hkv * dk)) / np.sqrt(D)).astype(f32),
              "w_v": (rng.standard_normal((D, Hkv * dv)) / np.sqrt(D)).astype(f32),
              "w_o": (rng.standard_normal((H * dv, Dout)) / np.sqrt(H * dv)).astype(f32)}
    if c["bias"]:
        for name, n in (("b_q", H * dk), ("b_k", Hkv * dk), ("b_v", Hkv * dv), ("b_o", Dout)):
            inputs[name] = (0.5 * rng.standard_normal(n)).astype(f32)
    if c.get("query_gain", 1.0) != 1.0:
        for name in ("w_q", "b_q"):
            if name in inputs:
                inputs[name] = (inputs[name] * c["query_gain"]).astype(f32)
    if c.get("rope") and c["rope"]["inv_freq"] is not None:
        inputs["rope_inv_freq"] = c["rope"]["inv_freq"].astype(f32)
    if "qk_norm_eps" in c:
        inputs["q_norm"] = (1 + 0.3 * rng.standard_normal(dk)).astype(f32)
        inputs["k_norm"] = (1 + 0.3 * rng.standard_normal(dk)).astype(f32)
    if "alibi" in c:
        slopes = 2.0 ** (-8.0 * np.arange(1, H + 1) / H) if c["alibi"] == "bloom" else \
            rng.uniform(-0.5, 1.0, H)
        inputs["alibi_slopes"] = slopes.astype(f32)
    if "sinks" in c:
        inputs["sinks"] = (2 * rng.standard_normal(H) + (8 if c["sinks"] == "large" else 0)
                           ).astype(f32)
    return inputs


VARIANT_FIELDS = ("scale", "rope", "qk_norm_eps", "window", "softcap", "alibi", "sinks")


def reference(c, inputs):
    """[B, T + N, D_out] float64: row i < T of sequence b is the causal
    layer over its T prefill tokens (every prefill row is computed, kept or
    not), row T + n the layer over its l_b kept tokens and steps 0 .. n,
    from layer_reference's float64 layer."""
    B, T, N = c["B"], c["T"], c["N"]
    out = np.zeros((B, T + N, c["Dout"]))
    seq = {k: c[k] for k in ("D", "H", "Hkv", "dk", "dv", "Dout", "bias", "cache")}
    seq.update({"B": 1, "Dkv": c["D"], "causal": True, "causal_bottom_right": False,
                "split_first": False, "cross": False, "mask": None, "empty_rows": False})
    seq.update({k: c[k] for k in VARIANT_FIELDS if k in c})
    weights = {k: v for k, v in inputs.items() if k != "x"}
    x = inputs["x"]
    if c["cache"] == "bf16":
        # mha-run rounds x, the weights and the biases to bf16 (the
        # variants' arrays stay f32).
        x = layer_reference.bf16(x)
        weights.update({k: layer_reference.bf16(v) for k, v in weights.items()
                        if k[:2] in ("w_", "b_")})
    for b in range(B):
        kept = c["lengths"][b]
        for tokens, first, rows in ((x[b, :T], 0, slice(0, T)),
                                    (np.concatenate([x[b, :kept], x[b, T:]]), kept,
                                     slice(T, T + N))):
            if rows.stop == rows.start:
                continue
            one = dict(seq, T=len(tokens), S=len(tokens))
            out[b, rows] = layer_reference.reference(one, dict(weights, x=tokens[None]))[0, first:]
    return out


def compare(got_path, want, atol, rtol, what):
    """None when |got - want| <= atol + rtol |want| everywhere, else the
    failure's detail."""
    got = np.load(got_path).astype(np.float64)
    if got.shape != want.shape:
        return "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    error = np.abs(got - want)
    if np.all(error <= atol + rtol * np.abs(want)):
        return None
    where = np.unravel_index(int(np.nanargmax(np.where(np.isnan(error), np.inf, error))),
                             error.shape)
    return "%s: max abs error %.3e at [batch, row, feature] %s (atol %g, rtol %g)" % (
        what, float(np.nanmax(error)) if not np.isnan(error).all() else np.nan,
        list(int(i) for i in where), atol, rtol)


def run_case(c, args, bin_dir, case_dir, run_tools, write_repro):
    """Writes the graph (and for a paged cache the dense graph of the same
    layer), the inputs and the expected outputs; runs mha-run --check on
    each and compares the dense outputs with the float64 reference and the
    paged outputs with the dense ones. Returns (kind, detail, commands)."""
    gen = os.path.join(bin_dir, "mha-gen")
    mha_run = [os.path.join(bin_dir, "mha-run")]
    dense, dense_out = os.path.join(case_dir, "dense.mlir"), os.path.join(case_dir, "dense.npy")
    common = ["--inputs", case_dir, "--check", "--atol", repr(args.atol), "--rtol",
              repr(args.rtol)] + run_args(c)
    steps = [("mha-gen", [gen] + gen_args(c, paged=False) + ["-o", dense]),
             ("mha-run", mha_run + [dense] + common + ["--output", dense_out])]
    if c["paged"]:
        paged = os.path.join(case_dir, "paged.mlir")
        paged_out = os.path.join(case_dir, "paged.npy")
        # --seed shuffles the block table.
        steps += [("mha-gen (paged)", [gen] + gen_args(c) + ["-o", paged]),
                  ("mha-run (paged)", mha_run + [paged] + common +
                   ["--seed", str(c["seed"]), "--output", paged_out])]
    commands = [cmd for _, cmd in steps]
    write_repro(case_dir, describe(c), commands)
    try:
        inputs = make_inputs(c)
        for name, value in inputs.items():
            np.save(os.path.join(case_dir, name + ".npy"), value)
        with np.errstate(all="raise", under="ignore"):
            expected = reference(c, inputs)
    except Exception as error:  # a bug of this script: report, never hide
        return "driver-error", repr(error), commands
    kind, detail = run_tools(steps, args)
    if kind is not None:
        return kind, detail, commands
    atol, rtol = NUMPY_TOLERANCES[c["cache"]] or (args.atol, args.rtol)
    detail = compare(dense_out, expected, atol, rtol, "dense outputs against NumPy")
    if detail:
        return "mha-run mismatch (NumPy)", detail, commands
    if c["paged"]:
        detail = compare(paged_out, np.load(dense_out).astype(np.float64), PAGED_TOLERANCE,
                         PAGED_TOLERANCE, "paged outputs against dense")
        if detail:
            return "mha-run mismatch (paged vs dense)", detail, commands
    return None, "", commands
