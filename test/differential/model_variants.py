"""The served models' attention in the differential test (differential.py).

About one seed in three (when mha-gen has every flag of VARIANT_FLAGS)
draws, from its own random stream on top of the seed's classic
configuration, the steps of served models' attention (draw_model_variants)
and their arguments (variant_inputs); pick and chance are the draws of
every configuration.
"""

import os
import re
import subprocess

import numpy as np

from layer_reference import bloom_slopes, default_inv_freq, llama3_inv_freq, yarn_inv_freq


def pick(rng, values):
    return values[int(rng.integers(len(values)))]


def chance(rng, p):
    return bool(rng.random() < p)


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


def variant_gen_args(c):
    """mha-gen's flags of the served models' variants drawn into c (RoPE,
    QK-norm, window, softcap, ALiBi, sinks, attn_bias, scale)."""
    args = []
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
