#!/usr/bin/python3
"""Reference cases for the attention of served models: RoPE, QK-norm, sliding windows, ALiBi,
logit soft-capping, attention sinks, additive float masks and a scale of its own.

  /usr/bin/python3 make_model_variants.py --out test/vectors/model_variants [--no-torch]
  /usr/bin/python3 make_model_variants.py --out DIR --compare test/vectors/model_variants
  /usr/bin/python3 make_model_variants.py --out DIR --ort /tmp/ort   (onnxruntime-node in /tmp/ort)

Writes one folder per case in the layout of README.md: float32 .npy inputs named like the graph's
arguments (the new ones: rope_inv_freq, q_norm, k_norm, alibi_slopes, sinks, attn_bias), y.npy
computed in float64 by the NumPy reference below, and meta.json with every option and the tolerance.
mha does not implement these variants yet: the cases are what the compiler has to reproduce.

Two independent implementations of each case:
- reference(): plain NumPy, written from the semantics in README.md (each step of a score row in
  the fixed order, RoPE as a rotation of feature pairs);
- torch_forward(): PyTorch float64 following the Hugging Face modeling code of the model the case
  is named for (rotate_half / apply_rotary_pos_emb, GPT-J's rotate_every_two, repeat_kv, the eager
  attention of Gemma 2 with softcap and of gpt-oss with sinks, BLOOM's build_alibi_tensor and
  baddbmm, scaled_dot_product_attention with a float mask for T5 and BERT).
Their largest difference is torch_max_abs_diff in meta.json; the script fails above 1e-10.
--no-torch skips the cross-check (torch_max_abs_diff is then null). --ort DIR also runs the cases
ONNX Runtime's com.microsoft.GroupQueryAttention can express (ort_max_abs_diff, within the
tolerance; see ort_supports); skipped when DIR has no onnxruntime-node. --compare DIR checks that the
files just written equal those in DIR (the committed cases), so the data cannot drift from this
script. Every case draws from its own generator (seed, crc32 of its name): adding a case changes
no other. Needs Debian's python3-numpy, and python3-torch for the cross-check.
"""
import argparse, json, math, os, sys, zlib
import numpy as np

TORCH_LIMIT = 1e-10
# Arguments in the order meta.json lists them ("files"), after the classic ones.
NEW_ARGS = ("rope_inv_freq", "q_norm", "k_norm", "alibi_slopes", "sinks", "attn_bias")


# ---------------------------------------------------------------------------------------------
# Frequencies of the published RoPE scalings, used to make the rope_inv_freq arguments (NumPy ports
# of transformers' modeling_rope_utils; the torch check recomputes them its own way).

def default_inv_freq(base, dim):
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def llama3_inv_freq(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    """Llama 3.1: long wavelengths divided by factor, short ones kept, a smooth ramp between."""
    inv = default_inv_freq(base, dim)
    wavelen = 2 * math.pi / inv
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
    """YaRN as gpt-oss configures it (truncate: false): interpolation blended with extrapolation
    by a linear ramp over the dimensions; returns (inv_freq, attention factor = mscale)."""
    def correction_dim(rotations):
        return dim * math.log(original_max / (rotations * 2 * math.pi)) / (2 * math.log(base))
    low = max(correction_dim(beta_fast), 0.0)
    high = min(correction_dim(beta_slow), dim - 1.0)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv = (1 / (factor * pos_freqs)) * (1 - extrapolation) + (1 / pos_freqs) * extrapolation
    return inv, 0.1 * math.log(factor) + 1.0


def bloom_slopes(n_heads):
    """BLOOM's ALiBi slopes (build_alibi_tensor): a geometric sequence for the closest power of
    two, the odd powers of the next one's base for the remaining heads."""
    p = 2 ** math.floor(math.log2(n_heads))
    base = 2.0 ** (-(2.0 ** -(math.log2(p) - 3)))
    slopes = [base ** k for k in range(1, p + 1)]
    if p != n_heads:
        extra = 2.0 ** (-(2.0 ** -(math.log2(2 * p) - 3)))
        slopes += [extra ** k for k in range(1, 2 * min(p, n_heads - p), 2)]
    return np.array(slopes)


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's _relative_position_bucket (memory position minus query position)."""
    rp = np.asarray(relative_position)
    bucket = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        bucket += (rp > 0).astype(rp.dtype) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = num_buckets // 2
    small = rp < max_exact
    large = max_exact + (np.log(np.maximum(rp, 1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).astype(rp.dtype)
    large = np.minimum(large, num_buckets - 1)
    return bucket + np.where(small, rp, large)


# ---------------------------------------------------------------------------------------------
# The NumPy reference.

def rope_np(x, c, a, dt):
    """Rotates the first R features of every head of x [B, heads, T, dk] by position * frequency:
    pair (i, i + R/2) for the half layout, (2i, 2i + 1) for the interleaved one."""
    r = c["rope"]
    R = r["rotary_dim"]
    inv = (np.asarray(a["rope_inv_freq"], dt) if r["inv_freq_given"]
           else np.asarray(r["base"], dt) ** (-np.arange(R // 2, dtype=dt) * 2 / R))
    pos = np.arange(x.shape[2], dtype=dt) / dt(r["scale"])
    angle = pos[:, None] * inv[None, :]                       # [T, R/2]
    cos, sin = dt(r["mscale"]) * np.cos(angle), dt(r["mscale"]) * np.sin(angle)
    if r["layout"] == "half":
        first, second = np.arange(R // 2), np.arange(R // 2) + R // 2
    else:
        first, second = np.arange(0, R, 2), np.arange(1, R, 2)
    out = x.copy()
    u, v = x[..., first], x[..., second]
    out[..., first] = u * cos - v * sin
    out[..., second] = v * cos + u * sin
    return out


def reference(a, c, dt=np.float64):
    """Attention output y [B, T, D_out] of the case (arrays a, config c), in precision dt."""
    f = lambda k: np.asarray(a[k], dt)
    x = f("x")
    B, T, _ = x.shape
    S = T  # self-attention only: the keys are the queries' tokens, positions 0..T-1 for both
    H, Hkv, dk, dv = c["H"], c["Hkv"], c["dk"], c["dv"]
    bias = (lambda k: f(k)) if c["bias"] else (lambda k: dt(0))
    q = (x @ f("w_q") + bias("b_q")).reshape(B, T, H, dk).transpose(0, 2, 1, 3)
    k = (x @ f("w_k") + bias("b_k")).reshape(B, S, Hkv, dk).transpose(0, 2, 1, 3)
    v = (x @ f("w_v") + bias("b_v")).reshape(B, S, Hkv, dv).transpose(0, 2, 1, 3)
    if c["qk_norm_eps"] is not None:
        eps = dt(c["qk_norm_eps"])
        q = q / np.sqrt((q * q).mean(-1, keepdims=True) + eps) * f("q_norm")
        k = k / np.sqrt((k * k).mean(-1, keepdims=True) + eps) * f("k_norm")
    if c["rope"] is not None:
        q, k = rope_np(q, c, a, dt), rope_np(k, c, a, dt)
    i = np.arange(T)[:, None]
    j = np.arange(S)[None, :]
    allowed = np.ones((B, T, S), bool)
    if c["causal"]:
        allowed &= (j <= i)[None]
    if c["window"] is not None:
        allowed &= (j > i - c["window"])[None]
    if c["mask"]:
        allowed &= np.asarray(a["mask"], bool)
    heads = []
    for h in range(H):
        g = h // (H // Hkv)
        s = q[:, h] @ k[:, g].transpose(0, 2, 1) * dt(c["scale"])        # [B, T, S]
        if c["softcap"] is not None:
            s = dt(c["softcap"]) * np.tanh(s / dt(c["softcap"]))
        if c["alibi"]:
            s = s + f("alibi_slopes")[h] * (j - i).astype(dt)
        if c["attn_bias"] is not None:
            ab = f("attn_bias")
            s = s + ab[:, min(h, ab.shape[1] - 1)]                        # broadcasts B, T
        s = np.where(allowed, s, -np.inf)
        finite = np.isfinite(s)
        m = np.where(finite, s, -np.inf).max(-1, keepdims=True)
        if c["sinks"]:
            m = np.maximum(m, f("sinks")[h])
        m = np.where(np.isfinite(m), m, 0)
        e = np.where(finite, np.exp(np.where(finite, s, 0) - m), 0)
        den = e.sum(-1, keepdims=True)
        if c["sinks"]:
            den = den + np.exp(f("sinks")[h] - m)
        # A row with no finite score attends to nothing, sink or not: zero output.
        p = np.where(finite.any(-1, keepdims=True), e / np.where(den > 0, den, 1), 0)
        heads.append(p @ v[:, g])
    o = np.concatenate(heads, axis=-1)
    return o @ f("w_o") + bias("b_o")


# ---------------------------------------------------------------------------------------------
# The PyTorch cross-check, line by line from the Hugging Face modeling files.

def torch_forward(a, c):
    import torch
    import torch.nn.functional as F
    t = lambda k: torch.from_numpy(np.asarray(a[k], np.float64))
    model = c["model"]
    x = t("x")
    B, T, _ = x.shape
    H, Hkv, dk = c["H"], c["Hkv"], c["dk"]
    lin = lambda w, b: F.linear(x, t(w).T, t(b) if c["bias"] else None)   # nn.Linear: x W^T + b

    # modeling_llama.py
    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
        cos = cos.unsqueeze(unsqueeze_dim)
        sin = sin.unsqueeze(unsqueeze_dim)
        return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)

    def rotary_cos_sin(inv_freq, position_ids, attention_scaling=1.0):   # LlamaRotaryEmbedding
        inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(inv_freq.dtype)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos() * attention_scaling, emb.sin() * attention_scaling

    def repeat_kv(hidden_states, n_rep):
        batch, num_key_value_heads, slen, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
        return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)

    def eager_attention_forward(query, key, value, attention_mask, scaling, softcap=None, sinks=None):
        # Gemma 2's eager attention (softcap) and gpt-oss's (sinks) in one.
        key_states = repeat_kv(key, H // Hkv)
        value_states = repeat_kv(value, H // Hkv)
        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        if softcap is not None:
            attn_weights = attn_weights / softcap
            attn_weights = torch.tanh(attn_weights)
            attn_weights = attn_weights * softcap
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        if sinks is not None:
            sinks = sinks.reshape(1, -1, 1, 1).expand(query.shape[0], -1, query.shape[-2], -1)
            combined_logits = torch.cat([attn_weights, sinks], dim=-1)
            combined_logits = combined_logits - combined_logits.max(dim=-1, keepdim=True).values
            probs = F.softmax(combined_logits, dim=-1, dtype=combined_logits.dtype)
            attn_weights = probs[..., :-1]
        else:
            attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float64)
        return torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()

    def mask_4d():
        """The additive mask transformers builds (masking_utils): causal kv_idx <= q_idx, sliding
        window kv_idx > q_idx - sliding_window, the padding mask; -inf where not allowed."""
        qi = torch.arange(T)[:, None]
        kj = torch.arange(T)[None, :]
        ok = torch.ones(B, 1, T, T, dtype=torch.bool)
        if c["causal"]:
            ok = ok & (kj <= qi)
        if c["window"] is not None:
            ok = ok & (kj > qi - c["window"])
        if c["mask"]:
            ok = ok & torch.from_numpy(np.asarray(a["mask"], bool))[:, None]
        return torch.zeros(ok.shape, dtype=torch.float64).masked_fill(~ok, float("-inf"))

    def sdpa(q, k, v, attn_mask, scale):
        if hasattr(F, "scaled_dot_product_attention"):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=scale)
        # PyTorch 1.13 has it as _scaled_dot_product_attention (float masks are added, the scale
        # is 1/sqrt(E)): fold our scale into q.
        return F._scaled_dot_product_attention(q * (scale * math.sqrt(q.shape[-1])), k, v, attn_mask)[0]

    hidden_shape = (B, T, -1, dk)
    q = lin("w_q", "b_q").view(hidden_shape)
    k = lin("w_k", "b_k").view(hidden_shape)
    v = lin("w_v", "b_v").view(B, T, -1, c["dv"]).transpose(1, 2)
    position_ids = torch.arange(T)[None].expand(B, T)

    if model == "qwen3":
        def rms_norm(hidden_states, weight, eps):                          # Qwen3RMSNorm
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + eps)
            return weight * hidden_states
        q = rms_norm(q, t("q_norm"), c["qk_norm_eps"])
        k = rms_norm(k, t("k_norm"), c["qk_norm_eps"])
    q, k = q.transpose(1, 2), k.transpose(1, 2)

    r = c["rope"]
    if model in ("llama3", "qwen3", "gemma2"):
        if r["inv_freq_given"]:
            inv_freq = t("rope_inv_freq")
        else:                                                              # _compute_default_rope_parameters
            inv_freq = 1.0 / (r["base"] ** (torch.arange(0, dk, 2, dtype=torch.int64).to(torch.float64) / dk))
        cos, sin = rotary_cos_sin(inv_freq, position_ids, r["mscale"])
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
    elif model == "gpt_oss":
        def _apply_rotary_emb(x, cos, sin):                                # modeling_gpt_oss.py
            first_half, second_half = torch.chunk(x, 2, dim=-1)
            first_ = first_half * cos - second_half * sin
            second_ = second_half * cos + first_half * sin
            return torch.cat((first_, second_), dim=-1)
        freqs = position_ids[:, :, None].to(torch.float64) * t("rope_inv_freq")[None, None, :]
        cos = (freqs.cos() * r["mscale"])[:, None]
        sin = (freqs.sin() * r["mscale"])[:, None]
        q, k = _apply_rotary_emb(q, cos, sin), _apply_rotary_emb(k, cos, sin)
    elif model == "gptj":
        def create_sinusoidal_positions(num_pos, dim):                     # modeling_gptj.py
            # GPT-J divides int64 by int here, which is float32 in torch; the semantics ask
            # for the exact theta^(-2i/R), so float64 (the only change).
            inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim))
            sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.int64).to(torch.float64),
                                        inv_freq.to(torch.float64))
            return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)

        def rotate_every_two(x):
            x1 = x[:, :, :, ::2]
            x2 = x[:, :, :, 1::2]
            x = torch.stack((-x2, x1), dim=-1)
            return x.flatten(-2)

        def gptj_apply_rotary_pos_emb(tensor, sin, cos):
            sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
            cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
            return (tensor * cos) + (rotate_every_two(tensor) * sin)

        assert r["base"] == 10000
        rotary_dim = r["rotary_dim"]
        sincos = create_sinusoidal_positions(T, rotary_dim)[position_ids]
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        key, query = k.transpose(1, 2), q.transpose(1, 2)                  # GPT-J rotates [B, T, H, d]
        k_rot, k_pass = key[:, :, :, :rotary_dim], key[:, :, :, rotary_dim:]
        q_rot, q_pass = query[:, :, :, :rotary_dim], query[:, :, :, rotary_dim:]
        k_rot = gptj_apply_rotary_pos_emb(k_rot, sin, cos)
        q_rot = gptj_apply_rotary_pos_emb(q_rot, sin, cos)
        k = torch.cat([k_rot, k_pass], dim=-1).transpose(1, 2)
        q = torch.cat([q_rot, q_pass], dim=-1).transpose(1, 2)
    elif model == "neox_partial":
        # GPTNeoXLinearScalingRotaryEmbedding: t = t / scaling_factor, over rotary_ndims features.
        rotary_ndims = r["rotary_dim"]
        inv_freq = 1.0 / (r["base"] ** (torch.arange(0, rotary_ndims, 2).to(torch.float64) / rotary_ndims))
        tt = torch.arange(T, dtype=torch.float64) / r["scale"]
        freqs = torch.einsum("i,j->ij", tt, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None], emb.sin()[None]
        query_rot, query_pass = q[..., :rotary_ndims], q[..., rotary_ndims:]
        key_rot, key_pass = k[..., :rotary_ndims], k[..., rotary_ndims:]
        query, key = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
        q = torch.cat((query, query_pass), dim=-1)
        k = torch.cat((key, key_pass), dim=-1)
    else:
        assert r is None, model

    if model == "bloom":
        # build_alibi_tensor with an all-ones attention mask: slope * j (the key's position), then
        # baddbmm(alibi, q, k^T, beta=1, alpha=1/sqrt(head_dim)).
        attention_mask = torch.ones(B, T, dtype=torch.int64)
        slopes = t("alibi_slopes")
        arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
        alibi = (slopes[..., None] * arange_tensor).reshape(B * H, 1, T)
        matmul_result = alibi.baddbmm(batch1=q.reshape(B * H, T, dk), batch2=k.reshape(B * H, T, dk).transpose(-1, -2),
                                      beta=1.0, alpha=c["scale"])
        attention_scores = matmul_result.view(B, H, T, T) + mask_4d()
        attention_probs = F.softmax(attention_scores, dim=-1, dtype=torch.float64)
        o = torch.matmul(attention_probs, v).transpose(1, 2)
    elif model in ("t5", "bert_padding", "float_mask_empty_rows"):
        # The float mask (T5's position bias, BERT's extended attention mask) through SDPA; the
        # boolean parts as -inf in the same additive mask.
        attn_mask = t("attn_bias") + mask_4d()
        o = sdpa(q, repeat_kv(k, H // Hkv), v, attn_mask, c["scale"])
        # PyTorch gives NaN for a row that may attend to nothing; our rule is a zero output.
        o = torch.nan_to_num(o, nan=0.0).transpose(1, 2)
    else:
        o = eager_attention_forward(q, k, v, mask_4d(), c["scale"], softcap=c["softcap"],
                                    sinks=t("sinks") if c["sinks"] else None)
    o = o.reshape(B, T, -1)
    return F.linear(o, t("w_o").T, t("b_o") if c["bias"] else None).numpy()


def torch_arguments_check(a, c):
    """The arguments made by the NumPy ports above, recomputed with transformers' formulas in
    torch: the llama3 frequencies, BLOOM's slopes."""
    import torch
    r = c["rope"]
    if c["model"] == "llama3":
        inv_freq = 1.0 / (r["base"] ** (torch.arange(0, r["rotary_dim"], 2, dtype=torch.int64).to(torch.float64)
                                         / r["rotary_dim"]))
        factor, low_freq_factor, high_freq_factor, old_context_len = 8.0, 1.0, 4.0, 8192
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
        got = inv_freq_llama.to(torch.float32).numpy()
        assert np.array_equal(got, a["rope_inv_freq"]), (got, a["rope_inv_freq"])
        # The three bands of Llama 3.1 all occur (kept, smoothed, divided by the factor).
        assert (wavelen < high_freq_wavelen).any() and is_medium_freq.any() and (wavelen > low_freq_wavelen).any()
    if c["model"] == "bloom":
        num_heads = c["H"]
        closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
        base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
        powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
        slopes = torch.pow(base, powers)
        if closest_power_of_2 != num_heads:
            extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
            num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
            extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
            slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
        assert np.array_equal(slopes.numpy(), a["alibi_slopes"]), (slopes, a["alibi_slopes"])


def alibi_is_relative(a, c):
    """BLOOM adds slope * j; the semantics add slope * (j - i). They differ by slope * i, constant
    along a row, and softmax(s + k) = softmax(s) for a constant k: show it on this case's scores."""
    rng = np.random.default_rng(0)
    T = c["T"]
    s = rng.standard_normal((T, T))
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    sm = lambda z: np.exp(z - z.max(-1, keepdims=True)) / np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)
    for slope in np.asarray(a["alibi_slopes"], np.float64):
        assert np.abs(sm(s + slope * j) - sm(s + slope * (j - i))).max() < 1e-15


# ---------------------------------------------------------------------------------------------
# The ONNX Runtime check (--ort DIR: a folder where `npm install --ignore-scripts
# onnxruntime-node@1.30.0` was run; models built with Debian's python3-onnx): the cases whose
# variants com.microsoft.GroupQueryAttention has. Its RoPE takes cos/sin caches, made here from the
# frequencies (with mscale and the linear scale folded in), so ORT checks how RoPE is applied and
# the attention, not the frequencies. It rotates R/2 <= dk/2 pairs only when R/2 is a multiple of 8
# ("cos_cache dimension 1 must be <= head_size / 2 and a multiple of 8").

def ort_supports(c):
    # GQA is causal. Sinks are its head_sink input; the boolean mask (-inf where false), the float
    # mask and ALiBi (slope * (j - i), made here) its attention_bias [B or 1, H or 1, T, S]; QK-norm
    # is SimplifiedLayerNormalization (RMSNorm) before it.
    return (c["causal"] and (c["rope"] is None or c["rope"]["rotary_dim"] // 2 % 8 == 0))


def ort_forward(a, c, ort_dir, work):
    import subprocess, tempfile
    import onnx
    from onnx import helper, TensorProto, numpy_helper
    B, T, D, H, Hkv, dk = c["B"], c["T"], c["D"], c["H"], c["Hkv"], c["dk"]
    inits = {k: a[k] for k in ("w_q", "w_k", "w_v", "w_o")}
    nodes = []
    for n, w, b in (("q", "w_q", "b_q"), ("k", "w_k", "b_k"), ("v", "w_v", "b_v")):
        if c["bias"]:
            nodes += [helper.make_node("MatMul", ["x", w], [n + "0"]), helper.make_node("Add", [n + "0", b], [n])]
            inits[b] = a[b]
        else:
            nodes.append(helper.make_node("MatMul", ["x", w], [n]))
    if c["qk_norm_eps"] is not None:
        inits["heads_shape"] = np.array([B, T, -1, dk], np.int64)
        inits["flat_shape"] = np.array([B, T, -1], np.int64)
        for n, w in (("q", "q_norm"), ("k", "k_norm")):
            inits[w] = a[w]
            nodes += [helper.make_node("Reshape", [n, "heads_shape"], [n + "_heads"]),
                      helper.make_node("SimplifiedLayerNormalization", [n + "_heads", w], [n + "_normed"],
                                       axis=-1, epsilon=float(c["qk_norm_eps"])),
                      helper.make_node("Reshape", [n + "_normed", "flat_shape"], [n + "_n"])]
    r = c["rope"]
    attrs = dict(num_heads=H, kv_num_heads=Hkv, scale=float(c["scale"]), do_rotary=int(r is not None))
    if c["window"] is not None:
        attrs["local_window_size"] = int(c["window"])
    if c["softcap"] is not None:
        attrs["softcap"] = float(c["softcap"])
    if r is not None:
        attrs["rotary_interleaved"] = int(r["layout"] == "interleaved")
        R = r["rotary_dim"]
        inv = (np.asarray(a["rope_inv_freq"], np.float64) if r["inv_freq_given"]
               else r["base"] ** (-np.arange(R // 2) * 2.0 / R))
        ang = (np.arange(T) / r["scale"])[:, None] * inv[None, :]
        inits["cos"] = (r["mscale"] * np.cos(ang)).astype(np.float32)
        inits["sin"] = (r["mscale"] * np.sin(ang)).astype(np.float32)
    inits["pk"] = np.zeros((B, Hkv, 0, dk), np.float32)
    inits["pv"] = np.zeros((B, Hkv, 0, c["dv"]), np.float32)
    inits["seqlens_k"] = np.full(B, T - 1, np.int32)
    inits["total_len"] = np.array(T, np.int32)
    qk = ["q_n", "k_n"] if c["qk_norm_eps"] is not None else ["q", "k"]
    gqa_in = qk + ["v", "pk", "pv", "seqlens_k", "total_len"] + (["cos", "sin"] if r is not None else ["", ""])
    bias = np.zeros((1, 1, T, T), np.float32)
    if c["mask"]:
        bias = bias + np.where(np.asarray(a["mask"], bool), 0, -np.inf).astype(np.float32)[:, None]
    if c["attn_bias"] is not None:
        bias = bias + a["attn_bias"]
    if c["alibi"]:
        bias = bias + (a["alibi_slopes"][:, None, None] * (np.arange(T)[None, :] - np.arange(T)[:, None])
                       ).astype(np.float32)[None]
    if c["mask"] or c["sinks"] or c["attn_bias"] is not None or c["alibi"]:
        gqa_in.append("")                                   # position_ids
        if c["mask"] or c["attn_bias"] is not None or c["alibi"]:
            inits["attention_bias"] = np.ascontiguousarray(bias, np.float32)
            gqa_in.append("attention_bias")
        else:
            gqa_in.append("")
        if c["sinks"]:
            inits["head_sink"] = a["sinks"]
            gqa_in.append("head_sink")
    nodes.append(helper.make_node("GroupQueryAttention", gqa_in, ["att", "present_k", "present_v"],
                                  domain="com.microsoft", **attrs))
    if c["bias"]:
        nodes += [helper.make_node("MatMul", ["att", "w_o"], ["y0"]), helper.make_node("Add", ["y0", "b_o"], ["y"])]
        inits["b_o"] = a["b_o"]
    else:
        nodes.append(helper.make_node("MatMul", ["att", "w_o"], ["y"]))
    g = helper.make_graph(nodes, c["name"], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, T, D])],
                          [numpy_helper.from_array(np.ascontiguousarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8  # what ORT 1.30 loads from onnx 1.12
    model = os.path.join(work, c["name"] + ".onnx")
    onnx.save(m, model)
    xbin, ybin = os.path.join(work, c["name"] + ".x.bin"), os.path.join(work, c["name"] + ".y.bin")
    np.ascontiguousarray(a["x"], np.float32).tofile(xbin)
    env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(ort_dir), "node_modules"))
    subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js"), model, xbin,
                    str(B), str(T), str(D), ybin], check=True, env=env)
    return np.fromfile(ybin, np.float32).reshape(B, T, D)


# ---------------------------------------------------------------------------------------------
# The cases.

def make(name, model, B, T, D, H, Hkv, dk, *, bias, causal=True, rope=None, qk_norm_eps=None,
         window=None, softcap=None, alibi=False, sinks=False, attn_bias=None, scale=None,
         mask=False, wscale=1.0, note=""):
    rng = np.random.default_rng([SEED, zlib.crc32(name.encode())])
    dv = dk
    u = lambda *s, b=1.0: ((rng.random(s) * 2 - 1) * b).astype(np.float32)
    a = {"x": rng.standard_normal((B, T, D)).astype(np.float32)}
    a["w_q"] = u(D, H * dk, b=wscale * math.sqrt(6 / (D + H * dk)))
    a["w_k"] = u(D, Hkv * dk, b=wscale * math.sqrt(6 / (D + Hkv * dk)))
    a["w_v"] = u(D, Hkv * dv, b=math.sqrt(6 / (D + Hkv * dv)))
    a["w_o"] = u(H * dv, D, b=math.sqrt(6 / (H * dv + D)))
    if bias:
        a["b_q"], a["b_k"], a["b_v"], a["b_o"] = u(H * dk, b=0.1), u(Hkv * dk, b=0.1), u(Hkv * dv, b=0.1), u(D, b=0.1)
    c = dict(name=name, model=model, note=note, B=B, T=T, S=T, D=D, D_kv=D, D_out=D, H=H, Hkv=Hkv,
             dk=dk, dv=dv, causal=causal, causal_bottom_right=False, split_first=False, bias=bias,
             scale=1 / math.sqrt(dk) if scale is None else scale, cross=False, mask=False, xscale=1.0,
             positions="0..T-1", rope=None, qk_norm_eps=qk_norm_eps, window=window, softcap=softcap,
             alibi=alibi, sinks=sinks, attn_bias=None)
    if rope is not None:
        r = dict(layout="half", base=10000.0, rotary_dim=dk, scale=1.0, mscale=1.0, inv_freq_given=False)
        r.update(rope)
        inv = r.pop("inv_freq", None)
        if inv is not None:
            r["inv_freq_given"] = True
            a["rope_inv_freq"] = np.asarray(inv, np.float32)
        c["rope"] = r
    if qk_norm_eps is not None:
        a["q_norm"] = (1 + u(dk, b=0.5)).astype(np.float32)
        a["k_norm"] = (1 + u(dk, b=0.5)).astype(np.float32)
    if alibi:
        a["alibi_slopes"] = bloom_slopes(H).astype(np.float32)
    if sinks:
        a["sinks"] = (rng.standard_normal(H) * 1.5).astype(np.float32)
    if attn_bias is not None:
        shape_name, values = attn_bias(rng)
        c["attn_bias"] = shape_name
        a["attn_bias"] = np.asarray(values, np.float32)
    if mask:
        a["mask"] = mask(rng, B, T)
        c["mask"] = True
    return a, c


def gpt_oss_mask(rng, B, T):
    m = np.ones((B, T, T), bool)
    m[1, 5, :] = False                 # batch 1, query 5: every key masked, a sink does not help
    m[0, :, 2] = False                 # key 2 padded out in batch 0
    return m


def t5_bias(T, H):
    def make_bias(rng):
        table = (rng.standard_normal((32, H)) * 2).astype(np.float32)     # relative_attention_bias
        ctx = np.arange(T)[:, None]
        mem = np.arange(T)[None, :]
        buckets = t5_bucket(mem - ctx, bidirectional=True, num_buckets=32, max_distance=128)
        return "1,H,T,S", table[buckets].transpose(2, 0, 1)[None]          # [1, H, T, S]
    return make_bias


def bert_bias(B, T):
    def make_bias(rng):
        keep = np.ones((B, T))
        keep[1, -3:] = 0
        keep[2, -4:] = 0
        ext = np.where(keep > 0, 0.0, -10000.0)          # BERT's (1 - mask) * -10000.0
        ext[2] = np.where(keep[2] > 0, 0.0, -np.inf)     # the same padding as -inf
        return "B,1,1,S", ext[:, None, None, :]
    return make_bias


def empty_rows_bias(B, H, T):
    def make_bias(rng):
        bias = rng.standard_normal((B, H, T, T)) * 2
        bias[rng.random(bias.shape) < 0.15] = -np.inf    # scattered masked entries
        bias[0, 1, 3, :] = -np.inf                       # a whole row
        bias[1, 1, 4, :5] = -np.inf                      # every key causal allows: empty with causal
        bias[0, 0, 0, 0] = -np.inf                       # query 0's only causal key
        bias[1, 0, 6, :] = -np.inf
        return "B,H,T,S", bias
    return make_bias


def cases():
    ll3 = llama3_inv_freq(500000.0, 16, 8.0, 1.0, 4.0, 8192)
    yarn, yarn_mscale = yarn_inv_freq(150000.0, 16, 32.0, 4096)
    return [
        make("llama3", "llama3", 1, 16, 32, 4, 1, 16, bias=False,
             rope=dict(base=500000.0, inv_freq=ll3),
             note="RoPE half-split, base 500000, Llama-3.1 frequencies (factor 8, low 1, high 4, "
                  "original 8192) given as rope_inv_freq; GQA 4:1; causal; no biases"),
        make("mistral", "mistral", 2, 20, 32, 4, 2, 8, bias=False, window=8,
             note="sliding window 8 with causal, GQA 2:1, no RoPE (the window alone)"),
        make("qwen3", "qwen3", 1, 12, 32, 4, 2, 16, bias=False, qk_norm_eps=1e-6,
             rope=dict(base=1000000.0),
             note="QK-norm (RMSNorm over each head, eps 1e-6) then RoPE half base 1e6; GQA; causal"),
        make("gemma2", "gemma2", 1, 24, 32, 4, 2, 16, bias=False, softcap=50.0,
             scale=24 ** -0.5, window=8, rope=dict(base=10000.0), wscale=7.0,
             note="softcap 50 on logits up to ~150 (weights x7), scale query_pre_attn_scalar^-0.5 "
                  "with query_pre_attn_scalar 24 (not dk 16), window 8, RoPE half, GQA"),
        make("gpt_oss", "gpt_oss", 2, 18, 32, 4, 2, 16, bias=True, sinks=True, window=6,
             rope=dict(base=150000.0, inv_freq=yarn, mscale=yarn_mscale), mask=gpt_oss_mask,
             note="sinks, window 6, RoPE half with YaRN frequencies (factor 32, original 4096) given "
                  "and mscale 0.1 ln 32 + 1, GQA, biases; a boolean mask empties batch 1 row 5"),
        make("gptj", "gptj", 1, 14, 32, 2, 2, 32, bias=False,
             rope=dict(layout="interleaved", rotary_dim=16),
             note="interleaved RoPE (GPT-J rotate_every_two) on the first 16 of 32 features"),
        make("neox_partial", "neox_partial", 1, 15, 32, 2, 2, 32, bias=True,
             rope=dict(rotary_dim=16, scale=2.0),
             note="half-split RoPE on 16 of 32 features (rotary_pct 0.5), linear scaling 2"),
        make("bloom", "bloom", 1, 16, 32, 6, 6, 8, bias=True, alibi=True,
             note="ALiBi with BLOOM's slopes for 6 heads (not a power of two), causal"),
        make("t5", "t5", 1, 12, 32, 4, 4, 8, bias=False, causal=False, scale=1.0,
             attn_bias=t5_bias(12, 4),
             note="T5 encoder: relative position bias [1, H, T, S] (32 buckets, distance 128), "
                  "scale 1, not causal, no biases"),
        make("bert_padding", "bert_padding", 3, 10, 32, 4, 4, 8, bias=True, causal=False,
             attn_bias=bert_bias(3, 10),
             note="padding as attn_bias [B, 1, 1, S]: batch 1 pads with -1e4, batch 2 with -inf"),
        make("float_mask_empty_rows", "float_mask_empty_rows", 2, 9, 32, 2, 2, 16, bias=True,
             attn_bias=empty_rows_bias(2, 2, 9),
             note="attn_bias [B, H, T, S] with -inf entries and causal: a head whose row has no finite "
                  "score gives a zero output for that row"),
        make("window_1", "window_1", 1, 10, 32, 4, 4, 8, bias=True, window=1,
             note="window 1: each query sees only its own key"),
        make("window_ge_T", "window_ge_T", 1, 11, 32, 4, 4, 8, bias=True, window=16,
             note="window 16 >= T = 11: the same as causal alone"),
    ]


def save(out, a, c):
    d = os.path.join(out, c["name"])
    os.makedirs(d, exist_ok=True)
    for k, v in a.items():
        np.save(os.path.join(d, k + ".npy"), np.ascontiguousarray(v))
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump(c, fh, indent=1)
        fh.write("\n")


def compare(out, committed, names):
    """Inputs and meta.json must be equal (the cross-check's figures only within the limit), y
    within a float32 rounding: float64 sums may round differently under another BLAS."""
    bad = []
    for name in names:
        d, e = os.path.join(out, name), os.path.join(committed, name)
        if not os.path.isdir(e) or sorted(os.listdir(d)) != sorted(os.listdir(e)):
            bad.append(name + " (files)")
            continue
        for fn in sorted(os.listdir(d)):
            if fn == "meta.json":
                m1, m2 = (json.load(open(os.path.join(p, fn))) for p in (d, e))
                for m in (m1, m2):
                    diff = m.pop("torch_max_abs_diff")
                    if diff is not None and diff > TORCH_LIMIT:
                        bad.append(name + " (torch_max_abs_diff)")
                    m.pop("float32_max_abs_diff")
                    m.pop("ort_max_abs_diff", None)
                if m1 != m2:
                    bad.append(name + " (meta.json)")
                continue
            x1, x2 = np.load(os.path.join(d, fn)), np.load(os.path.join(e, fn))
            same = (x1.dtype == x2.dtype and x1.shape == x2.shape and
                    (np.allclose(x1, x2, rtol=1e-6, atol=1e-7) if fn == "y.npy" else np.array_equal(x1, x2)))
            if not same:
                bad.append(f"{name} ({fn})")
    extra = sorted(set(os.listdir(committed)) - set(names) - {"README.md"})
    extra = [n for n in extra if os.path.isdir(os.path.join(committed, n))]
    return bad + [n + " (no longer generated)" for n in extra]


def main():
    global SEED
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch cross-check")
    ap.add_argument("--compare", metavar="DIR", help="check the files written equal those in DIR")
    ap.add_argument("--ort", metavar="DIR", help="also run the cases ONNX Runtime has, with onnxruntime-node "
                    "installed in DIR (skipped when DIR is absent)")
    o = ap.parse_args()
    SEED = o.seed
    failed = 0
    all_cases = cases()
    ort_work = None
    if o.ort and os.path.isdir(os.path.join(o.ort, "node_modules", "onnxruntime-node")):
        import tempfile
        ort_work = tempfile.mkdtemp(prefix="mha-ort-")
    elif o.ort:
        print(f"no onnxruntime-node under {o.ort}: the ONNX Runtime check is skipped")
    for a, c in all_cases:
        y = reference(a, c)
        # What float32 arithmetic loses on this case: the tolerance must leave room for it.
        y32 = reference(a, c, np.float32)
        c["float32_max_abs_diff"] = float(np.abs(y32 - y).max())
        c["tolerance"] = {"atol": 1e-4, "rtol": 1e-4}
        assert c["float32_max_abs_diff"] < 2.5e-5, (c["name"], c["float32_max_abs_diff"])
        if c["alibi"]:
            alibi_is_relative(a, c)
        if c["name"] == "window_ge_T":
            assert np.abs(reference(a, dict(c, window=None)) - y).max() == 0
        if c["name"] == "window_1":
            # Each query sees its own key only: every head's output is that token's value.
            xv = np.asarray(a["x"], np.float64) @ a["w_v"] + a["b_v"]
            assert np.abs(xv @ a["w_o"] + a["b_o"] - y).max() < 1e-12
        status = "skipped"
        c["torch_max_abs_diff"] = None
        if not o.no_torch:
            torch_arguments_check(a, c)
            diff = float(np.abs(torch_forward(a, c) - y).max())
            c["torch_max_abs_diff"] = diff
            status = "ok" if diff <= TORCH_LIMIT else "FAILED"
            failed += diff > TORCH_LIMIT
        c["ort_max_abs_diff"] = None
        ort_status = ""
        if ort_work and ort_supports(c):
            diff = float(np.abs(ort_forward(a, c, o.ort, ort_work) - y).max())
            c["ort_max_abs_diff"] = diff
            ok = diff <= c["tolerance"]["atol"]
            ort_status = f"; ORT diff {diff:.1e}: " + ("ok" if ok else "FAILED")
            failed += not ok
        a["y"] = y.astype(np.float32)
        names = ["x", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o", "mask", *NEW_ARGS, "y"]
        c["files"] = sorted(k for k in names if k in a)
        save(o.out, a, c)
        shapes = " ".join(f"{k}{list(a[k].shape)}" for k in a if k in NEW_ARGS or k == "mask")
        print(f"{c['name']}: {shapes or 'no new arguments'}; float32 diff {c['float32_max_abs_diff']:.1e}; "
              f"torch diff {c['torch_max_abs_diff']}: {status}{ort_status}")
    if ort_work:
        import shutil
        shutil.rmtree(ort_work)
    if o.compare:
        bad = compare(o.out, o.compare, [c["name"] for _, c in all_cases])
        for b in bad:
            print("differs from the committed files: " + b)
        print(f"compare with {o.compare}: " + ("FAILED" if bad else f"all {len(all_cases)} cases match"))
        failed += len(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
