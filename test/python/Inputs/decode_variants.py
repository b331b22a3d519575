"""Decoding with the served models' variants from Python: a session of
mha.layer(kv_cache=C, rope=..., window=..., sinks=..., qk_norm=...) runs a
prefill and single-token steps, and every output row equals the plain
layer with the same options and weights over all the tokens so far (row t
of a causal layer depends on tokens 0..t only), within 1e-4."""
import numpy as np

import mha

rng = np.random.default_rng(7)
D, H, HKV, DK, C = 32, 4, 2, 8, 24


def run(name, steps=(5, 1, 1, 1, 1), batch=2, **variants):
    options = dict(d_model=D, heads=H, kv_heads=HKV, head_dim=DK, **variants)
    cached = mha.layer(kv_cache=C, **options)
    plain = mha.layer(causal=True, **options)
    weights = {}
    for arg, shape, dtype in cached.arguments:
        if arg in ("x", "k_cache", "v_cache", "cache_lengths"):
            continue
        shape = [s if s is not None else 1 for s in shape]
        weights[arg] = (rng.standard_normal(shape) * 0.3).astype(np.float32)
    if "q_norm" in weights:
        weights["q_norm"] = weights["q_norm"] + 1
        weights["k_norm"] = weights["k_norm"] + 1
    if "rope_inv_freq" in weights:
        weights["rope_inv_freq"] = np.abs(weights["rope_inv_freq"])
    cached.prepare(**weights)
    plain.prepare(**weights)
    session = cached.session(batch=batch)
    tokens = rng.standard_normal((batch, sum(steps), D)).astype(np.float32)
    worst, done = 0.0, 0
    for count in steps:
        y = session.step(np.ascontiguousarray(tokens[:, done:done + count]))
        done += count
        want = plain(np.ascontiguousarray(tokens[:, :done]))[:, done - count:]
        worst = max(worst, float(np.max(np.abs(y - want))))
    print("%s: max abs error %s 1e-4, lengths %s" % (
        name, "<=" if worst <= 1e-4 else "> (%.2e)" % worst,
        session.lengths.tolist()))


run("rope half, window 3, sinks", rope="half", window=3, sinks=True)
run("rope interleaved, rotary_dim 4, base 500000", rope="interleaved",
    rotary_dim=4, rope_base=500000.0)
run("rope with rope_inv_freq, mscale, scale", rope="half", rope_inv_freq=True,
    rope_mscale=1.3, rope_scale=2.0)
run("qk_norm, rope, softcap, alibi", qk_norm=True, rope="half", softcap=5.0,
    alibi=True)
run("window 1, sinks, batch 1", batch=1, window=1, sinks=True,
    steps=(3, 1, 1))
