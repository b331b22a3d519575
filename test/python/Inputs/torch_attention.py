"""mha.nn.Attention, built from a model's projection Linears, against plain
PyTorch written from the models' own formulas (Hugging Face's Llama
attention: rotate_half, repeat_kv, eager softmax; nanoGPT's
CausalSelfAttention), in float64: outputs, Hugging Face's masks, a KV-cache
session, and the refusals."""
import math
import sys

import numpy as np
import torch

import mha.nn
from refusals import refusal

torch.manual_seed(0)
failures = 0


def report(name, got, want, tol):
    global failures
    err = (got.to(torch.float64) - want.to(torch.float64)).abs().max().item()
    ok = err <= tol
    failures += not ok
    print("%s: max abs error <= %g: %s" % (name, tol, "ok" if ok else
                                           "FAILED (%g)" % err))


# -- Hugging Face's Llama attention, float64 ---------------------------------

def rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, groups):
    b, hkv, t, d = x.shape
    return x[:, :, None].expand(b, hkv, groups, t, d).reshape(b, hkv * groups,
                                                              t, d)


def rms_norm(x, weight, eps):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def llama_reference(x, lin, h, hkv, d, base=10000.0, causal=True, mask=None,
                    norms=None, eps=1e-6):
    """Hugging Face's LlamaAttention (eager) in float64; `mask` is the
    additive 4D mask it takes, `norms` Qwen 3's q_norm and k_norm."""
    x = x.to(torch.float64)
    w = {n: (m.weight.double(), None if m.bias is None else m.bias.double())
         for n, m in lin.items()}
    proj = lambda n, t: torch.nn.functional.linear(t, *w[n])
    b, t, _ = x.shape
    q = proj("q", x).view(b, t, h, d).transpose(1, 2)
    k = proj("k", x).view(b, t, hkv, d).transpose(1, 2)
    v = proj("v", x).view(b, t, hkv, d).transpose(1, 2)
    if norms is not None:
        q = rms_norm(q, norms[0].double(), eps)
        k = rms_norm(k, norms[1].double(), eps)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    k, v = repeat_kv(k, h // hkv), repeat_kv(v, h // hkv)
    scores = q @ k.transpose(2, 3) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(
            torch.triu(torch.ones(t, t, dtype=torch.bool), 1), -math.inf)
    if mask is not None:
        scores = scores + mask.double()
    o = torch.softmax(scores, dim=-1) @ v
    o = o.transpose(1, 2).reshape(b, t, h * d)
    return proj("o", o)


def linears(e, h, hkv, d, bias=False, o_bias=None):
    mk = lambda i, o, b: torch.nn.Linear(i, o, bias=b)
    return {"q": mk(e, h * d, bias), "k": mk(e, hkv * d, bias),
            "v": mk(e, hkv * d, bias),
            "o": mk(h * d, e, bias if o_bias is None else o_bias)}


E, H, HKV, D = 64, 4, 2, 16
with torch.inference_mode():
    # (1) Llama: half-split RoPE, GQA, no biases.
    lin = linears(E, H, HKV, D)
    llama = mha.nn.Attention(lin["q"], lin["k"], lin["v"], lin["o"],
                             num_heads=H, num_kv_heads=HKV, causal=True,
                             rope="half", rope_base=10000.0)
    x = torch.randn(2, 9, E)
    y = llama(x)
    print("llama: output", tuple(y.shape), y.dtype)
    report("llama (RoPE half, GQA 4/2, no biases)", y,
           llama_reference(x, lin, H, HKV, D), 1e-5)
    report("llama, unbatched [T, E]", llama(x[1]),
           llama_reference(x[1:], lin, H, HKV, D)[0], 1e-5)

    # Qwen 2 / 3: biases on q, k, v (o none), QK-norm as RMSNorm modules.
    qlin = linears(E, H, HKV, D, bias=True, o_bias=False)

    class RMSNorm(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(n))
            self.variance_epsilon = 1e-6

    qn, kn = RMSNorm(D), RMSNorm(D)
    qwen = mha.nn.Attention(qlin["q"], qlin["k"], qlin["v"], qlin["o"],
                            num_heads=H, num_kv_heads=HKV, causal=True,
                            rope="half", rope_base=1e6, q_norm=qn, k_norm=kn)
    report("qwen (q/k/v biases, QK-norm modules, rope_base 1e6)", qwen(x),
           llama_reference(x, qlin, H, HKV, D, base=1e6,
                           norms=(qn.weight, kn.weight)), 1e-5)

    # (2) nanoGPT's CausalSelfAttention, its own computation (PyTorch
    # 1.13 has no scaled_dot_product_attention: its "slow" path).
    class CausalSelfAttention(torch.nn.Module):
        def __init__(self, n_embd, n_head, block_size):
            super().__init__()
            self.c_attn = torch.nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = torch.nn.Linear(n_embd, n_embd)
            self.n_head, self.n_embd = n_head, n_embd
            self.register_buffer("bias", torch.tril(torch.ones(
                block_size, block_size)).view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    gpt = CausalSelfAttention(48, 6, 32).double().eval()
    fast = mha.nn.Attention(qkv_proj=gpt.c_attn, o_proj=gpt.c_proj,
                            num_heads=6, causal=True)
    xg = torch.randn(3, 11, 48)
    report("nanoGPT c_attn/c_proj, causal", fast(xg), gpt(xg.double()), 1e-5)
    report("nanoGPT via from_module", mha.nn.Attention.from_module(gpt)(xg),
           gpt(xg.double()), 1e-5)

    # BLOOM / GPT-NeoX: one fused Linear interleaved per head, [H, 3, d].
    blin = linears(E, H, H, D, bias=True)
    fused = torch.nn.Linear(E, 3 * E)
    fused.weight.copy_(torch.stack([blin[n].weight.view(H, D, E)
                                    for n in "qkv"], 1).reshape(3 * E, E))
    fused.bias.copy_(torch.stack([blin[n].bias.view(H, D)
                                  for n in "qkv"], 1).reshape(3 * E))
    apart = mha.nn.Attention(blin["q"], blin["k"], blin["v"], blin["o"],
                             num_heads=H, causal=True)
    per_head = mha.nn.Attention(qkv_proj=fused, o_proj=blin["o"],
                                qkv_layout="per_head", num_heads=H,
                                causal=True)
    report("fused per-head (BLOOM, NeoX) = separate Linears", per_head(x),
           apart(x), 1e-6)

    # (3) Hugging Face's masks: a 2D padding mask, its 4D additive forms
    # with -inf and -1e9 ([B, 1, T, S] causal+padding, [B, 1, 1, S]), bool.
    T = 9
    keep = torch.ones(2, T, dtype=torch.int64)
    keep[1, :3] = 0                     # left padding of sequence 1
    causal4 = torch.tril(torch.ones(T, T, dtype=torch.bool))
    allowed = causal4[None, None] & keep[:, None, None, :].bool()
    rows = allowed.any(-1, keepdim=True).expand(2, H, T, 1)[..., 0]  # [B,H,T]
    for fill in (-math.inf, -1e9, torch.finfo(torch.float32).min):
        additive = torch.zeros(2, 1, T, T).masked_fill(~allowed, fill)
        ref = llama_reference(x, lin, H, HKV, D, causal=False,
                              mask=additive.double().clamp(min=-1e300))
        got = llama(x, attention_mask=additive)
        report("llama, HF 4D [B, 1, T, S] additive mask of %g" % fill,
               got[1, 3:], ref[1, 3:], 1e-5)
        report("   sequence 0 (no padding)", got[0], ref[0], 1e-5)
    report("llama, 2D padding mask [B, S] of 1/0 (int64)",
           llama(x, attention_mask=keep)[1, 3:],
           llama_reference(x, lin, H, HKV, D,
                           mask=torch.zeros(2, 1, 1, T,
                                                dtype=torch.float64).masked_fill(
                               keep[:, None, None] == 0, -1e300))[1, 3:], 1e-5)
    report("llama, 4D bool mask (True = attend)",
           llama(x, attention_mask=allowed)[1, 3:],
           llama(x, attention_mask=keep)[1, 3:], 1e-6)
    bert_lin = linears(E, H, H, D, bias=True)
    bert = mha.nn.Attention(bert_lin["q"], bert_lin["k"], bert_lin["v"],
                            bert_lin["o"], num_heads=H)
    padding = torch.zeros(2, 1, 1, T).masked_fill(keep[:, None, None] == 0,
                                                  -1e9)
    from_bert = bert(x, attention_mask=padding)
    with torch.no_grad():
        xd = x.double()
        w = {n: (m.weight.double(), m.bias.double())
             for n, m in bert_lin.items()}
        proj = lambda n, t: torch.nn.functional.linear(t, *w[n])
        heads = lambda t: t.view(2, T, H, D).transpose(1, 2)
        s = heads(proj("q", xd)) @ heads(proj("k", xd)).transpose(2, 3)
        s = s / math.sqrt(D) + padding.double()
        o = (torch.softmax(s, -1) @ heads(proj("v", xd))).transpose(1, 2)
        bert_ref = proj("o", o.reshape(2, T, E))
    report("BERT-style, HF [B, 1, 1, S] additive padding of -1e9", from_bert,
           bert_ref, 1e-5)
    report("BERT-style, the same as 2D 0/1 padding",
           bert(x, attention_mask=keep.bool()), bert_ref, 1e-5)
    zero = bert(x, attention_mask=torch.zeros(2, 1, 1, T))
    print("an all-zero mask runs the plain layer:",
          sorted(k for k in bert.layers if k is not None) == ["B,1,1,S"])
    report("   and gives its output", zero, bert(x), 0)

    # (4) A session: a prefill of 5 tokens, then 3 one-token steps, against
    # the full causal layer over all 8 tokens.
    xs = torch.randn(2, 8, E)
    full = llama(xs)
    session = llama.session(batch=2, capacity=16)
    parts = [session.step(xs[:, :5])]
    for i in range(5, 8):
        parts.append(session.step(xs[:, i:i + 1]))
    report("session: prefill 5, then 3 one-token steps", torch.cat(parts, 1),
           full, 1e-4)
    print("session lengths:", session.lengths.tolist(), "cache",
          tuple(session.k_cache.shape), "shares memory:",
          session.k_cache.data_ptr() == session.decode.k_cache.ctypes.data)
    session.reset()
    report("session after reset: the prefill again", session.step(xs[:, :5]),
           full[:, :5], 1e-4)
    qs = qwen.session(batch=2, capacity=8)
    qparts = [qs.step(xs[:, :3])] + [qs.step(xs[:, i:i + 1])
                                     for i in range(3, 8)]
    report("qwen session (biases, QK-norm)", torch.cat(qparts, 1), qwen(xs),
           1e-4)

    # (5) Refusals.
    lin5 = linears(40, 5, 5, 8)
    failures += refusal(
        "heads do not divide q_proj", lambda: mha.nn.Attention(
            lin5["q"], lin5["k"], lin5["v"], lin5["o"], num_heads=3))
    failures += refusal(
        "k_proj for other kv heads", lambda: mha.nn.Attention(
            lin["q"], lin["k"], lin["v"], lin["o"], num_heads=H,
            num_kv_heads=1))
    failures += refusal(
        "kv heads do not divide heads", lambda: mha.nn.Attention(
            lin["q"], lin["k"], lin["v"], lin["o"], num_heads=H,
            num_kv_heads=3))
    failures += refusal(
        "fused qkv of another size", lambda: mha.nn.Attention(
            qkv_proj=torch.nn.Linear(48, 100), o_proj=gpt.c_proj,
            num_heads=6))
    failures += refusal(
        "o_proj's input", lambda: mha.nn.Attention(
            lin["q"], lin["k"], lin["v"], torch.nn.Linear(E + 1, E),
            num_heads=H, num_kv_heads=HKV))
    failures += refusal("no heads", lambda: mha.nn.Attention(
        lin["q"], lin["k"], lin["v"], lin["o"]))
    failures += refusal("mask [B, T, S]", lambda: llama(
        x, attention_mask=torch.zeros(2, T, T)))
    failures += refusal("mask [B, 1, T, S+1]", lambda: llama(
        x, attention_mask=torch.zeros(2, 1, T, T + 1)))
    failures += refusal("padding mask [B, S+1]", lambda: llama(
        x, attention_mask=torch.ones(2, T + 1)))
    failures += refusal("padding mask of 2", lambda: llama(
        x, attention_mask=torch.full((2, T), 2)))
    failures += refusal("x of another width", lambda: llama(
        torch.randn(2, 3, E + 1)))
    failures += refusal("float64 x", lambda: llama(x.double()))
    failures += refusal("session of a non-causal module",
                        lambda: bert.session(batch=1, capacity=8))
    failures += refusal("session step, another batch",
                        lambda: llama.session(2, 8).step(xs[:1, :2]))
    failures += refusal("session step past the capacity",
                        lambda: llama.session(2, 4).step(xs[:, :5]))

x = torch.randn(1, 3, E, requires_grad=True)
failures += refusal("x requires grad", lambda: llama(x))
print("failures: %d" % failures)
sys.exit(1 if failures else 0)
