"""mha.torch: PyTorch's nn.MultiheadAttention, inference only, run by mha.

    from mha.torch import MultiheadAttention
    fast = MultiheadAttention.from_torch(module)    # an nn.MultiheadAttention
    y, _ = fast(x, x, x, need_weights=False)         # as module(x, x, x, ...)

The weights are converted once (docs/from-pytorch.md: w_q = in_proj_weight[
0:E].T, ...) and bound with prepare(); each variant the calls need (self- or
cross-attention, causal, a mask) is compiled once with `?` batch and
sequence sizes. What mha cannot do raises NotImplementedError saying so.
Needs PyTorch (Debian's python3-torch).
"""
import numpy as np
import torch

import mha


class MultiheadAttention:
    """Callable like `module` for inference; see the module's docstring."""

    def __init__(self, module, **pipeline_options):
        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError("expected a torch.nn.MultiheadAttention, got %s"
                            % type(module).__name__)
        if module.bias_k is not None or module.add_zero_attn:
            raise NotImplementedError("add_bias_kv and add_zero_attn have no "
                                      "equivalent in mha")
        self.embed_dim = module.embed_dim
        self.num_heads = module.num_heads
        self.batch_first = module.batch_first
        self.kdim, self.vdim = module.kdim, module.vdim
        if self.kdim != self.vdim:
            raise NotImplementedError("mha takes keys and values from one "
                                      "input: kdim must equal vdim")
        self.dropout = module.dropout
        self.module = module
        self.pipeline_options = pipeline_options
        e = self.embed_dim

        def numpy(tensor):
            return np.ascontiguousarray(tensor.detach().cpu().to(torch.float32).numpy())

        if module._qkv_same_embed_dim:
            w = module.in_proj_weight
            w_q, w_k, w_v = w[0:e], w[e:2 * e], w[2 * e:]
        else:
            w_q, w_k, w_v = module.q_proj_weight, module.k_proj_weight, module.v_proj_weight
        self.weights = {"w_q": numpy(w_q.T), "w_k": numpy(w_k.T),
                        "w_v": numpy(w_v.T), "w_o": numpy(module.out_proj.weight.T)}
        self.bias = module.in_proj_bias is not None
        if self.bias:
            b = module.in_proj_bias
            self.weights.update(b_q=numpy(b[0:e]), b_k=numpy(b[e:2 * e]),
                                b_v=numpy(b[2 * e:]), b_o=numpy(module.out_proj.bias))
        self.layers = {}

    @classmethod
    def from_torch(cls, module, **pipeline_options):
        """The mha layer for `module` (compiled with pipeline_options)."""
        return cls(module, **pipeline_options)

    def _layer(self, cross, causal, mask, broadcast):
        key = (cross, causal, mask, broadcast)
        if key not in self.layers:
            options = dict(d_model=self.embed_dim, heads=self.num_heads,
                           causal=causal, bias=self.bias, mask=mask,
                           mask_broadcast=broadcast)
            if cross:
                options.update(cross=True, kv_dim=self.kdim, kv_seq=None)
            layer = mha.layer(**options, **self.pipeline_options)
            layer.prepare(**self.weights)
            self.layers[key] = layer
        return self.layers[key]

    def _batched(self, tensor, name):
        if tensor.dtype != torch.float32:
            raise ValueError("%s: mha computes in float32, got %s" % (name, tensor.dtype))
        array = tensor.detach().cpu().numpy()
        if array.ndim == 2:
            return array[np.newaxis]
        return array if self.batch_first else array.transpose(1, 0, 2)

    def __call__(self, query, key, value, key_padding_mask=None,
                 need_weights=True, attn_mask=None, average_attn_weights=True,
                 is_causal=False):
        if need_weights:
            raise NotImplementedError(
                "mha.torch returns no attention weights: call with "
                "need_weights=False (mha-run --dump-attention writes them)")
        if self.module.training and self.dropout > 0:
            raise NotImplementedError("mha has no dropout: call module.eval()")
        if key is not value:
            raise NotImplementedError("mha takes keys and values from one "
                                      "input: pass the same tensor as key and value")
        unbatched = query.dim() == 2
        cross = key is not query
        x = self._batched(query, "query")
        kv = self._batched(key, "key") if cross else None
        batch, queries = x.shape[0], x.shape[1]
        keys = kv.shape[1] if cross else queries
        # mha's mask: true = may attend (PyTorch's bool masks: true = not).
        mask = None
        if attn_mask is not None:
            if attn_mask.dtype != torch.bool:
                raise NotImplementedError("mha takes a bool attn_mask only "
                                          "(a float mask adds to the scores)")
            if attn_mask.dim() != 2:
                raise NotImplementedError("mha takes one [L, S] attn_mask for "
                                          "all heads, not one per head")
            mask = ~attn_mask.cpu().numpy()[np.newaxis]
        if key_padding_mask is not None:
            if key_padding_mask.dtype != torch.bool:
                raise NotImplementedError("mha takes a bool key_padding_mask only")
            padding = ~key_padding_mask.cpu().numpy().reshape(batch, 1, keys)
            mask = padding if mask is None else mask & padding
            mask = np.broadcast_to(mask, (batch, queries, keys))
        arguments = {"x": x if x.flags.c_contiguous else np.ascontiguousarray(x)}
        if cross:
            arguments["kv"] = np.ascontiguousarray(kv)
        broadcast = mask is not None and mask.shape[0] == 1
        if mask is not None:
            arguments["mask"] = np.ascontiguousarray(mask)
        layer = self._layer(cross, bool(is_causal), mask is not None, broadcast)
        y = layer(**arguments)
        if unbatched:
            y = y[0]
        elif not self.batch_first:
            y = y.transpose(1, 0, 2)
        return torch.from_numpy(np.ascontiguousarray(y)), None
