"""mha.torch: PyTorch's nn.MultiheadAttention, inference only, run by mha.

    from mha.torch import MultiheadAttention
    fast = MultiheadAttention.from_torch(module)    # an nn.MultiheadAttention
    y, w = fast(x, x, x)                             # as module(x, x, x, ...)
    y, _ = fast(x, x, x, need_weights=False)         # the fast call

The weights are converted once (docs/from-pytorch.md: w_q = in_proj_weight[
0:E].T, ...) and bound with prepare(); later changes to the module's
parameters are not seen. Each variant the calls need (self-attention,
cross-attention with keys and values from one tensor or from two, causal,
a mask) is compiled once, with `?` batch and sequence sizes, at its first
call. Tensors go to the compiled code without a copy where their layout
allows (float32, C order; batch_first=False inputs with a batch above 1 are
copied into mha's [B, T, E]), and the output is a view of the compiled
code's own buffer.

What it takes, as nn.MultiheadAttention does: batched [N, L, E] (or
[L, N, E]) and unbatched [L, E] inputs; bias or not; kdim and vdim; a bool
attn_mask [L, S] or [N*H, L, S] (the same for every head), or a float one of
0 and -inf only; a bool key_padding_mask [N, S]; is_causal=True (query i
sees keys j <= i; as in PyTorch 2, a bool attn_mask given too must be that
mask); a float attn_mask (or key_padding_mask) of any other values, added
to the scores as PyTorch adds it (-inf and large negatives allowed;
[L, S], or [N*H, L, S] which may differ between heads), runs as mha's score
bias attn_bias;
need_weights with average_attn_weights (the weights come from a second
compiled function, mha's attention-weights path). What mha cannot do raises
NotImplementedError saying so: dropout in training mode, add_bias_kv,
add_zero_attn, a bool mask that differs between heads, gradients. A query
row whose mask allows no key (bool, or a float row all -inf) gives b_o
(weights 0) where PyTorch gives NaN. Needs PyTorch (Debian's python3-torch).
"""
import numpy as np
import torch

import mha

__all__ = ["MultiheadAttention"]

_FLOAT32 = np.dtype(np.float32)
# The layers' key (kind, causal, mask, mask broadcast, attn_bias shape or
# None) of plain self-attention, the call __call__ takes the shortest path
# for.
_PLAIN_SELF = ("self", False, False, False, None)


def _numpy(tensor):
    """A parameter as a C-order float32 array (a copy: the layer keeps it)."""
    return np.ascontiguousarray(tensor.detach().cpu().to(torch.float32).numpy())


class MultiheadAttention:
    """Callable like `module` for inference; see the module's docstring."""

    def __init__(self, module, **pipeline_options):
        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError("expected a torch.nn.MultiheadAttention, got %s"
                            % type(module).__name__)
        if module.bias_k is not None or module.add_zero_attn:
            raise NotImplementedError("add_bias_kv and add_zero_attn have no "
                                      "equivalent in mha")
        self.embed_dim = e = module.embed_dim
        self.num_heads = module.num_heads
        self.batch_first = module.batch_first
        self.kdim, self.vdim = module.kdim, module.vdim
        self.dropout = module.dropout
        self.module = module
        self.pipeline_options = pipeline_options

        if module._qkv_same_embed_dim:
            w = module.in_proj_weight
            w_q, w_k, w_v = w[0:e], w[e:2 * e], w[2 * e:]
        else:
            w_q, w_k, w_v = (module.q_proj_weight, module.k_proj_weight,
                             module.v_proj_weight)
        self.weights = {"w_q": _numpy(w_q.T), "w_k": _numpy(w_k.T),
                        "w_v": _numpy(w_v.T),
                        "w_o": _numpy(module.out_proj.weight.T)}
        in_bias, out_bias = module.in_proj_bias, module.out_proj.bias
        self.bias = in_bias is not None or out_bias is not None
        if self.bias:
            # mha's layers take all four biases or none: a missing one is 0.
            if in_bias is None:
                in_bias = torch.zeros(3 * e)
            if out_bias is None:
                out_bias = torch.zeros(e)
            self.weights.update(b_q=_numpy(in_bias[0:e]),
                                b_k=_numpy(in_bias[e:2 * e]),
                                b_v=_numpy(in_bias[2 * e:]),
                                b_o=_numpy(out_bias))
        self.layers = {}
        # The causal [L, S] masks seen so far, to recognize one in attn_mask.
        self._causal_masks = {}

    @classmethod
    def from_torch(cls, module, **pipeline_options):
        """The mha layer for `module` (compiled with pipeline_options, e.g.
        attention="fused"; mha.compile's)."""
        return cls(module, **pipeline_options)

    # -- the compiled variants -------------------------------------------

    def _layer(self, kind, causal, mask, broadcast, bias=None):
        """The layer for `kind` ("self": x; "cross": x and kv, keys and values
        from one tensor; "separate": x, key and value), compiled and prepared
        at its first use."""
        key = (kind, causal, mask, broadcast, bias)
        layer = self.layers.get(key)
        if layer is None:
            if kind == "separate":
                layer = mha.compile(
                    self._separate_graph(causal, mask, broadcast, bias),
                    **self.pipeline_options)
            else:
                options = dict(d_model=self.embed_dim, heads=self.num_heads,
                               causal=causal, bias=self.bias, mask=mask,
                               mask_broadcast=broadcast, attn_bias=bias)
                if kind == "cross":
                    options.update(cross=True, kv_dim=self.kdim, kv_seq=None)
                layer = mha.layer(**options, **self.pipeline_options)
            layer.prepare(**self.weights)
            self.layers[key] = layer
        return layer

    def _separate_graph(self, causal, mask, broadcast, bias=None):
        """The layer with keys and values from two inputs, written step by
        step (mha.attention takes one key/value input): project each,
        split the heads, sdpa, output projection."""
        e, h, k, v = self.embed_dim, self.num_heads, self.kdim, self.vdim
        d = e // h
        f = "tensor<%sxf32>"
        act = lambda width: f % ("?x?x%d" % width)
        heads = f % ("?x%dx?x%d" % (h, d))
        args = ['%%x: %s {mha.name = "x"}' % act(e),
                '%%key: %s {mha.name = "key"}' % act(k),
                '%%value: %s {mha.name = "value"}' % act(v)]
        mask_type = "tensor<%s?x?xi1>" % ("1x" if broadcast else "?x")
        if mask:
            args.append('%%mask: %s {mha.name = "mask"}' % mask_type)
        # The score bias [B or 1, H or 1, L, S], as mha.layer's attn_bias.
        bias_type = None
        if bias:
            bias_type = "tensor<%sxf32>" % "x".join(
                {"B": "?", "H": str(h), "T": "?", "S": "?"}.get(d, d)
                for d in bias.split(","))
            args.append('%%attn_bias: %s {mha.name = "attn_bias"}' % bias_type)
        args += ['%%w_q: %s {mha.name = "w_q"}' % (f % ("%dx%d" % (e, e))),
                 '%%w_k: %s {mha.name = "w_k"}' % (f % ("%dx%d" % (k, e))),
                 '%%w_v: %s {mha.name = "w_v"}' % (f % ("%dx%d" % (v, e))),
                 '%%w_o: %s {mha.name = "w_o"}' % (f % ("%dx%d" % (e, e)))]
        if self.bias:
            args += ['%%b_%s: %s {mha.name = "b_%s"}' % (n, f % e, n)
                     for n in "qkvo"]

        def project(name, source, width):
            bias = " bias(%%b_%s)" % name if self.bias else ""
            types = [act(width), f % ("%dx%d" % (width, e))]
            types += [f % e] if self.bias else []
            return ("  %%%s = mha.project %%%s, %%w_%s%s : (%s) -> %s\n"
                    "  %%%sh = mha.split_heads %%%s heads(%d) : %s -> %s\n"
                    % (name, source, name, bias, ", ".join(types), act(e),
                       name, name, h, act(e), heads))

        sdpa_types = ([heads] * 3 + ([mask_type] if mask else [])
                      + ([bias_type] if bias else []))
        out_types = [heads, f % ("%dx%d" % (e, e))] + ([f % e] if self.bias else [])
        return ("func.func @mha(%s) -> %s {\n" % (", ".join(args), act(e))
                + project("q", "x", e) + project("k", "key", k)
                + project("v", "value", v)
                + "  %%o = mha.sdpa %%qh, %%kh, %%vh%s%s%s : (%s) -> %s\n"
                % (" mask(%mask)" if mask else "", " causal" if causal else "",
                   " bias(%attn_bias)" if bias else "",
                   ", ".join(sdpa_types), heads)
                + "  %%y = mha.output_project %%o, %%w_o%s : (%s) -> %s\n"
                % (" bias(%b_o)" if self.bias else "", ", ".join(out_types),
                   act(e))
                + "  return %%y : %s\n}\n" % act(e))

    # -- the arguments ---------------------------------------------------

    def _array(self, tensor, name, rank=None):
        """`tensor` as a NumPy [N, L, E] view (no copy) and its rank (2 for
        an unbatched [L, E]); `rank` None takes either, as query does.

        One PyTorch call, tensor.numpy(), when the tensor is as expected:
        the compiled code leaves the caches cold, and each distinct PyTorch
        call then costs microseconds (python/README.md, "Calling
        overhead"). What numpy() refuses, or a wrong dtype or rank, takes
        _checked_array's checks and messages."""
        if not isinstance(tensor, torch.Tensor):
            raise TypeError("%s: expected a torch.Tensor, got %s"
                            % (name, type(tensor).__name__))
        try:
            array = tensor.numpy()
        except (RuntimeError, TypeError):  # requires grad, not on the CPU
            array = None
        if (array is None or array.dtype != _FLOAT32
                or array.ndim != rank and (rank or array.ndim not in (2, 3))):
            array = self._checked_array(tensor, name, rank)
        if array.ndim == 2:
            return array[np.newaxis], 2
        return (array if self.batch_first else array.transpose(1, 0, 2)), 3

    def _checked_array(self, tensor, name, rank):
        """`tensor` as a NumPy array, or the exception that says what is
        wrong with it."""
        if tensor.dtype != torch.float32:
            raise ValueError("%s: mha computes in float32, got %s"
                             % (name, tensor.dtype))
        if tensor.device.type != "cpu":
            raise ValueError("%s: mha runs on the CPU, got a tensor on %s"
                             % (name, tensor.device))
        if tensor.dim() != rank and (rank or tensor.dim() not in (2, 3)):
            expected = ("[N, L, E] or [L, N, E] (batched), or [L, E]"
                        if rank is None else "%dD, as query is" % rank)
            raise ValueError("%s: expected %s, got shape %s"
                             % (name, expected, list(tensor.shape)))
        if tensor.requires_grad and torch.is_grad_enabled():
            raise NotImplementedError(
                "%s requires grad: mha.torch is for inference and computes no "
                "gradients (call under torch.no_grad() or inference_mode())"
                % name)
        return tensor.detach().numpy()

    def _masked(self, mask, name):
        """A PyTorch mask as a bool array, True = masked out: a bool mask as
        it is, a float one of 0 and -inf only."""
        if mask.dtype == torch.bool:
            masked = mask.detach().cpu().numpy()
            # A byte other than 0 or 1 is refused, as in a call's mask.
            mha._mha.check_mask_bytes(masked, name)
            return masked
        if mask.dtype == torch.uint8:  # deprecated in PyTorch, still taken
            return mask.detach().cpu().numpy().astype(bool)
        if mask.is_floating_point():
            m = mask.detach().cpu().numpy()
            masked = np.isneginf(m)
            if np.all(masked | (m == 0)):
                return masked
            raise NotImplementedError(
                "%s: mha takes bool masks, or float ones of 0 and -inf only "
                "(other values added to the scores are not supported)" % name)
        raise NotImplementedError("%s: mha takes bool masks, got %s"
                                  % (name, mask.dtype))

    @staticmethod
    def _is_additive(mask):
        """Whether `mask` is a float mask with values other than 0 and -inf,
        which only a score bias expresses."""
        if mask is None or not mask.is_floating_point():
            return False
        m = mask.detach().cpu().numpy()
        return not np.all(np.isneginf(m) | (m == 0))

    @staticmethod
    def _additive(mask, name):
        """A PyTorch mask as what it adds to the scores (float32): a float
        one as it is, a bool one -inf where True (masked out)."""
        if mask.is_floating_point():
            return mask.detach().cpu().numpy().astype(np.float32, copy=False)
        if mask.dtype == torch.bool:
            masked = mask.detach().cpu().numpy()
            mha._mha.check_mask_bytes(masked, name)
        elif mask.dtype == torch.uint8:
            masked = mask.detach().cpu().numpy().astype(bool)
        else:
            raise NotImplementedError("%s: mha takes bool or float masks, "
                                      "got %s" % (name, mask.dtype))
        return np.where(masked, np.float32(-np.inf), np.float32(0))

    def _bias(self, attn_mask, key_padding_mask, batch, queries, keys,
              unbatched):
        """The float masks as mha's score bias attn_bias [N or 1, H or 1, L,
        S] (float32, C order), and its shape as mha.layer spells it
        ("1,1,T,S", "B,H,T,S", ...): PyTorch adds attn_mask and
        key_padding_mask to the scores, and so does mha."""
        h = self.num_heads
        bias = np.zeros((1, 1, queries, keys), np.float32)
        if attn_mask is not None:
            m = self._additive(attn_mask, "attn_mask")
            if m.ndim == 3 and m.shape == ((h,) if unbatched else
                                           (batch * h,)) + (queries, keys):
                m = m.reshape(batch, h, queries, keys)
                if (m == m[:, :1]).all():   # NaN differs from itself: kept
                    m = m[:, :1]
                bias = m
            elif m.shape == (queries, keys):
                bias = m[np.newaxis, np.newaxis]
            else:
                raise ValueError(
                    "attn_mask: expected shape %s or %s, got %s"
                    % ([queries, keys], [(1 if unbatched else batch) * h,
                                         queries, keys], list(m.shape)))
        if key_padding_mask is not None:
            p = self._additive(key_padding_mask, "key_padding_mask")
            expected = (keys,) if unbatched else (batch, keys)
            if p.shape != expected:
                raise ValueError("key_padding_mask: expected shape %s, got %s"
                                 % (list(expected), list(p.shape)))
            bias = bias + p.reshape(batch, 1, 1, keys)
        shape = "%s,%s,T,S" % ("B" if bias.shape[0] > 1 else "1",
                               "H" if bias.shape[1] > 1 else "1")
        return np.ascontiguousarray(bias, dtype=np.float32), shape

    def _is_causal_mask(self, masked):
        """Whether `masked` [L, S] is PyTorch's causal mask triu(ones, 1)."""
        shape = masked.shape
        causal = self._causal_masks.get(shape)
        if causal is None:
            causal = np.triu(np.ones(shape, dtype=bool), 1)
            if len(self._causal_masks) < 16:
                self._causal_masks[shape] = causal
        return np.array_equal(masked, causal)

    def _mask(self, attn_mask, key_padding_mask, batch, queries, keys,
              unbatched, causal):
        """mha's mask (True = may attend), [1 or N, L, S], or None; and
        whether the call is causal."""
        allowed = None
        if attn_mask is not None:
            masked = self._masked(attn_mask, "attn_mask")
            h = self.num_heads
            if masked.ndim == 3 and masked.shape == ((h,) if unbatched else
                                                      (batch * h,)) + (queries, keys):
                per_head = masked.reshape(batch, h, queries, keys)
                if not (per_head == per_head[:, :1]).all():
                    raise NotImplementedError(
                        "attn_mask: mha takes one mask for all heads; this "
                        "[N*H, L, S] mask differs between heads")
                masked = per_head[:, 0]
                if batch == 1:
                    masked = masked[0]
            elif masked.shape != (queries, keys):
                raise ValueError(
                    "attn_mask: expected shape %s or %s, got %s"
                    % ([queries, keys], [(1 if unbatched else batch) * h,
                                         queries, keys], list(masked.shape)))
            if masked.ndim == 2 and self._is_causal_mask(masked):
                causal = True   # the causal kernel skips the masked blocks
            elif masked.ndim == 2 and not masked.any():
                pass            # e.g. a float mask of zeros: no mask at all
            else:
                allowed = ~masked
                if allowed.ndim == 2:
                    allowed = allowed[np.newaxis]
        if key_padding_mask is not None:
            padding = self._masked(key_padding_mask, "key_padding_mask")
            expected = (keys,) if unbatched else (batch, keys)
            if padding.shape != expected:
                raise ValueError("key_padding_mask: expected shape %s, got %s"
                                 % (list(expected), list(padding.shape)))
            keep = ~padding.reshape(batch, 1, keys)
            allowed = keep if allowed is None else allowed & keep
            allowed = np.broadcast_to(allowed, (batch, queries, keys))
        if allowed is not None:
            allowed = np.ascontiguousarray(allowed)
        return allowed, causal

    def _widths_fit(self, arguments):
        """Whether each input has its declared width (else the layer says
        which does not)."""
        widths = {"x": self.embed_dim, "kv": self.kdim, "key": self.kdim,
                  "value": self.vdim}
        return all(arguments[name].shape[2] == width
                   for name, width in widths.items() if name in arguments)

    def _empty(self, batch, queries, keys, unbatched, need_weights, average):
        """PyTorch's answer where the batch or a sequence is empty, which the
        compiled layer does not take: y [N, L, E] of b_o (attention over no
        key adds nothing before the output projection) and weights of zeros
        [N, L, S] (or [N, H, L, S]); empty where N or L is 0."""
        e = self.embed_dim
        b_o = self.weights.get("b_o", np.zeros(e, _FLOAT32))
        y = np.empty((batch, queries, e), _FLOAT32)
        y[...] = b_o
        if unbatched:
            y = y[0]
        elif not self.batch_first:
            y = y.transpose(1, 0, 2)
        if not need_weights:
            return torch.from_numpy(y), None
        heads = () if average else (self.num_heads,)
        weights = np.zeros((batch,) + heads + (queries, keys), _FLOAT32)
        return torch.from_numpy(y), torch.from_numpy(
            weights[0] if unbatched else weights)

    def __call__(self, query, key, value, key_padding_mask=None,
                 need_weights=True, attn_mask=None, average_attn_weights=True,
                 is_causal=False):
        # A server's call, self-attention on [N, L, E] with nothing else,
        # takes the fewest steps: each Python step after a compiled call
        # runs with cold caches (python/README.md, "Calling overhead").
        # Anything else, or a tensor numpy() refuses, takes the path below.
        plain = self.layers.get(_PLAIN_SELF) if self.batch_first else None
        if (plain is not None and key is query and value is query
                and not need_weights and attn_mask is None
                and key_padding_mask is None and not is_causal
                and (not self.dropout or not self.module.training)):
            try:
                x = query.numpy()
            except (AttributeError, RuntimeError, TypeError):
                x = None
            if (x is not None and x.dtype == _FLOAT32 and x.ndim == 3
                    and x.size):
                return torch.from_numpy(plain(x)), None
        if self.dropout > 0 and self.module.training:
            raise NotImplementedError("mha has no dropout: call module.eval() "
                                      "(or build the module with dropout=0)")
        x, rank = self._array(query, "query")
        unbatched = rank == 2
        if key is query and value is query:
            kind, arguments = "self", {"x": x}
        elif key is value:
            kind = "cross"
            arguments = {"x": x, "kv": self._array(key, "key", rank)[0]}
        else:
            kind = "separate"
            arguments = {"x": x, "key": self._array(key, "key", rank)[0],
                         "value": self._array(value, "value", rank)[0]}
        causal = bool(is_causal)
        mask = bias_shape = None
        batch, queries = x.shape[0], x.shape[1]
        keys = x.shape[1] if kind == "self" else arguments[
            "key" if kind == "separate" else "kv"].shape[1]
        if self._is_additive(attn_mask) or self._is_additive(key_padding_mask):
            arguments["attn_bias"], bias_shape = self._bias(
                attn_mask, key_padding_mask, batch, queries, keys, unbatched)
        elif attn_mask is not None or key_padding_mask is not None:
            mask, causal = self._mask(attn_mask, key_padding_mask, batch,
                                      queries, keys, unbatched, causal)
            if mask is not None:
                arguments["mask"] = mask
        if not (batch and queries and keys) and self._widths_fit(arguments):
            return self._empty(batch, queries, keys, unbatched, need_weights,
                               average_attn_weights)
        variant = (kind, causal, mask is not None,
                   mask is not None and mask.shape[0] == 1, bias_shape)
        layer = self.layers.get(variant) or self._layer(*variant)
        # Indexed and transposed in NumPy: one PyTorch call, from_numpy.
        y = layer(**arguments)
        if unbatched:
            y = y[0]
        elif not self.batch_first:
            y = y.transpose(1, 0, 2)
        y = torch.from_numpy(y)
        if not need_weights:
            return y, None
        weights = layer.attention_weights(**arguments)  # [N, H, L, S]
        if average_attn_weights:
            weights = weights.mean(axis=1)
        weights = torch.from_numpy(weights)
        return y, weights[0] if unbatched else weights


def __getattr__(name):
    # The attention module built from a model's own projections lives in
    # mha/nn.py (which imports this module); it is reachable here too, where
    # PyTorch users look for the drop-ins.
    if name in ("Attention", "AttentionSession"):
        from . import nn

        return getattr(nn, name)
    raise AttributeError("module 'mha.torch' has no attribute '%s'" % name)
