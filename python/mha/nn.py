"""mha.nn: a model's attention module, from its own projection Linears.

    from mha.nn import Attention
    attn = Attention(q_proj, k_proj, v_proj, o_proj, num_heads=32,
                     num_kv_heads=8, causal=True, rope="half",
                     rope_base=500000.0)                # Llama-style
    attn = Attention(qkv_proj=c_attn, o_proj=c_proj, num_heads=12,
                     causal=True)                       # nanoGPT
    y = attn(x)                                         # x: [B, T, E]
    y = attn(x, attention_mask=mask)                    # Hugging Face's masks
    s = attn.session(batch=2, capacity=256)             # a KV cache
    y = s.step(prompt); y = s.step(next_token)

A torch.nn.Module for inference, run by mha.layer: the projections are the
`nn.Linear`s (anything with a 2D `weight` [out, in] and an optional `bias`)
that nanoGPT, BERT and Llama-style attention modules hold, either four
(q_proj, k_proj, v_proj, o_proj: Hugging Face's Llama, Mistral, Qwen
names; BERT's query, key, value and output.dense) or a fused q|k|v one
(qkv_proj: nanoGPT's c_attn, Phi-3's qkv_proj) and o_proj (c_proj). A fused
weight holds the row blocks [H*d | Hkv*d | Hkv*dv] (qkv_layout="blocks",
the default) or, as BLOOM's and GPT-NeoX's query_key_value, interleaves
them per head, rows [H, 3, d] (qkv_layout="per_head"; needs Hkv == H).
Biases are optional, each: a missing one is zero (mha's layers take all
four or none). The weights are converted once, at construction (later
changes to the Linears are not seen); the options are mha.layer's served
models' ones (docs/models.md).

The attention itself (positions, RoPE, the score steps) is mha's; forward
takes x [B, T, E] (or [T, E]) float32 on the CPU and Hugging Face's masks:
a padding mask [B, S] of 1/True (attend) and 0/False (padding), or a 4D mask
[B or 1, 1 or H, T or 1, S], bool (True = attend, as PyTorch's SDPA) or
additive float (0 where allowed, large negative or -inf where not, as
Hugging Face's eager attention adds it): it goes to the layer's score bias
attn_bias. The output is a tensor over the compiled code's own buffer (no
copy); an input tensor goes to the compiled code without a copy when it is
float32 and C-contiguous. A query row whose mask allows no key gives the
output projection's bias (zero attention) where PyTorch gives NaN.
"""
import numbers

import numpy as np
import torch

import mha
from .torch import _numpy, MultiheadAttention as _MultiheadAttention

__all__ = ["Attention", "AttentionSession"]

_FLOAT32 = np.dtype(np.float32)


def _is_count(value):
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and value > 0)


def _linear_weight(module, name):
    """`module`'s weight [out, in] and bias [out] or None, as tensors."""
    if module is None:
        raise ValueError("%s is missing" % name)
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor):
        raise TypeError("%s: expected an nn.Linear (a module with a weight "
                        "tensor), got %s" % (name, type(module).__name__))
    if weight.dim() != 2:
        raise ValueError("%s: expected a 2D weight [out_features, "
                         "in_features], got shape %s"
                         % (name, list(weight.shape)))
    bias = getattr(module, "bias", None)
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ValueError("%s: bias of shape %s for %d output features"
                         % (name, list(bias.shape), weight.shape[0]))
    return weight.detach(), None if bias is None else bias.detach()


def _vector(value, name, length=None):
    """A weight tensor (or a module's `weight`, e.g. an RMSNorm) as a
    float32 array."""
    if isinstance(value, torch.nn.Module):
        value = getattr(value, "weight", None)
        if value is None:
            raise TypeError("%s: a module without a weight" % name)
    if not isinstance(value, torch.Tensor):
        value = torch.as_tensor(np.asarray(value, dtype=np.float32))
    array = _numpy(value)
    if array.ndim != 1 or (length is not None and array.shape[0] != length):
        raise ValueError("%s: expected shape [%s], got %s"
                         % (name, "?" if length is None else length,
                            list(array.shape)))
    return array


def _norm_eps(module):
    for name in ("variance_epsilon", "eps"):
        eps = getattr(module, name, None)
        if isinstance(eps, numbers.Real):
            return float(eps)
    return None


class Attention(torch.nn.Module):
    """A model's attention, inference only; see the module's docstring.

    Attention(q_proj=None, k_proj=None, v_proj=None, o_proj=None, *,
              qkv_proj=None, qkv_layout="blocks", num_heads,
              num_kv_heads=None, head_dim=None, causal=False, scale=None,
              rope=None, rope_base=None, rotary_dim=None, rope_scale=None,
              rope_mscale=None, rope_inv_freq=None, q_norm=None, k_norm=None,
              qk_norm_eps=None, window=None, softcap=None, alibi=None,
              sinks=None, **pipeline_options)

    rope_inv_freq [R/2], q_norm and k_norm [d] (tensors, or RMSNorm modules
    whose weight and eps are taken), alibi (the slopes [H]) and sinks [H]
    are tensors; the other options are mha.layer's. pipeline_options go to
    mha.compile (e.g. attention="fused").
    """

    def __init__(self, q_proj=None, k_proj=None, v_proj=None, o_proj=None, *,
                 qkv_proj=None, qkv_layout="blocks", num_heads=None,
                 num_kv_heads=None, head_dim=None, causal=False, scale=None,
                 rope=None, rope_base=None, rotary_dim=None, rope_scale=None,
                 rope_mscale=None, rope_inv_freq=None, q_norm=None,
                 k_norm=None, qk_norm_eps=None, window=None, softcap=None,
                 alibi=None, sinks=None, **pipeline_options):
        super().__init__()
        if not _is_count(num_heads):
            raise ValueError("num_heads must be a positive integer, got %r"
                             % (num_heads,))
        h = num_heads
        hkv = h if num_kv_heads is None else num_kv_heads
        if not _is_count(hkv) or h % hkv:
            raise ValueError("num_kv_heads must be a positive integer that "
                             "divides num_heads (%d), got %r"
                             % (h, num_kv_heads))
        if head_dim is not None and not _is_count(head_dim):
            raise ValueError("head_dim must be a positive integer, got %r"
                             % (head_dim,))
        if qkv_layout not in ("blocks", "per_head"):
            raise ValueError("qkv_layout must be 'blocks' or 'per_head', got "
                             "%r" % (qkv_layout,))

        if qkv_proj is not None:
            if q_proj is not None or k_proj is not None or v_proj is not None:
                raise ValueError("give qkv_proj or q_proj, k_proj and v_proj, "
                                 "not both")
            (w_q, b_q), (w_k, b_k), (w_v, b_v), d, dv = self._split_fused(
                qkv_proj, qkv_layout, h, hkv, head_dim)
        else:
            w_q, b_q = _linear_weight(q_proj, "q_proj")
            w_k, b_k = _linear_weight(k_proj, "k_proj")
            w_v, b_v = _linear_weight(v_proj, "v_proj")
            d = self._per_head(w_q, "q_proj", h, head_dim)
            if w_k.shape[0] != hkv * d:
                raise ValueError(
                    "k_proj: %d output features; expected num_kv_heads * "
                    "head_dim = %d * %d = %d"
                    % (w_k.shape[0], hkv, d, hkv * d))
            dv = self._per_head(w_v, "v_proj", hkv, None, "num_kv_heads")
        e = w_q.shape[1]
        for name, w in (("k_proj", w_k), ("v_proj", w_v)):
            if w.shape[1] != e:
                raise ValueError("%s: %d input features, q_proj has %d"
                                 % (name, w.shape[1], e))
        w_o, b_o = _linear_weight(o_proj, "o_proj")
        if w_o.shape[1] != h * dv:
            raise ValueError("o_proj: %d input features; expected num_heads "
                             "* value head width = %d * %d = %d"
                             % (w_o.shape[1], h, dv, h * dv))
        out = w_o.shape[0]

        self.embed_dim, self.out_dim = e, out
        self.num_heads, self.num_kv_heads = h, hkv
        self.head_dim, self.value_dim = d, dv
        self.causal = bool(causal)
        self.weights = {"w_q": _numpy(w_q.T), "w_k": _numpy(w_k.T),
                        "w_v": _numpy(w_v.T), "w_o": _numpy(w_o.T)}
        biases = {"b_q": (b_q, h * d), "b_k": (b_k, hkv * d),
                  "b_v": (b_v, hkv * dv), "b_o": (b_o, out)}
        self.bias = any(b is not None for b, _ in biases.values())
        if self.bias:
            for name, (b, n) in biases.items():
                self.weights[name] = (np.zeros(n, np.float32) if b is None
                                      else _numpy(b))

        options = dict(d_model=e, heads=h, kv_heads=hkv, head_dim=d,
                       bias=self.bias, causal=self.causal)
        if dv != d:
            options["value_dim"] = dv
        if out != e:
            options["out_dim"] = out
        for name, value in (("scale", scale), ("softcap", softcap),
                            ("window", window), ("rope", rope),
                            ("rope_base", rope_base),
                            ("rotary_dim", rotary_dim),
                            ("rope_scale", rope_scale),
                            ("rope_mscale", rope_mscale)):
            if value is not None:
                options[name] = value
        if rope_inv_freq is not None:
            if rope is None:
                raise ValueError("rope_inv_freq needs rope ('half' or "
                                 "'interleaved')")
            options["rope_inv_freq"] = True
            self.weights["rope_inv_freq"] = _vector(rope_inv_freq,
                                                    "rope_inv_freq")
        if (q_norm is None) != (k_norm is None):
            raise ValueError("QK-norm takes both q_norm and k_norm")
        if q_norm is not None:
            options["qk_norm"] = True
            eps = qk_norm_eps if qk_norm_eps is not None else _norm_eps(q_norm)
            if eps is not None:
                options["qk_norm_eps"] = eps
            self.weights["q_norm"] = _vector(q_norm, "q_norm", d)
            self.weights["k_norm"] = _vector(k_norm, "k_norm", d)
        elif qk_norm_eps is not None:
            raise ValueError("qk_norm_eps needs q_norm and k_norm")
        if alibi is not None:
            options["alibi"] = True
            self.weights["alibi_slopes"] = _vector(alibi, "alibi", h)
        if sinks is not None:
            options["sinks"] = True
            self.weights["sinks"] = _vector(sinks, "sinks", h)
        self.options = options
        self.pipeline_options = pipeline_options
        self.layers = {}
        # The plain layer now: bad options fail at construction, not at the
        # first call.
        self._layer(None)

    # -- construction ------------------------------------------------------

    @staticmethod
    def _per_head(weight, name, heads, head_dim, heads_name="num_heads"):
        rows = weight.shape[0]
        if head_dim is None:
            if rows % heads:
                raise ValueError("%s: %d output features do not divide into "
                                 "%s = %d heads" % (name, rows, heads_name,
                                                    heads))
            return rows // heads
        if rows != heads * head_dim:
            raise ValueError("%s: %d output features; expected %s * head_dim "
                             "= %d * %d = %d" % (name, rows, heads_name, heads,
                                                 head_dim, heads * head_dim))
        return head_dim

    @staticmethod
    def _split_fused(qkv_proj, layout, h, hkv, head_dim):
        """q, k and v's (weight, bias) from a fused q|k|v Linear, and the
        head widths d and dv."""
        w, b = _linear_weight(qkv_proj, "qkv_proj")
        rows = w.shape[0]
        if layout == "per_head":
            if hkv != h:
                raise ValueError("qkv_layout='per_head' (BLOOM, GPT-NeoX) "
                                 "has as many key/value heads as query "
                                 "heads; num_kv_heads is %d, num_heads %d"
                                 % (hkv, h))
            d = head_dim or (rows // (3 * h) if rows % (3 * h) == 0 else None)
            if d is None or rows != 3 * h * d:
                raise ValueError("qkv_proj: %d output features; expected "
                                 "num_heads * 3 * head_dim (%d * 3 * %s)"
                                 % (rows, h, head_dim or "d"))
            w = w.reshape(h, 3, d, w.shape[1])
            b = None if b is None else b.reshape(h, 3, d)
            parts = [(w[:, i].reshape(h * d, -1),
                      None if b is None else b[:, i].reshape(h * d))
                     for i in range(3)]
            return parts[0], parts[1], parts[2], d, d
        heads = h + 2 * hkv
        d = head_dim or (rows // heads if rows % heads == 0 else None)
        if d is None or rows != heads * d:
            raise ValueError("qkv_proj: %d output features; expected "
                             "(num_heads + 2 * num_kv_heads) * head_dim = "
                             "(%d + 2 * %d) * %s" % (rows, h, hkv,
                                                     head_dim or "d"))
        cuts = [0, h * d, (h + hkv) * d, rows]
        parts = [(w[cuts[i]:cuts[i + 1]],
                  None if b is None else b[cuts[i]:cuts[i + 1]])
                 for i in range(3)]
        return parts[0], parts[1], parts[2], d, d

    @classmethod
    def from_module(cls, module, **options):
        """The Attention of a model's attention module, found by its
        attribute names: q_proj/k_proj/v_proj/o_proj (Hugging Face's Llama,
        Mistral, Qwen; also q_norm/k_norm, num_heads or
        config.num_attention_heads, num_key_value_heads, head_dim),
        c_attn/c_proj with n_head (nanoGPT's CausalSelfAttention, causal),
        query_key_value/dense (GPT-NeoX, BLOOM: per-head layout).
        `options` (num_heads, causal, rope, ...) override what is found;
        RoPE and the other position options are never guessed."""
        config = getattr(module, "config", None)

        def found(*names):
            for owner in (module, config):
                for name in names:
                    value = getattr(owner, name, None) if owner is not None \
                        else None
                    if value is not None:
                        return value
            return None

        if hasattr(module, "q_proj"):
            args = dict(q_proj=module.q_proj, k_proj=module.k_proj,
                        v_proj=module.v_proj,
                        o_proj=getattr(module, "o_proj", None)
                        or getattr(module, "out_proj", None))
            if getattr(module, "q_norm", None) is not None:
                args.update(q_norm=module.q_norm, k_norm=module.k_norm)
        elif hasattr(module, "c_attn"):
            args = dict(qkv_proj=module.c_attn, o_proj=module.c_proj,
                        causal=True)
        elif hasattr(module, "query_key_value"):
            args = dict(qkv_proj=module.query_key_value,
                        o_proj=getattr(module, "dense", None),
                        qkv_layout="per_head", causal=True)
        else:
            raise ValueError("from_module: %s has none of q_proj, c_attn, "
                             "query_key_value; build Attention from its "
                             "Linears" % type(module).__name__)
        heads = found("num_heads", "n_head", "num_attention_heads")
        if heads is not None:
            args["num_heads"] = heads
        kv_heads = found("num_key_value_heads", "num_kv_heads")
        if kv_heads is not None:
            args["num_kv_heads"] = kv_heads
        head_dim = found("head_dim")
        if isinstance(head_dim, numbers.Integral):
            args["head_dim"] = head_dim
        is_causal = getattr(module, "is_causal", None)
        if isinstance(is_causal, bool):
            args["causal"] = is_causal
        args.update(options)
        return cls(**args)

    def extra_repr(self):
        return ", ".join("%s=%r" % item for item in self.options.items())

    # -- the compiled variants -------------------------------------------

    def _layer(self, bias_shape):
        """The layer with score bias `bias_shape` ("B,1,1,S", ...; None:
        none), compiled and prepared at its first use."""
        layer = self.layers.get(bias_shape)
        if layer is None:
            options = dict(self.options)
            if bias_shape is not None:
                options["attn_bias"] = bias_shape
            layer = mha.layer(**options, **self.pipeline_options)
            layer.prepare(**self.weights)
            self.layers[bias_shape] = layer
        return layer

    # -- the arguments ---------------------------------------------------

    def _input(self, x, name="x"):
        """x as a float32 NumPy array [B, T, E] (a view where it can be)
        and whether it was unbatched [T, E]."""
        if not isinstance(x, torch.Tensor):
            raise TypeError("%s: expected a torch.Tensor, got %s"
                            % (name, type(x).__name__))
        if x.dim() not in (2, 3) or x.shape[-1] != self.embed_dim:
            raise ValueError("%s: expected [B, T, %d] or [T, %d], got shape "
                             "%s" % (name, self.embed_dim, self.embed_dim,
                                     list(x.shape)))
        try:
            array = x.numpy()
        except (RuntimeError, TypeError):  # requires grad, not on the CPU
            array = None
        if array is None or array.dtype != _FLOAT32:
            # mha.torch's checks and messages: dtype, device, grad.
            array = _MultiheadAttention._checked_array(None, x, name, x.dim())
        if array.ndim == 2:
            return array[np.newaxis], True
        return array, False

    def _score_bias(self, mask, batch, queries, keys):
        """Hugging Face's attention_mask as mha's attn_bias (float32, C
        order) and its shape ("B,1,1,S", ...), or (None, None) when it
        masks nothing."""
        if not isinstance(mask, torch.Tensor):
            raise TypeError("attention_mask: expected a torch.Tensor, got %s"
                            % type(mask).__name__)
        m = mask.detach().cpu()
        if m.dim() == 2:
            if tuple(m.shape) != (batch, keys):
                raise ValueError(
                    "attention_mask: a padding mask is [B, S] = %s, got %s"
                    % ([batch, keys], list(m.shape)))
            if m.is_floating_point() or m.is_complex():
                values = m.numpy()
            else:
                values = m.to(torch.int64).numpy()
            if not np.all((values == 0) | (values == 1)):
                raise ValueError(
                    "attention_mask: a [B, S] padding mask holds 1 (attend) "
                    "and 0 (padding) only; give an additive mask as 4D "
                    "[B, 1, T, S] or [B, 1, 1, S]")
            bias = np.where(values == 0, np.float32(-np.inf),
                            np.float32(0))[:, np.newaxis, np.newaxis, :]
        elif m.dim() == 4:
            shape = tuple(m.shape)
            allowed = ((1, batch), (1, self.num_heads), (1, queries), (keys,))
            if not all(size in sizes for size, sizes in zip(shape, allowed)):
                raise ValueError(
                    "attention_mask: a 4D mask is [B or 1, 1 or H, T or 1, "
                    "S] = [%d or 1, 1 or %d, %d or 1, %d], got %s"
                    % (batch, self.num_heads, queries, keys, list(shape)))
            if m.dtype == torch.bool:
                bias = np.where(m.numpy(), np.float32(0), np.float32(-np.inf))
            elif m.is_floating_point():
                bias = m.numpy().astype(np.float32, copy=False)
            else:
                raise ValueError("attention_mask: a 4D mask is bool (True = "
                                 "attend) or float (added to the scores), "
                                 "got %s" % m.dtype)
        else:
            raise ValueError("attention_mask: expected a padding mask [B, S] "
                             "or a 4D mask [B, 1, T, S] or [B, 1, 1, S], got "
                             "shape %s" % list(m.shape))
        if not bias.any():   # zeros (NaN is nonzero: it is kept)
            return None, None
        letters = "".join("1" if size == 1 and full != 1 else letter
                          for size, full, letter in
                          zip(bias.shape, (batch, self.num_heads, queries,
                                           keys), "BHTS"))
        # A size-1 dimension that is also the full size: the letter is
        # declared `?` (B, T) or static (H), both taking the 1.
        return (np.ascontiguousarray(bias, dtype=np.float32),
                ",".join(letters))

    def forward(self, x, attention_mask=None):
        """y [B, T, out] (or [T, out]) for x [B, T, E] (or [T, E]);
        attention_mask: see the module's docstring."""
        array, unbatched = self._input(x)
        batch, queries = array.shape[0], array.shape[1]
        bias = shape = None
        if attention_mask is not None:
            if unbatched and attention_mask.dim() in (1, 3):
                attention_mask = attention_mask.unsqueeze(0)
            bias, shape = self._score_bias(attention_mask, batch, queries,
                                           queries)
        if not (batch and queries):
            y = np.empty((batch, queries, self.out_dim), np.float32)
            y[...] = self.weights.get("b_o", 0)
        elif bias is None:
            y = self._layer(None)(array)
        else:
            y = self._layer(shape)(array, attn_bias=bias)
        y = torch.from_numpy(y)
        return y[0] if unbatched else y

    # -- decoding --------------------------------------------------------

    def session(self, batch=1, capacity=None, k_cache=None, v_cache=None):
        """An AttentionSession: `batch` sequences decoded with a key/value
        cache of `capacity` tokens (mha.layer(kv_cache=capacity), prepared
        with this module's weights; causal self-attention with the same
        options). k_cache and v_cache [batch, Hkv, capacity, d] tensors or
        arrays, float32 C-contiguous, are borrowed and updated in place."""
        if not self.causal:
            raise ValueError("a session decodes causal self-attention; this "
                             "Attention is not causal (build it with "
                             "causal=True)")
        if not _is_count(capacity):
            raise ValueError("capacity must be a positive integer, got %r"
                             % (capacity,))
        key = ("kv_cache", capacity)
        layer = self.layers.get(key)
        if layer is None:
            layer = mha.layer(kv_cache=capacity, **self.options,
                              **self.pipeline_options)
            layer.prepare(**self.weights)
            self.layers[key] = layer
        caches = [c.numpy() if isinstance(c, torch.Tensor) else c
                  for c in (k_cache, v_cache)]
        return AttentionSession(self, layer.session(
            batch=batch, k_cache=caches[0], v_cache=caches[1]))


class AttentionSession:
    """Decoding with an Attention's cache layer: step(x) takes the new
    tokens x [batch, T, E] (a prefill, or one token per sequence) as a
    tensor and returns y [batch, T, out] (a view of the compiled code's
    buffer); lengths, reset() and capacity as mha.DecodeSession's, and the
    caches as tensors sharing the session's memory."""

    def __init__(self, attention, session):
        self.attention = attention
        self.decode = session

    @property
    def batch(self):
        return self.decode.batch

    @property
    def capacity(self):
        return self.decode.capacity

    @property
    def lengths(self):
        return self.decode.lengths

    @lengths.setter
    def lengths(self, lengths):
        if isinstance(lengths, torch.Tensor):
            lengths = lengths.detach().cpu().numpy()
        self.decode.lengths = lengths

    @property
    def k_cache(self):
        return torch.from_numpy(self.decode.k_cache)

    @property
    def v_cache(self):
        return torch.from_numpy(self.decode.v_cache)

    def reset(self):
        self.decode.reset()

    def step(self, x):
        array, unbatched = self.attention._input(x)
        if unbatched:
            raise ValueError("x: a session's step takes [batch, T, %d], got "
                             "shape %s" % (self.attention.embed_dim,
                                           list(x.shape)))
        if array.shape[0] != self.decode.batch:
            raise ValueError("x: the session decodes %d sequences, got a "
                             "batch of %d" % (self.decode.batch,
                                              array.shape[0]))
        return torch.from_numpy(self.decode.step(array))

    def __repr__(self):
        return "AttentionSession(batch=%d, capacity=%d, lengths=%s)" % (
            self.batch, self.capacity, self.lengths.tolist())
