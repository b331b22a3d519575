"""The 13 reference cases of the served models' attention
(test/vectors/model_variants) through mha.layer(): the options of each
case's meta.json as keywords, its .npy inputs passed by argument name, y
compared with its y.npy within 1e-4; then the options' and the new arrays'
errors."""
import glob
import json
import os
import sys

import numpy as np

import mha

ROOT = sys.argv[1]


def options_of(meta, static=True):
    """mha.layer's keywords for a case (model-variants-run.test spells the
    same for mha-gen)."""
    o = dict(d_model=meta["D"], out_dim=meta["D_out"],
             heads=meta["H"], kv_heads=meta["Hkv"], head_dim=meta["dk"],
             value_dim=meta["dv"], causal=meta["causal"],
             causal_bottom_right=meta["causal_bottom_right"],
             split_first=meta["split_first"], bias=meta["bias"],
             cross=meta["cross"], mask=meta["mask"], scale=meta["scale"])
    # kv_dim and kv_seq only with cross: given, they make the graph take kv.
    if meta["cross"]:
        o["kv_dim"] = meta["D_kv"]
    if static:
        o.update(batch=meta["B"], seq=meta["T"])
        if meta["cross"]:
            o["kv_seq"] = meta["S"]
    rope = meta["rope"]
    if rope:
        o.update(rope=rope["layout"], rope_base=rope["base"],
                 rotary_dim=rope["rotary_dim"], rope_scale=rope["scale"],
                 rope_mscale=rope["mscale"],
                 rope_inv_freq=rope["inv_freq_given"])
    if meta["qk_norm_eps"] is not None:
        o.update(qk_norm=True, qk_norm_eps=meta["qk_norm_eps"])
    for key in ("window", "softcap", "attn_bias"):
        if meta[key] is not None:
            o[key] = meta[key]
    o.update(alibi=meta["alibi"], sinks=meta["sinks"])
    return o


def load(case):
    meta = json.load(open(os.path.join(case, "meta.json")))
    arrays = {name: np.load(os.path.join(case, name + ".npy"))
              for name in meta["files"]}
    return meta, arrays


cases = sorted(glob.glob(os.path.join(ROOT, "*", "meta.json")))
print("cases:", len(cases))
worst_all = 0.0
for path in cases:
    case = os.path.dirname(path)
    meta, arrays = load(case)
    y = arrays.pop("y")
    for how, static, pipeline in (("static", True, {}),
                                  ("dynamic", False, {}),
                                  ("decomposed", True,
                                   {"attention": "decomposed"})):
        layer = mha.layer(**options_of(meta, static), **pipeline)
        names = {name for name, _, _ in layer.arguments}
        assert names == set(arrays), (meta["name"], names, set(arrays))
        got = layer(**arrays)
        err = float(np.max(np.abs(got.astype(np.float64) - y)))
        worst_all = max(worst_all, err)
        ok = np.allclose(got, y, atol=1e-4, rtol=1e-4)
        print("%s (%s): max abs error %s 1e-4: %s" % (
            meta["name"], how, "<=" if err <= 1e-4 else ">", "ok" if ok
            else "FAILED %g" % err))
print("worst of all cases: %s 1e-4" % ("<=" if worst_all <= 1e-4 else ">"))

# prepare() binds the weights and the new arrays; each call passes x.
meta, arrays = load(os.path.join(ROOT, "gpt_oss"))
layer = mha.layer(**options_of(meta))
layer.prepare(**{k: v for k, v in arrays.items() if k not in ("x", "mask", "y")})
got = layer(arrays["x"], mask=arrays["mask"])
print("gpt_oss, prepared:", np.allclose(got, arrays["y"], atol=1e-4, rtol=1e-4))


def error(what, call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the test prints what it is)
        print("%s: %s: %s" % (what, type(e).__name__, e))
    else:
        print("%s: no error" % what)


base = dict(d_model=32, heads=4, causal=True)
error("window without causal", lambda: mha.layer(d_model=32, heads=4, window=4))
error("zero window", lambda: mha.layer(window=0, **base))
error("odd rotary_dim", lambda: mha.layer(rope="half", rotary_dim=5, **base))
error("rotary_dim past dk", lambda: mha.layer(rope="half", rotary_dim=16, **base))
error("unknown rope layout", lambda: mha.layer(rope="spiral", **base))
error("empty rope layout", lambda: mha.layer(rope="", **base))
error("rope not a str", lambda: mha.layer(rope=True, **base))
error("rope_base without rope", lambda: mha.layer(rope_base=500000.0, **base))
error("negative rope_base", lambda: mha.layer(rope="half", rope_base=-1.0, **base))
error("bad attn_bias shape", lambda: mha.layer(attn_bias="B,T,H,S", **base))
error("attn_bias with kv_cache",
      lambda: mha.layer(attn_bias="B,H,T,S", kv_cache=16, **base))
error("rope with cross", lambda: mha.layer(d_model=32, heads=4, cross=True,
                                           rope="half"))
error("softcap a string", lambda: mha.layer(softcap="fifty", **base))

# The new arrays: their dtype and shape are checked by name, as x's.
meta, arrays = load(os.path.join(ROOT, "bloom"))
layer = mha.layer(**options_of(meta))
good = {k: v for k, v in arrays.items() if k != "y"}


def call_with(**changed):
    return lambda: layer(**dict(good, **changed))


error("float64 alibi_slopes",
      call_with(alibi_slopes=good["alibi_slopes"].astype(np.float64)))
error("short alibi_slopes", call_with(alibi_slopes=good["alibi_slopes"][:4]))
error("alibi_slopes a list",
      call_with(alibi_slopes=good["alibi_slopes"].tolist()))
missing = dict(good)
del missing["alibi_slopes"]
error("missing alibi_slopes", lambda: layer(**missing))

meta, arrays = load(os.path.join(ROOT, "qwen3"))
layer = mha.layer(**options_of(meta))
good = {k: v for k, v in arrays.items() if k != "y"}
error("q_norm of dk + 1", call_with(q_norm=np.ones(meta["dk"] + 1, np.float32)))
error("k_norm of rank 2",
      call_with(k_norm=np.ones((1, meta["dk"]), np.float32)))

meta, arrays = load(os.path.join(ROOT, "llama3"))
layer = mha.layer(**options_of(meta))
good = {k: v for k, v in arrays.items() if k != "y"}
error("rope_inv_freq of R", call_with(rope_inv_freq=np.ones(16, np.float32)))

meta, arrays = load(os.path.join(ROOT, "float_mask_empty_rows"))
layer = mha.layer(**options_of(meta))
good = {k: v for k, v in arrays.items() if k != "y"}
bias = good["attn_bias"]
error("attn_bias float64", call_with(attn_bias=bias.astype(np.float64)))
error("attn_bias bool", call_with(attn_bias=bias > 0))
error("attn_bias [B, H, T, S + 1]",
      call_with(attn_bias=np.zeros(bias.shape[:3] + (bias.shape[3] + 1,),
                                   np.float32)))
print("attn_bias holds -inf:", bool(np.isneginf(bias).any()))
got = layer(**good)
print("attn_bias with -inf: finite output", bool(np.isfinite(got).all()),
      "within 1e-4", np.allclose(got, arrays["y"], atol=1e-4, rtol=1e-4))
# Float inputs are not scanned for NaN (as x is not): a NaN in attn_bias is
# no error.
nan_bias = bias.copy()
nan_bias[0, 0, 1, 5] = np.nan
got = layer(**dict(good, attn_bias=nan_bias))
print("NaN in attn_bias: no error, output shape", got.shape)
error("window a float", lambda: mha.layer(window=4.5, **base))
print("done")
