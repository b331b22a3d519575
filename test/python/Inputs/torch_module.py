"""mha.torch.MultiheadAttention against nn.MultiheadAttention (eval mode)
within 1e-5, outputs and attention weights, on every configuration the
bridge takes: batch_first or not, bias or not, kdim/vdim (equal or not),
self-attention, keys and values from one tensor or from two, bool and
0/-inf float attn_mask ([L, S] and [N*H, L, S]), is_causal (PyTorch 1.13
has no is_causal: its reference is the causal attn_mask), key_padding_mask,
both masks, unbatched inputs, need_weights averaged and per head. Then each
refusal, with its exception."""
import torch

from mha.torch import MultiheadAttention
from refusals import refusal

torch.manual_seed(0)
failures = 0
E, H, N, L, S = 32, 4, 2, 7, 9


def check(name, got, expected):
    global failures
    if expected is None or got is None:
        ok = expected is None and got is None
        error = 0.0
    else:
        ok = got.shape == expected.shape
        error = ((got - expected).abs().max().item() if ok and got.numel()
                 else 0.0 if ok else float("inf"))
        ok = ok and error <= 1e-5
    failures += not ok
    print("%s: max abs error %.2e: %s" % (name, error, "ok" if ok else "FAILED"))


def module_for(batch_first, bias=True, kdim=None, vdim=None):
    module = torch.nn.MultiheadAttention(E, H, batch_first=batch_first,
                                         bias=bias, kdim=kdim, vdim=vdim)
    if bias:  # PyTorch starts them at 0; random ones test where they go
        with torch.no_grad():
            module.in_proj_bias.uniform_(-0.5, 0.5)
            module.out_proj.bias.uniform_(-0.5, 0.5)
    return module.eval()


def tensor(batch_first, length, width, unbatched=False):
    if unbatched:
        return torch.randn(length, width)
    return torch.randn(N, length, width) if batch_first else torch.randn(length, N, width)


causal_mask = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
cross_mask = torch.rand(L, S) < 0.3
cross_mask[:, 0] = False  # every query sees a key (else PyTorch gives NaN)
float_mask = torch.zeros(L, S).masked_fill(cross_mask, float("-inf"))
per_head = cross_mask.expand(N * H, L, S).clone()
padding = torch.zeros(N, S, dtype=torch.bool)
padding[1, 5:] = True
self_padding = torch.zeros(N, L, dtype=torch.bool)
self_padding[0, 4:] = True


def detached(result):
    return tuple(t.detach() if t is not None else None for t in result)


def run_cases(label, module, cases):
    fast = MultiheadAttention.from_torch(module)
    for name, args, kwargs, reference_kwargs in cases:
        for need_weights, average in ((False, True), (True, True), (True, False)):
            call = dict(kwargs, need_weights=need_weights,
                        average_attn_weights=average)
            reference = dict(kwargs, **reference_kwargs)
            reference.pop("is_causal", None)
            reference.update(need_weights=need_weights,
                             average_attn_weights=average)
            # With autograd on, PyTorch 1.13 takes its general path, which
            # handles bias=False (its no_grad fast path does not).
            expected, expected_weights = detached(module(*args, **reference))
            got, weights = fast(*args, **call)
            what = ("need_weights=False" if not need_weights else
                    "averaged weights" if average else "per-head weights")
            check("%s %s: output (%s)" % (label, name, what), got, expected)
            if need_weights:
                check("%s %s: %s" % (label, name, what), weights, expected_weights)


for batch_first in (False, True):
    for bias in (True, False):
        module = module_for(batch_first, bias)
        x, kv = tensor(batch_first, L, E), tensor(batch_first, S, E)
        value = tensor(batch_first, S, E)
        cases = [
            ("self", (x, x, x), {}, {}),
            ("cross", (x, kv, kv), {}, {}),
            ("key and value apart", (x, kv, value), {}, {}),
            ("bool attn_mask", (x, kv, kv), {"attn_mask": cross_mask}, {}),
            ("float attn_mask", (x, kv, value), {"attn_mask": float_mask}, {}),
            ("float attn_mask of zeros", (x, x, x), {"attn_mask": torch.zeros(L, L)}, {}),
            ("[N*H, L, S] attn_mask", (x, kv, kv), {"attn_mask": per_head}, {}),
            ("is_causal", (x, x, x), {"is_causal": True},
             {"attn_mask": causal_mask}),
            ("causal attn_mask", (x, x, x), {"attn_mask": causal_mask}, {}),
            ("key_padding_mask", (x, kv, kv), {"key_padding_mask": padding}, {}),
            ("both masks", (x, x, x), {"key_padding_mask": self_padding,
                                       "attn_mask": causal_mask}, {}),
        ]
        if not bias:  # where the biases go is tested with them; less here
            cases = [c for c in cases if c[0] in ("key and value apart",
                                                  "is_causal", "both masks")]
        run_cases("batch_first=%s bias=%s" % (batch_first, bias), module, cases)
        if not bias:
            continue
        xu, kvu = tensor(batch_first, L, E, True), tensor(batch_first, S, E, True)
        run_cases("batch_first=%s bias=%s unbatched" % (batch_first, bias), module, [
            ("self", (xu, xu, xu), {}, {}),
            ("cross, key_padding_mask", (xu, kvu, kvu),
             {"key_padding_mask": padding[1]}, {}),
            ("[H, L, S] attn_mask", (xu, kvu, kvu),
             {"attn_mask": cross_mask.expand(H, L, S)}, {}),
        ])

for kdim, vdim in ((24, 24), (20, 12)):
    module = module_for(True, kdim=kdim, vdim=vdim)
    x, k, v = tensor(True, L, E), tensor(True, S, kdim), tensor(True, S, vdim)
    cases = [("key and value apart", (x, k, v), {}, {}),
             ("key and value apart, masks", (x, k, v),
              {"attn_mask": cross_mask, "key_padding_mask": padding}, {})]
    if kdim == vdim:
        cases += [("cross", (x, k, k), {}, {}),
                  ("cross, causal", (x, k, k), {"is_causal": True},
                   {"attn_mask": torch.triu(torch.ones(L, S, dtype=torch.bool), 1)})]
    run_cases("kdim=%d vdim=%d" % (kdim, vdim), module, cases)

# A module whose tensors are not batch_first and batch 1: no copy needed.
module = module_for(False)
x = torch.randn(L, 1, E)
with torch.no_grad():
    expected, _ = module(x, x, x, need_weights=False)
check("batch_first=False batch 1", MultiheadAttention(module)(x, x, x)[0], expected)
# A tensor that requires grad, under no_grad: numpy() refuses it, the
# checked path detaches it.
trainable = x.clone().requires_grad_()
with torch.no_grad():
    check("requires grad under no_grad",
          MultiheadAttention(module)(trainable, trainable, trainable)[0], expected)

# Once its layer is compiled, a plain self-attention call on [N, L, E]
# (need_weights=False, no mask) takes __call__'s shortest path: the same
# results as PyTorch, an unbatched query still the general path's.
module = module_for(True)
shortest = MultiheadAttention(module)
for call in (1, 2):
    x = tensor(True, L, E)
    with torch.no_grad():
        expected, _ = module(x, x, x, need_weights=False)
    got, weights = shortest(x, x, x, need_weights=False)
    check("shortest path, call %d" % call, got, expected)
    check("shortest path, call %d: no weights" % call, weights, None)
xu = tensor(True, L, E, unbatched=True)
with torch.no_grad():
    expected, _ = module(xu, xu, xu, need_weights=False)
check("shortest path's layer, unbatched query",
      shortest(xu, xu, xu, need_weights=False)[0], expected)


module = module_for(True)
fast = MultiheadAttention(module)
x = tensor(True, L, E)
differing = torch.zeros(N * H, L, L, dtype=torch.bool)
differing[1, 0, 1] = True
failures += refusal("per-head mask", lambda: fast(x, x, x, attn_mask=differing))
failures += refusal("int mask", lambda: fast(
    x, x, x, attn_mask=torch.zeros(L, L, dtype=torch.int32)))
failures += refusal("mask shape", lambda: fast(
    x, x, x, attn_mask=torch.zeros(L, L + 1, dtype=torch.bool)))
failures += refusal("padding shape", lambda: fast(
    x, x, x, key_padding_mask=torch.zeros(N, L + 1, dtype=torch.bool)))
failures += refusal("float64 query", lambda: fast(x.double(), x.double(), x.double()))
failures += refusal("4D query", lambda: fast(x[None], x[None], x[None]))
failures += refusal("list query", lambda: fast([1.0], [1.0], [1.0]))
failures += refusal("sizes that do not fit", lambda: fast(x, x[:, :, :8], x[:, :, :8]))
trainable = x.clone().requires_grad_()
failures += refusal("requires grad", lambda: fast(trainable, trainable, trainable))
training = torch.nn.MultiheadAttention(E, H, dropout=0.1)
failures += refusal("dropout in training", lambda: MultiheadAttention(training)(
    tensor(False, L, E), tensor(False, L, E), tensor(False, L, E)))
# The same refusals where the shortest path's layer is compiled.
for name, query in (("float64 query", x.double()), ("4D query", x[None]),
                    ("list query", [1.0]), ("requires grad", trainable)):
    failures += refusal("shortest path: " + name, lambda: shortest(
        query, query, query, need_weights=False))
dropout = torch.nn.MultiheadAttention(E, H, dropout=0.1, batch_first=True).eval()
shortest = MultiheadAttention(dropout)
shortest(x, x, x, need_weights=False)
dropout.train()
failures += refusal("shortest path: dropout in training", lambda: shortest(
    x, x, x, need_weights=False))
failures += refusal("add_bias_kv", lambda: MultiheadAttention(
    torch.nn.MultiheadAttention(E, H, add_bias_kv=True)))
failures += refusal("not a module", lambda: MultiheadAttention(torch.nn.Linear(4, 4)))
# A bool mask byte other than 0 or 1 is refused, as in mha's own calls.
bytes_padding = torch.zeros(N, L, dtype=torch.uint8)
bytes_padding[1, 3] = 2
failures += refusal("key_padding_mask byte 2", lambda: fast(
    x, x, x, key_padding_mask=bytes_padding.view(torch.bool)))
bytes_mask = torch.zeros(L, L, dtype=torch.uint8)
bytes_mask[2, 0] = 255
failures += refusal("attn_mask byte 255", lambda: fast(
    x, x, x, attn_mask=bytes_mask.view(torch.bool)))

# An empty batch or sequence: PyTorch's answer, empty tensors of the right
# shapes (and with no keys, b_o for every query and weights [..., L, 0]),
# on each layout and kind, and on the shortest path.
for batch_first in (False, True):
    module = module_for(batch_first)
    fast = MultiheadAttention(module)
    for name, (queries, keys, batch) in (("no queries", (0, S, N)),
                                         ("no keys", (L, 0, N)),
                                         ("empty batch", (L, S, 0))):
        q = torch.randn((batch, queries, E) if batch_first else (queries, batch, E))
        kv = torch.randn((batch, keys, E) if batch_first else (keys, batch, E))
        for kind, args in (("cross", (q, kv, kv)), ("apart", (q, kv, kv.clone()))):
            for need_weights, average in ((False, True), (True, True), (True, False)):
                options = dict(need_weights=need_weights, average_attn_weights=average)
                got = fast(*args, **options)
                with torch.no_grad():
                    expected = detached(module(*args, **options))
                label = "batch_first=%s %s, %s, weights %s" % (
                    batch_first, name, kind,
                    "none" if not need_weights else "averaged" if average else "per head")
                check(label + ": output", got[0], expected[0])
                check(label + ": weights", got[1], expected[1])
    for name, query in (("unbatched, no queries", torch.randn(0, E)),
                        ("unbatched, no keys", torch.randn(L, E))):
        key = query if name.endswith("queries") else torch.randn(0, E)
        with torch.no_grad():
            expected = detached(module(query, key, key))
        got = fast(query, key, key)
        check("batch_first=%s %s: output" % (batch_first, name), got[0], expected[0])
        check("batch_first=%s %s: weights" % (batch_first, name), got[1], expected[1])
module = module_for(True)
shortest = MultiheadAttention(module)
shortest(x, x, x, need_weights=False)
empty = torch.randn(N, 0, E)
with torch.no_grad():
    expected, _ = module(empty, empty, empty, need_weights=False)
check("shortest path, no queries", shortest(empty, empty, empty,
                                            need_weights=False)[0], expected)
print("%d failures" % failures)
