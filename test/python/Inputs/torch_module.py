"""mha.torch.MultiheadAttention against nn.MultiheadAttention (eval mode,
need_weights=False) within 1e-5: self- and cross-attention, batch_first or
not, a bool attn_mask, a key_padding_mask, causal."""
import torch

from mha.torch import MultiheadAttention

torch.manual_seed(0)
failures = 0
for batch_first in (False, True):
    module = torch.nn.MultiheadAttention(64, 4, batch_first=batch_first).eval()
    fast = MultiheadAttention.from_torch(module)
    shape = (2, 16, 64) if batch_first else (16, 2, 64)
    x = torch.randn(*shape)
    kv = torch.randn(*((2, 24, 64) if batch_first else (24, 2, 64)))
    causal = torch.triu(torch.ones(16, 16, dtype=torch.bool), 1)
    padding = torch.zeros(2, 16, dtype=torch.bool)
    padding[1, 12:] = True
    cases = {
        "self": ((x, x, x), {}),
        "cross": ((x, kv, kv), {}),
        "attn_mask": ((x, x, x), {"attn_mask": causal}),
        "key_padding_mask": ((x, x, x), {"key_padding_mask": padding}),
    }
    for name, (args, kwargs) in cases.items():
        with torch.no_grad():
            expected, _ = module(*args, need_weights=False, **kwargs)
        got, _ = fast(*args, need_weights=False, **kwargs)
        error = (got - expected).abs().max().item()
        ok = error <= 1e-5
        failures += not ok
        print("batch_first=%s %s: max abs error %.2e: %s"
              % (batch_first, name, error, "ok" if ok else "FAILED"))
try:
    fast(x, x, x)
except NotImplementedError as error:
    print("need_weights=True: NotImplementedError:", error)
print("%d failures" % failures)
