"""mha.torch with float (additive) masks against nn.MultiheadAttention:
PyTorch adds a float attn_mask (and a float key_padding_mask) to the
scores; mha.torch passes their sum as the layer's score bias attn_bias.
Values of any size, -inf and large negatives ([L, S], [N*H, L, S] differing
between heads, unbatched [H, L, S]), with a bool or float key_padding_mask,
self- and cross-attention, keys and values apart, output and weights, within
1e-5.

A query row whose mask is -inf for every key: PyTorch's softmax over no
finite score gives NaN there, mha gives the attention of no key (zeros
before the output projection, so y = b_o, weights 0). The test checks
that row against b_o and compares the other rows only."""
import torch

from mha.torch import MultiheadAttention
from refusals import refusal

torch.manual_seed(1)
failures = 0
E, H, N, L, S = 32, 4, 2, 7, 9


def check(name, got, expected, rows=None):
    """rows: a [L] bool tensor of the query rows to compare (dim -2 of the
    weights, the query dimension of y)."""
    global failures
    ok = got.shape == expected.shape
    error = float("inf")
    if ok:
        diff = (got - expected).abs()
        if rows is not None:
            diff = diff[..., rows, :]
        error = diff.max().item()
        ok = error <= 1e-5
    failures += not ok
    print("%s: max abs error %s 1e-5: %s" % (
        name, "<=" if ok else "> (%.2e)" % error, "ok" if ok else "FAILED"))


def module_for(batch_first, bias=True, kdim=None, vdim=None):
    module = torch.nn.MultiheadAttention(E, H, batch_first=batch_first,
                                         bias=bias, kdim=kdim, vdim=vdim)
    if bias:
        with torch.no_grad():
            module.in_proj_bias.uniform_(-0.5, 0.5)
            module.out_proj.bias.uniform_(-0.5, 0.5)
    return module.eval()


def float_mask(*shape):
    """Values PyTorch adds as they are: ±3, some -1e9, some -inf, every
    row with a finite entry."""
    m = torch.randn(*shape) * 3
    m[torch.rand(*shape) < 0.15] = -1e9
    m[torch.rand(*shape) < 0.2] = float("-inf")
    m[..., 0] = torch.randn(m[..., 0].shape)
    return m


def compare(name, module, query, key, value, rows=None, reference=None,
            **masks):
    """reference: the masks PyTorch is called with, where they differ from
    `masks` (what mha.torch is called with)."""
    fast = MultiheadAttention(module)
    reference = masks if reference is None else reference
    with torch.no_grad():
        for average in (True, False):
            want_y, want_w = module(query, key, value, need_weights=True,
                                    average_attn_weights=average,
                                    **reference)
            got_y, got_w = fast(query, key, value, need_weights=True,
                                average_attn_weights=average, **masks)
            what = "averaged" if average else "per-head"
            y_rows = rows
            # y's query dimension is -2 with batch_first or unbatched, else
            # -3 ([L, N, E]): compare there through a transposed view.
            if rows is not None and query.dim() == 3 and not module.batch_first:
                got_y, want_y = got_y.transpose(0, 1), want_y.transpose(0, 1)
            check("%s: output (%s call)" % (name, what), got_y, want_y, y_rows)
            check("%s: %s weights" % (name, what), got_w, want_w, rows)
        got_y, got_w = fast(query, key, value, need_weights=False, **masks)
        if rows is not None and query.dim() == 3 and not module.batch_first:
            got_y = got_y.transpose(0, 1)
            want_y = want_y  # already transposed above
        check("%s: output (need_weights=False)" % name, got_y, want_y, rows)
    return fast


for batch_first in (True, False):
    for bias in (True, False):
        module = module_for(batch_first, bias)
        x = torch.randn(N, L, E) if batch_first else torch.randn(L, N, E)
        compare("batch_first=%s bias=%s self, [L, L]" % (batch_first, bias),
                module, x, x, x, attn_mask=float_mask(L, L))

module = module_for(True)
x, kv = torch.randn(N, L, E), torch.randn(N, S, E)
compare("cross, [N*H, L, S] differing between heads", module, x, kv, kv,
        attn_mask=float_mask(N * H, L, S))
padding = torch.zeros(N, S, dtype=torch.bool)
padding[1, 5:] = True
compare("cross, [L, S] and a bool key_padding_mask", module, x, kv, kv,
        attn_mask=float_mask(L, S), key_padding_mask=padding)
float_padding = torch.zeros(N, S)
float_padding[0, 6:] = -2.5
float_padding[1, 7:] = float("-inf")
compare("cross, a float key_padding_mask alone", module, x, kv, kv,
        key_padding_mask=float_padding)
# Both float: PyTorch 2 adds both (F._canonical_mask); PyTorch 1.13 fills
# -inf where the float key_padding_mask is nonzero. mha.torch adds, as
# PyTorch 2 does: the reference is PyTorch called with the sum.
both = float_mask(N * H, L, S)
summed = both + float_padding.repeat_interleave(H, 0)[:, None, :]
compare("cross, float attn_mask and key_padding_mask (added)", module, x, kv,
        kv, attn_mask=both, key_padding_mask=float_padding,
        reference=dict(attn_mask=summed))
xu, kvu = torch.randn(L, E), torch.randn(S, E)
compare("unbatched cross, [H, L, S]", module, xu, kvu, kvu,
        attn_mask=float_mask(H, L, S))

apart = module_for(True, kdim=20, vdim=12)
key, value = torch.randn(N, S, 20), torch.randn(N, S, 12)
compare("kdim=20 vdim=12 key and value apart, [N*H, L, S]", apart, x, key,
        value, attn_mask=float_mask(N * H, L, S))
compare("kdim=20 vdim=12 key and value apart, [L, S]", apart, x, key,
        value, attn_mask=float_mask(L, S), key_padding_mask=padding)

# A row of -1e9 everywhere is finite: PyTorch's softmax of equal scores,
# and mha's the same.
module = module_for(True)
x = torch.randn(N, L, E)
m = float_mask(L, L)
m[2] = -1e9
compare("a row all -1e9", module, x, x, x, attn_mask=m)

# A row all -inf: NaN in PyTorch, b_o in mha; the other rows compared.
m = float_mask(L, L)
m[3] = float("-inf")
rows = torch.ones(L, dtype=torch.bool)
rows[3] = False
fast = compare("a row all -inf (the other rows)", module, x, x, x, rows=rows,
               attn_mask=m)
with torch.no_grad():
    want, want_w = module(x, x, x, attn_mask=m)
    got, got_w = fast(x, x, x, attn_mask=m)
print("a row all -inf: PyTorch's row is NaN:", bool(want[:, 3].isnan().all()),
      "mha's row is b_o:",
      bool(torch.allclose(got[:, 3], module.out_proj.bias.expand(N, E),
                          atol=1e-6)),
      "mha's weights there are 0:", bool((got_w[:, 3] == 0).all()))


fast = MultiheadAttention(module)
failures += refusal("float mask shape", lambda: fast(
    x, x, x, attn_mask=torch.randn(L, L + 1)))
failures += refusal("float padding shape", lambda: fast(
    x, x, x, key_padding_mask=torch.randn(N, L + 1)))
failures += refusal("int mask with a float padding", lambda: fast(
    x, x, x, attn_mask=torch.zeros(L, L, dtype=torch.int32),
    key_padding_mask=torch.randn(N, L)))
print("failures:", failures)
