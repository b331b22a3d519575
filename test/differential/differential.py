#!/usr/bin/python3
"""Differential test of mha: random valid layers against a NumPy reference.

Each seed picks one valid configuration of the layer (sizes, variants and
the pipeline options of mha-run that change the generated code), writes its
graph with mha-gen, draws float32 inputs with NumPy, computes the expected
output with an independent float64 NumPy implementation of the semantics in
test/vectors/README.md (and, for the served models' attention that about one
seed in three draws when mha-gen has its flags, of mha.attention's
description in dialects/MhaOps.td), and runs

    mha-run GRAPH --inputs DIR --expect ref.npy --atol A --rtol R --check ...

which must exit with 0: the compiled code matches both this reference and
the C++ reference of --check. Any other exit code, a crash (signal) or a
timeout is a failure. Every failure is printed with its seed, its class and
the commands that reproduce it; the last line is `N passed, M failed; ...`
(how many seeds drew the served models' variants, or why none did).

    test/differential/differential.py --seed-start 0 --count 2000 --jobs 2

The configuration of a seed depends only on the seed (and this file), so
`--seed-start S --count 1 --keep` reproduces one case and keeps its folder
(graph.mlir, the inputs, ref.npy, repro.sh). Needs Debian's python3-numpy.
Exit status: 0 when every configuration passed, 1 otherwise, 2 on bad usage.
"""

import argparse
import concurrent.futures
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

# Sizes to draw from: every size 1, small primes and a few lengths past the
# default tiles (61, 127), so that tiles and vector blocks have remainders.
SEQ_LENGTHS = [1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 61, 127]
HEADS = [1, 1, 2, 3, 4, 6, 8]
HEAD_DIMS = [1, 2, 3, 4, 5, 7, 8, 16]
WIDTHS = [1, 2, 3, 5, 7, 8, 12, 16, 24, 33]
QUERY_TILES = [1, 2, 3, 5, 7, 13, 64]
KEY_TILES = [1, 2, 3, 5, 7, 11, 128]
KEY_SPLITS = [1, 2, 3, 4, 7, 16]
# The largest values mha-run accepts (key-splits is at most 1024): far more
# ranges than key blocks.
HUGE_KEY_SPLITS = [1000, 1024]
ROW_TILES = [0, 1, 2, 3, 5, 7, 32]
COL_TILES = [0, 1, 2, 3, 7, 128]


def pick(rng, values):
    return values[int(rng.integers(len(values)))]


def chance(rng, p):
    return bool(rng.random() < p)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


# The flags of mha-gen for the attention of served models; the variants are
# drawn only when `mha-gen --help` lists every one (model_variant_flags).
VARIANT_FLAGS = ("--rope", "--rope-base", "--rotary-dim", "--rope-scale", "--rope-inv-freq",
                 "--rope-mscale", "--qk-norm", "--qk-norm-eps", "--window", "--softcap",
                 "--alibi", "--sinks", "--attn-bias", "--scale")
# What a variant seed draws: the combinations of the served models and each
# step alone ("mix": every step by its own chance).
RECIPES = ["rope", "rope", "rope_qknorm", "rope_window", "rope_qknorm_window", "gemma2",
           "gpt_oss", "alibi", "alibi", "bias", "bias", "bias", "sinks_empty_rows", "window",
           "window", "qknorm", "softcap", "mix", "mix"]
ATTN_BIAS_SHAPES = ["B,H,T,S", "1,H,T,S", "B,1,1,S", "B,1,T,S", "1,1,T,S", "1,1,1,S",
                    "B,H,1,S", "1,H,1,S"]
# Scores scales of --scale: float32 values (the attribute is f32), among them
# Gemma 2's query_pre_attn_scalar^-0.5 rounded to float32.
SCALES = [1.0, 0.5, 2.0, 0.125, float(np.float32(24 ** -0.5)), float(np.float32(0.3))]


def model_variant_flags(bin_dir):
    """The flags of VARIANT_FLAGS that `mha-gen --help` lists; the variants
    are drawn when this is all of them."""
    try:
        out = subprocess.run([os.path.join(bin_dir, "mha-gen"), "--help"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    listed = set(re.findall(r"^\s+(--[a-z0-9-]+)", out, re.M))
    return {flag for flag in VARIANT_FLAGS if flag in listed}


# Frequencies and slopes of the published models, copied from
# test/vectors/make_model_variants.py (NumPy ports of transformers' code).

def default_inv_freq(base, dim):
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def llama3_inv_freq(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    """Llama 3.1: long wavelengths divided by factor, short ones kept, a smooth ramp between."""
    inv = default_inv_freq(base, dim)
    wavelen = 2 * np.pi / inv
    low_wavelen = old_context_len / low_freq_factor
    high_wavelen = old_context_len / high_freq_factor
    out = np.empty_like(inv)
    for i, (f, w) in enumerate(zip(inv, wavelen)):
        if w < high_wavelen:
            out[i] = f
        elif w > low_wavelen:
            out[i] = f / factor
        else:
            smooth = (old_context_len / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out[i] = (1 - smooth) * f / factor + smooth * f
    return out


def yarn_inv_freq(base, dim, factor, original_max, beta_fast=32.0, beta_slow=1.0):
    """YaRN as gpt-oss configures it: returns (inv_freq, mscale)."""
    def correction_dim(rotations):
        return dim * np.log(original_max / (rotations * 2 * np.pi)) / (2 * np.log(base))
    low = max(correction_dim(beta_fast), 0.0)
    high = min(correction_dim(beta_slow), dim - 1.0)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv = (1 / (factor * pos_freqs)) * (1 - extrapolation) + (1 / pos_freqs) * extrapolation
    return inv, float(0.1 * np.log(factor) + 1.0)


def bloom_slopes(n_heads):
    """BLOOM's ALiBi slopes (build_alibi_tensor)."""
    p = 2 ** int(np.floor(np.log2(n_heads)))
    base = 2.0 ** (-(2.0 ** -(np.log2(p) - 3)))
    slopes = [base ** k for k in range(1, p + 1)]
    if p != n_heads:
        extra = 2.0 ** (-(2.0 ** -(np.log2(2 * p) - 3)))
        slopes += [extra ** k for k in range(1, 2 * min(p, n_heads - p), 2)]
    return np.array(slopes)


def self_attention(c):
    """Makes configuration c self-attention (RoPE needs it): S = T, D_kv = D."""
    c["cross"] = False
    c["S"], c["Dkv"] = c["T"], c["D"]
    for key in ("kv_seq", "kv_dim", "cross_flag"):
        c["gen"].pop(key, None)


def draw_model_variants(c):
    """About one seed in three: the attention of served models on top of the
    classic configuration c (own stream, so the classic draws stay put), in
    the combinations models use, within mha's rules: RoPE only on
    self-attention and with an even rotary dimension, a window only with
    causal. Fields: scale, rope, qk_norm, window, softcap, alibi, sinks,
    attn_bias (a shape such as "B,1,1,S")."""
    rng = np.random.default_rng([c["seed"], 0x766172])
    if not chance(rng, 1 / 3):
        return
    recipe = pick(rng, RECIPES)
    c["recipe"] = recipe
    mix = recipe == "mix"
    want = {
        "rope": recipe.startswith("rope") or recipe in ("gemma2", "gpt_oss") or
                (mix and chance(rng, 0.4)),
        "qk_norm": "qknorm" in recipe or (mix and chance(rng, 0.3)),
        "window": "window" in recipe or recipe in ("gemma2", "gpt_oss") or
                  (mix and chance(rng, 0.4)) or (recipe == "alibi" and chance(rng, 0.3)),
        "softcap": recipe in ("softcap", "gemma2") or (mix and chance(rng, 0.3)),
        "alibi": recipe == "alibi" or (mix and chance(rng, 0.3)),
        "sinks": recipe in ("gpt_oss", "sinks_empty_rows") or (mix and chance(rng, 0.3)),
        "attn_bias": recipe == "bias" or (mix and chance(rng, 0.4)),
    }
    # Logits from 1e-30 to 1e38 stay the classic seeds' test: RoPE, norms
    # and softcap make the scores inexact anyway.
    c.pop("logit_exponent", None)
    if want["rope"] and c["dk"] >= 2:
        self_attention(c)
        R = c["dk"] if c["dk"] % 2 == 0 and chance(rng, 0.6) else \
            2 * int(rng.integers(1, c["dk"] // 2 + 1))
        rope = {"layout": "interleaved" if chance(rng, 0.35) else "half",
                "base": pick(rng, [10000.0, 10000.0, 500000.0, 1e6, 100.0, 10.0]),
                "rotary_dim": R, "pass_rotary_dim": R != c["dk"] or chance(rng, 0.3),
                "scale": pick(rng, [2.0, 0.5, 8.0]) if chance(rng, 0.25) else 1.0,
                "mscale": 1.0, "inv_freq": None}
        if chance(rng, 0.3) or recipe == "gpt_oss":
            kind = pick(rng, ["llama3", "yarn", "random"])
            if kind == "llama3":
                rope["inv_freq"] = llama3_inv_freq(rope["base"], R, 8.0, 1.0, 4.0, 64)
            elif kind == "yarn":
                rope["inv_freq"], rope["mscale"] = yarn_inv_freq(rope["base"], R, 32.0, 64)
            else:
                rope["inv_freq"] = default_inv_freq(rope["base"], R) * \
                    rng.uniform(0.5, 1.5, R // 2)
            rope["inv_freq_kind"] = kind
        if chance(rng, 0.2):
            rope["mscale"] = pick(rng, [0.7, 1.5, 1.3465735902799727])
        c["rope"] = rope
    if want["qk_norm"]:
        # An RMSNorm of one or two features is nearly a sign (x / |x|):
        # a larger epsilon keeps it well conditioned for float32.
        c["qk_norm_eps"] = pick(rng, [None, 1e-6, 1e-5]) if c["dk"] >= 4 else \
            pick(rng, [0.1, 0.5])
    if want["window"]:
        if not c["causal"]:
            c["causal"], c["causal_bottom_right"] = True, False
        T, S = c["T"], c["S"]
        c["window"] = pick(rng, [1, 1, 2, 3, max(1, T // 2), T, S, T + S + 3, 4096])
    if want["softcap"]:
        c["softcap"] = float(np.float32(pick(rng, [1.0, 5.0, 20.0, 30.0, 50.0])))
        # Queries times a gain so that the cap bites (Gemma 2's case: logits
        # of 150 under a cap of 50).
        c["query_gain"] = pick(rng, [1.0, 4.0, 7.0])
    if want["alibi"]:
        c["alibi"] = pick(rng, ["bloom", "bloom", "random"])
    if want["sinks"]:
        c["sinks"] = pick(rng, ["normal", "large"])
        if recipe == "sinks_empty_rows" or chance(rng, 0.3):
            if c["mask"] is None:
                c["mask"] = pick(rng, ["full", "broadcast"])
            c["empty_rows"] = True
    if want["attn_bias"]:
        c["attn_bias"] = pick(rng, ATTN_BIAS_SHAPES)
        c["attn_bias_values"] = pick(rng, ["normal", "normal", "-inf", "-1e4", "-inf row",
                                           "all"])
    if chance(rng, 0.25) or recipe == "gemma2" or not has_variants(c):
        c["scale"] = pick(rng, SCALES)


VARIANT_FIELDS = ("scale", "rope", "qk_norm_eps", "window", "softcap", "alibi", "sinks",
                  "attn_bias")


def has_variants(c):
    """Whether configuration c has a step of the served models' attention."""
    return any(key in c for key in VARIANT_FIELDS)


def make_config(seed, variants=False):
    """The configuration of one seed: a dict of sizes, variants and options.
    With `variants` (mha-gen has the flags of the served models' attention),
    about one seed in three also draws those (draw_model_variants); the
    classic fields are drawn first, from the same stream, either way."""
    rng = np.random.default_rng([seed, 0x6D6861])
    c = {"seed": seed}
    tiny = chance(rng, 0.06)  # every size 1 at once
    c["B"] = 1 if tiny else pick(rng, [1, 1, 2, 3])
    c["T"] = 1 if tiny else pick(rng, SEQ_LENGTHS)
    c["H"] = 1 if tiny else pick(rng, HEADS)
    c["Hkv"] = 1 if tiny else pick(rng, divisors(c["H"]))
    c["split_first"] = chance(rng, 0.2)
    c["cross"] = chance(rng, 0.45)
    c["dynamic"] = chance(rng, 0.3)
    c["causal"] = chance(rng, 0.4)
    c["bias"] = chance(rng, 0.7)
    c["mask"] = None if not chance(rng, 0.35) else pick(rng, ["full", "broadcast"])
    # Rows that may attend no key at all (the semantics: zero attention output).
    c["empty_rows"] = c["mask"] is not None and chance(rng, 0.15)

    # Head dimensions: --head-dim given (any model width) or D = H * dk
    # (mha-gen's default); dv equal to dk (the default) or not.
    gen = {}
    if c["split_first"]:
        slice_width = 1 if tiny else pick(rng, [1, 1, 2, 3, 4, 5])
        c["D"] = c["H"] * slice_width
        c["dk"] = 1 if tiny else pick(rng, HEAD_DIMS + [slice_width] * 3)
        if c["dk"] != slice_width or chance(rng, 0.3):
            gen["head_dim"] = c["dk"]
    elif tiny:
        c["D"], c["dk"] = 1, 1
    elif chance(rng, 0.5):
        c["dk"] = pick(rng, HEAD_DIMS)
        c["D"] = c["H"] * c["dk"]
    else:
        c["dk"] = pick(rng, HEAD_DIMS)
        c["D"] = pick(rng, WIDTHS)
        gen["head_dim"] = c["dk"]
    if c["D"] % c["H"] == 0 and c["D"] // c["H"] == c["dk"] and "head_dim" not in gen:
        pass  # mha-gen derives dk = D / H
    else:
        gen["head_dim"] = c["dk"]
    if chance(rng, 0.65) and not tiny:
        c["dv"] = pick(rng, [d for d in HEAD_DIMS if d != c["dk"]])
        gen["value_dim"] = c["dv"]
    else:
        c["dv"] = c["dk"]

    # Cross-attention: its own sequence length S and width D_kv.
    if c["cross"]:
        c["S"] = 1 if tiny else pick(rng, SEQ_LENGTHS)
        if c["split_first"]:
            c["Dkv"] = c["Hkv"] * (1 if tiny else pick(rng, [1, 2, 3, 4]))
        else:
            c["Dkv"] = 1 if tiny else pick(rng, WIDTHS)
        how = pick(rng, ["both", "both", "seq", "dim", "flag"])
        if how == "seq" and c["Dkv"] != c["D"]:
            how = "both"
        if how == "dim" and c["S"] != c["T"]:
            how = "both"
        if how == "flag":
            c["S"], c["Dkv"] = c["T"], c["D"]
        if how in ("both", "seq"):
            gen["kv_seq"] = c["S"]
        if how in ("both", "dim"):
            gen["kv_dim"] = c["Dkv"]
        if how == "flag" or chance(rng, 0.2):
            gen["cross_flag"] = True
    else:
        c["S"], c["Dkv"] = c["T"], c["D"]
    if chance(rng, 0.5) and not tiny:
        c["Dout"] = pick(rng, [1, 2, 3, 5, 9, 16])
        gen["out_dim"] = c["Dout"]
    else:
        c["Dout"] = c["D"] if not tiny else 1
        if tiny:
            gen["out_dim"] = 1
    c["gen"] = gen

    # Pipeline options of mha-run that change the code paths.
    run = []
    run += ["--attention", pick(rng, ["fused", "fused", "decomposed", "decomposed", "auto"])]
    if chance(rng, 0.6):
        run += ["--query-tile", str(pick(rng, QUERY_TILES))]
    if chance(rng, 0.6):
        run += ["--key-tile", str(pick(rng, KEY_TILES))]
    if chance(rng, 0.02):
        run += ["--key-splits", str(pick(rng, HUGE_KEY_SPLITS))]
    elif chance(rng, 0.5):
        run += ["--key-splits", str(pick(rng, KEY_SPLITS))]
    run += ["--threads", str(pick(rng, [1, 2]))]
    if chance(rng, 0.5):
        run += ["--projection-row-tile", str(pick(rng, ROW_TILES))]
    if chance(rng, 0.5):
        run += ["--projection-col-tile", str(pick(rng, COL_TILES))]
    for flag, p in (("--vectorize", 0.2), ("--fuse-projections", 0.1),
                    ("--prepare-weights", 0.1), ("--fold-head-layouts", 0.1)):
        if chance(rng, p):
            run.append(flag + "=false")
    c["run"] = run
    # Drawn last, so that the draws above (and the configurations of earlier
    # seeds' other fields) do not move.
    c["causal_bottom_right"] = c["causal"] and chance(rng, 0.5)
    # Logits anywhere in float32's range: integer inputs and weights (so that
    # the scores are exact in float32 and float64 alike) with the query's
    # weights and bias times 2^e, e from -100 to as far as the largest
    # possible score stays below 3e38 (scores of 1e-30 to 1e38).
    if chance(rng, 0.15):
        bound = c["dk"] * (c["D"] + 1) * (c["Dkv"] + 1)
        top = int(np.floor(np.log2(3e38 / bound)))
        c["logit_exponent"] = int(rng.integers(-100, top + 1))
    if variants:
        draw_model_variants(c)
    return c


def gen_args(c):
    """mha-gen's options for configuration c."""
    g = c["gen"]
    args = ["--batch", str(c["B"]), "--seq", str(c["T"]), "--d-model", str(c["D"]),
            "--heads", str(c["H"])]
    if c["Hkv"] != c["H"] or (c["seed"] % 5 == 0):
        args += ["--kv-heads", str(c["Hkv"])]
    for key, flag in (("head_dim", "--head-dim"), ("value_dim", "--value-dim"),
                      ("kv_seq", "--kv-seq"), ("kv_dim", "--kv-dim"),
                      ("out_dim", "--out-dim")):
        if key in g:
            args += [flag, str(g[key])]
    if g.get("cross_flag"):
        args.append("--cross")
    if c.get("causal_bottom_right"):
        args.append("--causal-bottom-right")
    elif c["causal"]:
        args.append("--causal")
    if c["mask"] == "full":
        args.append("--mask")
    elif c["mask"] == "broadcast":
        args.append("--mask-broadcast")
    if not c["bias"]:
        args.append("--no-bias")
    if c["split_first"]:
        args.append("--split-first")
    if c["dynamic"]:
        args.append("--dynamic")
    rope = c.get("rope")
    if rope:
        args += ["--rope", rope["layout"]]
        if rope["base"] != 10000.0:
            args += ["--rope-base", repr(rope["base"])]
        if rope["pass_rotary_dim"]:
            args += ["--rotary-dim", str(rope["rotary_dim"])]
        if rope["scale"] != 1.0:
            args += ["--rope-scale", repr(rope["scale"])]
        if rope["inv_freq"] is not None:
            args.append("--rope-inv-freq")
        if rope["mscale"] != 1.0:
            args += ["--rope-mscale", repr(rope["mscale"])]
    if "qk_norm_eps" in c:
        args.append("--qk-norm")
        if c["qk_norm_eps"] is not None:
            args += ["--qk-norm-eps", repr(c["qk_norm_eps"])]
    if "window" in c:
        args += ["--window", str(c["window"])]
    if "softcap" in c:
        args += ["--softcap", repr(c["softcap"])]
    if "alibi" in c:
        args.append("--alibi")
    if "sinks" in c:
        args.append("--sinks")
    if "attn_bias" in c:
        args += ["--attn-bias", c["attn_bias"]]
    if "scale" in c:
        args += ["--scale", repr(c["scale"])]
    return args


def describe(c):
    parts = ["B=%d T=%d S=%d D=%d Dkv=%d H=%d Hkv=%d dk=%d dv=%d Dout=%d" % (
        c["B"], c["T"], c["S"], c["D"], c["Dkv"], c["H"], c["Hkv"], c["dk"],
        c["dv"], c["Dout"])]
    for key in ("cross", "causal", "causal_bottom_right", "split_first",
                "dynamic"):
        if c.get(key):
            parts.append(key)
    if c["mask"]:
        parts.append("mask=" + c["mask"] + (" with empty rows" if c["empty_rows"] else ""))
    parts.append("bias" if c["bias"] else "no bias")
    if "logit_exponent" in c:
        parts.append("integer inputs, logits times 2^%d" % c["logit_exponent"])
    if "recipe" in c:
        v = ["variants(%s):" % c["recipe"]]
        rope = c.get("rope")
        if rope:
            v.append("rope=%s R=%d base=%g scale=%g mscale=%g%s" % (
                rope["layout"], rope["rotary_dim"], rope["base"], rope["scale"],
                rope["mscale"], " inv_freq=" + rope["inv_freq_kind"]
                if rope["inv_freq"] is not None else ""))
        if "qk_norm_eps" in c:
            v.append("qk_norm eps=%g" % (1e-6 if c["qk_norm_eps"] is None else c["qk_norm_eps"]))
        for key in ("window", "softcap", "alibi", "sinks", "scale"):
            if key in c:
                v.append("%s=%s" % (key, c[key]))
        if "query_gain" in c:
            v.append("query gain %g" % c["query_gain"])
        if "attn_bias" in c:
            v.append("attn_bias=[%s] %s" % (c["attn_bias"], c["attn_bias_values"]))
        parts.append(" ".join(v))
    return " ".join(parts)


def make_inputs(c):
    """float32 inputs (bool mask) named as the graph's arguments."""
    rng = np.random.default_rng([c["seed"], 0x696E70])
    B, T, S, D, Dkv = c["B"], c["T"], c["S"], c["D"], c["Dkv"]
    H, Hkv, dk, dv, Dout = c["H"], c["Hkv"], c["dk"], c["dv"], c["Dout"]
    f32 = np.float32
    inputs = {"x": rng.standard_normal((B, T, D)).astype(f32)}
    if c["cross"]:
        inputs["kv"] = rng.standard_normal((B, S, Dkv)).astype(f32)
    if c["split_first"]:
        wd, wkv = D // H, Dkv // Hkv
        inputs["w_q"] = (rng.standard_normal((H, wd, dk)) / np.sqrt(wd)).astype(f32)
        inputs["w_k"] = (rng.standard_normal((Hkv, wkv, dk)) / np.sqrt(wkv)).astype(f32)
        inputs["w_v"] = (rng.standard_normal((Hkv, wkv, dv)) / np.sqrt(wkv)).astype(f32)
    else:
        inputs["w_q"] = (rng.standard_normal((D, H * dk)) / np.sqrt(D)).astype(f32)
        inputs["w_k"] = (rng.standard_normal((Dkv, Hkv * dk)) / np.sqrt(Dkv)).astype(f32)
        inputs["w_v"] = (rng.standard_normal((Dkv, Hkv * dv)) / np.sqrt(Dkv)).astype(f32)
    inputs["w_o"] = (rng.standard_normal((H * dv, Dout)) / np.sqrt(H * dv)).astype(f32)
    if c["bias"]:
        for name, n in (("b_q", H * dk), ("b_k", Hkv * dk), ("b_v", Hkv * dv), ("b_o", Dout)):
            inputs[name] = (0.5 * rng.standard_normal(n)).astype(f32)
    if c["mask"]:
        mb = B if c["mask"] == "full" else 1
        mask = rng.random((mb, T, S)) < pick(rng, [0.3, 0.6, 0.9])
        allowed = mask & causal_allowed(c)
        # At least one key per query row, unless this case asks for rows that
        # may attend nothing (then some rows are emptied on purpose).
        for b in range(mb):
            for t in range(T):
                if not allowed[b, t].any():
                    reachable = np.flatnonzero(causal_allowed(c)[t])
                    if reachable.size:
                        mask[b, t, int(pick(rng, list(reachable)))] = True
        if c["empty_rows"]:
            for b in range(mb):
                for t in range(T):
                    if rng.random() < 0.3:
                        mask[b, t, :] = False
        inputs["mask"] = mask
    if "logit_exponent" in c:
        exact_logits(inputs, c["logit_exponent"], rng)
    if "recipe" in c:
        variant_inputs(c, inputs)
    return inputs


def variant_inputs(c, inputs):
    """The arguments of the served models' steps (own stream: the classic
    inputs stay those of the seed without variants)."""
    rng = np.random.default_rng([c["seed"], 0x76696E])
    B, T, S, H, dk = c["B"], c["T"], c["S"], c["H"], c["dk"]
    f32 = np.float32
    if c.get("query_gain", 1.0) != 1.0:
        for name in ("w_q", "b_q"):
            if name in inputs:
                inputs[name] = (inputs[name] * c["query_gain"]).astype(f32)
    rope = c.get("rope")
    if rope and rope["inv_freq"] is not None:
        inputs["rope_inv_freq"] = rope["inv_freq"].astype(f32)
    if "qk_norm_eps" in c:
        inputs["q_norm"] = (1 + 0.3 * rng.standard_normal(dk)).astype(f32)
        inputs["k_norm"] = (1 + 0.3 * rng.standard_normal(dk)).astype(f32)
    if "alibi" in c:
        slopes = bloom_slopes(H) if c["alibi"] == "bloom" else rng.uniform(-0.5, 1.0, H)
        inputs["alibi_slopes"] = slopes.astype(f32)
    if "sinks" in c:
        sinks = 2 * rng.standard_normal(H)
        if c["sinks"] == "large":
            sinks = sinks + 8
        inputs["sinks"] = sinks.astype(f32)
    if "attn_bias" in c:
        sizes = {"B": B, "H": H, "T": T, "S": S, "1": 1}
        shape = tuple(sizes[e] for e in c["attn_bias"].split(","))
        bias = rng.standard_normal(shape)
        kind = c["attn_bias_values"]
        if kind in ("-inf", "all"):
            bias[rng.random(shape) < 0.2] = -np.inf
        if kind in ("-1e4", "all"):
            bias[rng.random(shape) < 0.3] = -1e4
        if kind in ("-inf row", "all"):
            # One row of keys all -inf: those queries attend nothing.
            row = tuple(int(rng.integers(n)) for n in shape[:3])
            bias[row] = -np.inf
        inputs["attn_bias"] = bias.astype(f32)


def exact_logits(inputs, exponent, rng):
    """Makes every float input an integer in [-1, 1] (mask kept), then the
    query's weights and bias times 2^exponent: every score is an integer
    times 2^exponent, exact in float32, so the softmax of the compiled code
    and of the float64 reference see the same scores at any magnitude."""
    for name, value in inputs.items():
        if name != "mask":
            inputs[name] = rng.integers(-1, 2, value.shape).astype(np.float32)
    for name in ("w_q", "b_q"):
        if name in inputs:
            inputs[name] = np.ldexp(inputs[name], exponent).astype(np.float32)


def causal_allowed(c):
    """[T, S]: key j allowed for query i: j <= i when causal (top-left),
    j <= i + S - T when aligned bottom-right (queries i < T - S see none);
    with a window W also j > p_i - W (p_i: i or i + S - T)."""
    T, S = c["T"], c["S"]
    if not c["causal"]:
        return np.ones((T, S), dtype=bool)
    position = query_positions(c)[:, None]
    allowed = np.arange(S)[None, :] <= position
    if c.get("window") is not None:
        # The window: W keys up to the query's own position.
        allowed &= np.arange(S)[None, :] > position - c["window"]
    return allowed


def query_positions(c):
    """[T]: the position p_i of query i among the keys: i, or i + S - T
    when causal is aligned bottom-right."""
    offset = c["S"] - c["T"] if c["causal"] and c.get("causal_bottom_right") else 0
    return np.arange(c["T"]) + offset


def reference(c, inputs):
    """The layer in float64, from the semantics of test/vectors/README.md."""
    B, T, S, D, Dkv = c["B"], c["T"], c["S"], c["D"], c["Dkv"]
    H, Hkv, dk, dv = c["H"], c["Hkv"], c["dk"], c["dv"]
    f = {k: v.astype(np.float64) for k, v in inputs.items() if k != "mask"}
    x = f["x"]
    kv = f["kv"] if c["cross"] else x
    zero = np.zeros
    b_q = f.get("b_q", zero(H * dk))
    b_k = f.get("b_k", zero(Hkv * dk))
    b_v = f.get("b_v", zero(Hkv * dv))
    b_o = f.get("b_o", zero(c["Dout"]))
    if c["split_first"]:
        # Head h projects its own contiguous slice of width D/H with w_q[h].
        xs = x.reshape(B, T, H, D // H)
        kvs = kv.reshape(B, S, Hkv, Dkv // Hkv)
        q = np.einsum("bthw,hwd->bhtd", xs, f["w_q"])
        k = np.einsum("bshw,hwd->bhsd", kvs, f["w_k"])
        v = np.einsum("bshw,hwd->bhsd", kvs, f["w_v"])
        q = q + b_q.reshape(H, 1, dk)
        k = k + b_k.reshape(Hkv, 1, dk)
        v = v + b_v.reshape(Hkv, 1, dv)
    else:
        # Head h owns columns h*d ... (h+1)*d - 1 of the projection.
        q = (x @ f["w_q"] + b_q).reshape(B, T, H, dk).transpose(0, 2, 1, 3)
        k = (kv @ f["w_k"] + b_k).reshape(B, S, Hkv, dk).transpose(0, 2, 1, 3)
        v = (kv @ f["w_v"] + b_v).reshape(B, S, Hkv, dv).transpose(0, 2, 1, 3)
    # The served models' steps on Q and K (mha.attention's description in
    # dialects/MhaOps.td): QK-norm, an RMSNorm of each head's features
    # (eps 1e-6 unless given), then RoPE at positions 0 .. T-1.
    if "qk_norm_eps" in c:
        eps = 1e-6 if c["qk_norm_eps"] is None else c["qk_norm_eps"]
        q = q / np.sqrt((q * q).mean(-1, keepdims=True) + eps) * f["q_norm"]
        k = k / np.sqrt((k * k).mean(-1, keepdims=True) + eps) * f["k_norm"]
    if c.get("rope"):
        q = rope_np(q, c["rope"], f.get("rope_inv_freq"))
        k = rope_np(k, c["rope"], f.get("rope_inv_freq"))
    group = H // Hkv
    allowed = np.broadcast_to(causal_allowed(c), (B, T, S))
    if c["mask"]:
        allowed = allowed & inputs["mask"]  # [1, T, S] broadcasts over B
    # j - p_i, the distance of ALiBi
    distance = np.arange(S)[None, :] - query_positions(c)[:, None]
    heads = np.zeros((B, T, H * dv))
    for h in range(H):
        g = h // group  # grouped-query: query head h reads kv head h / (H/Hkv)
        # The score steps in mha.sdpa's order: scale, softcap, ALiBi, bias,
        # mask / causal / window, sinks in the denominator.
        scores = q[:, h] @ k[:, g].transpose(0, 2, 1)
        scores = scores / np.sqrt(dk) if c.get("scale") is None else scores * c["scale"]
        if c.get("softcap") is not None:
            scores = c["softcap"] * np.tanh(scores / c["softcap"])
        if c.get("alibi"):
            scores = scores + f["alibi_slopes"][h] * distance
        if c.get("attn_bias"):
            ab = f["attn_bias"]  # [B or 1, H or 1, T or 1, S]
            scores = scores + ab[:, min(h, ab.shape[1] - 1)]
        scores = np.where(allowed, scores, -np.inf)
        finite = np.isfinite(scores)  # -inf: a masked key or a bias of -inf
        row_max = np.where(finite, scores, -np.inf).max(axis=-1, keepdims=True)
        if c.get("sinks"):
            row_max = np.maximum(row_max, f["sinks"][h])
        row_max = np.where(np.isfinite(row_max), row_max, 0.0)
        p = np.exp(np.where(finite, scores - row_max, -np.inf))
        denom = p.sum(axis=-1, keepdims=True)
        if c.get("sinks"):
            denom = denom + np.exp(f["sinks"][h] - row_max)
        # A row that may attend no key gives zeros, never NaN (sinks or not).
        p = np.divide(p, denom, out=np.zeros_like(p),
                      where=(denom > 0) & finite.any(axis=-1, keepdims=True))
        heads[:, :, h * dv:(h + 1) * dv] = p @ v[:, g]
    return heads @ f["w_o"] + b_o


def rope_np(x, rope, inv_freq):
    """RoPE (from test/vectors/make_model_variants.py): rotates the first R
    features of every head of x [B, heads, T, dk] by position / scale times
    the frequency, cos and sin times mscale: pairs (i, i + R/2) for the half
    layout, (2i, 2i + 1) for the interleaved one."""
    R = rope["rotary_dim"]
    inv = inv_freq if inv_freq is not None else \
        float(rope["base"]) ** (-np.arange(R // 2, dtype=np.float64) * 2 / R)
    pos = np.arange(x.shape[2], dtype=np.float64) / rope["scale"]
    angle = pos[:, None] * inv[None, :]  # [T, R/2]
    cos, sin = rope["mscale"] * np.cos(angle), rope["mscale"] * np.sin(angle)
    if rope["layout"] == "half":
        first, second = np.arange(R // 2), np.arange(R // 2) + R // 2
    else:
        first, second = np.arange(0, R, 2), np.arange(1, R, 2)
    out = x.copy()
    u, v = x[..., first], x[..., second]
    out[..., first] = u * cos - v * sin
    out[..., second] = v * cos + u * sin
    return out


# A crash of a tool ends at once with its signal: LLVM's crash handler would
# run llvm-symbolizer, which can hang after the heap was corrupted (seen:
# "corrupted double-linked list", then a timeout instead of SIGABRT).
CHILD_ENV = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")


def config_of_meta(m):
    """The configuration of a reference case's meta.json (test/vectors/README.md;
    the served models' options of test/vectors/model_variants as
    make_model_variants.py writes them). None if it has an option this
    script cannot express."""
    c = {"B": m["B"], "T": m["T"], "S": m["S"], "D": m["D"], "Dkv": m["D_kv"],
         "Dout": m["D_out"], "H": m["H"], "Hkv": m["Hkv"], "dk": m["dk"], "dv": m["dv"],
         "causal": m["causal"],
         "causal_bottom_right": m.get("causal_bottom_right", False),
         "split_first": m["split_first"], "bias": m["bias"],
         "cross": m["cross"], "mask": "full" if m["mask"] else None}
    # (xscale is how the inputs were drawn: x.npy has it already.)
    if m.get("positions", "0..T-1") != "0..T-1":
        return None
    if abs(m["scale"] - 1 / np.sqrt(m["dk"])) >= 1e-12:
        c["scale"] = m["scale"]
    rope = m.get("rope")
    if rope:
        c["rope"] = {"layout": rope["layout"], "base": rope["base"],
                     "rotary_dim": rope["rotary_dim"], "scale": rope["scale"],
                     "mscale": rope["mscale"]}
    if m.get("qk_norm_eps") is not None:
        c["qk_norm_eps"] = m["qk_norm_eps"]
    for key in ("window", "softcap", "attn_bias"):
        if m.get(key) is not None:
            c[key] = m[key]
    for key in ("alibi", "sinks"):
        if m.get(key):
            c[key] = True
    return c


def check_reference(vectors):
    """Runs reference() on the cases of test/vectors (meta.json, inputs,
    y.npy) and of its subfolders (model_variants/...): the reference of this
    script against the team's. Returns the number of cases that differ by
    more than their tolerance."""
    bad = 0
    cases = []
    for case in sorted(os.listdir(vectors)):
        folder = os.path.join(vectors, case)
        if os.path.isfile(os.path.join(folder, "meta.json")):
            cases.append(case)
        elif os.path.isdir(folder):
            cases += [case + "/" + sub for sub in sorted(os.listdir(folder))
                      if os.path.isfile(os.path.join(folder, sub, "meta.json"))]
    for case in cases:
        folder = os.path.join(vectors, case)
        with open(os.path.join(folder, "meta.json")) as f:
            m = json.load(f)
        c = config_of_meta(m)
        if c is None:
            print("reference %s: an option this script does not draw: FAILED" % case)
            bad += 1
            continue
        inputs = {name: np.load(os.path.join(folder, name + ".npy"))
                  for name in m["files"] if name != "y"}
        expected = np.load(os.path.join(folder, "y.npy"))
        with np.errstate(all="raise", under="ignore"):
            got = reference(c, inputs)
        tol = m["tolerance"]
        ok = (got.shape == expected.shape and
              np.all(np.abs(got - expected) <= tol["atol"] + tol["rtol"] * np.abs(expected)))
        print("reference %s: max abs difference %.1e: %s" % (
            case, float(np.abs(got - expected).max()) if got.shape == expected.shape else np.inf,
            "ok" if ok else "FAILED"))
        bad += not ok
    return bad


def limit_memory(megabytes):
    def apply():
        if megabytes:
            size = megabytes << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return apply


def run_one(seed, args, bin_dir, work_root):
    """Runs one configuration; returns (seed, config, kind, detail, commands)."""
    c = make_config(seed, args.variants)
    case_dir = os.path.join(work_root, "seed%d" % seed)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    graph = os.path.join(case_dir, "graph.mlir")
    gen_cmd = [os.path.join(bin_dir, "mha-gen")] + gen_args(c) + ["-o", graph]
    ref_path = os.path.join(case_dir, "ref.npy")
    run_cmd = ([os.path.join(bin_dir, "mha-run"), graph, "--inputs", case_dir,
                "--expect", ref_path, "--atol", repr(args.atol), "--rtol", repr(args.rtol),
                "--check"] + c["run"])
    commands = [gen_cmd, run_cmd]
    with open(os.path.join(case_dir, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# %s\nset -e\n" % describe(c))
        f.write("\n".join(shlex.join(cmd) for cmd in commands) + "\n")

    kind, detail = None, ""
    try:
        inputs = make_inputs(c)
        for name, value in inputs.items():
            np.save(os.path.join(case_dir, name + ".npy"), value)
        # Underflow is the softmax of logits far apart: 0, as it should be.
        with np.errstate(all="raise", under="ignore"):
            expected = reference(c, inputs)
        np.save(ref_path, expected.astype(np.float32))
    except Exception as error:  # a bug of this script: report, never hide
        return seed, c, "driver-error", repr(error), commands

    for step, cmd in (("mha-gen", gen_cmd), ("mha-run", run_cmd)):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=args.timeout, env=CHILD_ENV,
                                  preexec_fn=limit_memory(args.mem_limit_mb))
        except subprocess.TimeoutExpired:
            kind, detail = step + " timeout", "no exit within %g s" % args.timeout
            break
        except OSError as error:  # e.g. the binary being rebuilt meanwhile
            kind, detail = step + " did not start", str(error)
            break
        out = proc.stdout + proc.stderr
        if proc.returncode == 0:
            continue
        if proc.returncode < 0:
            kind = "%s crash (signal %d)" % (step, -proc.returncode)
        elif step == "mha-run" and proc.returncode == 1:
            bad = [l for l in out.splitlines()
                   if (l.startswith("expect ") or l.startswith("check ")) and not l.endswith(": ok")]
            which = sorted({l.split()[0] for l in bad}) or ["?"]
            kind = "mha-run mismatch (%s)" % "+".join(
                "NumPy" if w == "expect" else "C++ --check" if w == "check" else w
                for w in which)
        else:
            kind = "%s exit %d" % (step, proc.returncode)
        lines = [l for l in out.splitlines() if "error" in l or " max abs " in l]
        detail = " | ".join((lines or out.strip().splitlines() or [""])[-3:])
        break
    if kind is None and not args.keep_all:
        shutil.rmtree(case_dir, ignore_errors=True)
    elif kind is not None and not args.keep:
        shutil.rmtree(case_dir, ignore_errors=True)
    return seed, c, kind, detail, commands


def signature(kind, detail):
    """The class of a failure: its kind and its first message, without paths
    and numbers (a mismatch: whether the error is finite; a crash or a
    timeout: only its kind)."""
    if "mismatch" in kind:
        return kind + (": non-finite error" if re.search(r"INF|NAN", detail, re.I) else "")
    if "crash" in kind or "timeout" in kind:
        return kind
    text = detail.split(" | ")[0]
    text = re.sub(r"/\S+", "FILE", text)
    text = re.sub(r"\d+", "N", text)
    return kind + (": " + text[:150] if text else "")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "..", "build", "bin")
    parser = argparse.ArgumentParser(
        description="Differential test: random valid mha layers, mha-run "
                    "against a float64 NumPy reference and --check.")
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=100, help="configurations (default 100)")
    parser.add_argument("--jobs", type=int, default=2, help="configurations run at once (default 2)")
    parser.add_argument("--keep", action="store_true",
                        help="keep each failing case's folder (under --work)")
    parser.add_argument("--keep-all", action="store_true", help="keep every case's folder")
    parser.add_argument("--work", help="folder for the cases (default: a new temporary one)")
    parser.add_argument("--bin", default=default_bin, help="folder of mha-gen and mha-run")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    # A hang detector, not a speed limit: most cases take well under 1 s,
    # and a slow, loaded machine must not fail the test. (Seed 172 of the
    # lit test's range took 14 to 16 s, all of it in LLVM 22's DAG
    # combiner, until runtime/LLVMOptimizer.h narrowed its constant-mask
    # stores; 20 s timed out under load.)
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds one tool may run (default 60; most cases take "
                             "well under 1 s)")
    parser.add_argument("--mem-limit-mb", type=int, default=4096,
                        help="address-space limit of each tool, 0: none (default 4096; "
                             "0 under AddressSanitizer)")
    parser.add_argument("--list", action="store_true",
                        help="print each seed's configuration and commands, run nothing")
    parser.add_argument("--quiet", action="store_true", help="no line per passing seed")
    parser.add_argument("--no-variants", action="store_true",
                        help="draw none of the served models' variants (RoPE, QK-norm, window, "
                             "softcap, ALiBi, sinks, attn_bias, scale) even where mha-gen has "
                             "their flags")
    parser.add_argument("--check-reference", metavar="VECTORS",
                        help="only compare this script's reference with the cases in VECTORS "
                             "(test/vectors), run nothing")
    args = parser.parse_args()
    if args.check_reference:
        return 1 if check_reference(args.check_reference) else 0
    if args.count < 0 or args.jobs < 1 or args.seed_start < 0:
        parser.error("--count must be >= 0, --jobs >= 1 and --seed-start >= 0")
    bin_dir = os.path.abspath(args.bin)
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            parser.error("no executable %s in %s (--bin)" % (tool, bin_dir))
    seeds = range(args.seed_start, args.seed_start + args.count)
    # The served models' variants, drawn when mha-gen has their flags.
    flags = model_variant_flags(bin_dir)
    args.variants = len(flags) == len(VARIANT_FLAGS)
    if args.no_variants:
        args.variants = False
        variants_note = "model variants off (--no-variants)"
    elif args.variants:
        variants_note = "%d drew model variants"
    else:
        variants_note = "model variants not drawn: mha-gen lacks %s" % " ".join(
            f for f in VARIANT_FLAGS if f not in flags)
    if args.list:
        for seed in seeds:
            c = make_config(seed, args.variants)
            print("seed %d: %s\n  mha-gen %s\n  mha-run ... %s" % (
                seed, describe(c), shlex.join(gen_args(c)), shlex.join(c["run"])))
        return 0

    work_root = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="mha-diff.")
    os.makedirs(work_root, exist_ok=True)
    me = os.path.abspath(__file__)
    start = time.monotonic()
    failures = []
    passed = 0
    variant_seeds = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, seed, args, bin_dir, work_root) for seed in seeds]
        for future in futures:  # in seed order, so the output is deterministic
            seed, c, kind, detail, commands = future.result()
            variant_seeds += "recipe" in c
            if kind is None:
                passed += 1
                if not args.quiet:
                    print("PASS seed %d" % seed, flush=True)
                continue
            failures.append((seed, c, kind, detail))
            print("FAIL seed %d: %s: %s" % (seed, kind, detail))
            print("  config: %s" % describe(c))
            print("  reproduce: /usr/bin/python3 %s --bin %s --seed-start %d --count 1 --keep"
                  " --work /tmp/mha-diff-seed%d" % (me, shlex.quote(bin_dir), seed, seed))
            print("  commands (inputs in %s%s):" % (
                os.path.dirname(commands[0][-1]), "" if args.keep else ", removed; use --keep"))
            for cmd in commands:
                print("    " + shlex.join(cmd))
            sys.stdout.flush()
    elapsed = time.monotonic() - start
    if not args.work and not ((args.keep and failures) or args.keep_all):
        shutil.rmtree(work_root, ignore_errors=True)

    if failures:
        classes = {}
        for seed, c, kind, detail in failures:
            classes.setdefault(signature(kind, detail), []).append(seed)
        print("failures by class:")
        for sig, class_seeds in sorted(classes.items(), key=lambda item: -len(item[1])):
            shown = " ".join(str(s) for s in class_seeds[:8])
            more = " ..." if len(class_seeds) > 8 else ""
            print("  %4d  %s\n        seeds %s%s" % (len(class_seeds), sig, shown, more))
    print("seeds %d..%d, %d jobs, %.1f s" % (
        args.seed_start, args.seed_start + args.count - 1, args.jobs, elapsed))
    print("%d passed, %d failed; %s" % (
        passed, len(failures),
        variants_note % variant_seeds if "%d" in variants_note else variants_note))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
