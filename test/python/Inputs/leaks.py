"""1,000 calls leak nothing: the inputs' reference counts are what they were,
Python's allocations (tracemalloc) and the process's resident memory do not
grow with the calls, though each result (256 KiB) is the compiled code's own
buffer handed to NumPy (a leaked one would add 250 MiB)."""
import gc
import sys
import tracemalloc

import numpy as np

import mha


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


layer = mha.layer(batch=2, seq=128, d_model=256, heads=4)
rng = np.random.default_rng(1)
inputs = {name: rng.standard_normal(shape, dtype=np.float32) * 0.1
          for name, shape, _ in layer.arguments}
counts = {name: sys.getrefcount(array) for name, array in inputs.items()}

for round_ in ("all arguments", "prepared"):
    if round_ == "prepared":
        layer.prepare(**{k: v for k, v in inputs.items() if k != "x"})
        args = {"x": inputs["x"]}
    else:
        args = inputs
    first = layer(**args)
    for _ in range(50):  # warm the buffer cache and NumPy's allocator
        layer(**args)
    gc.collect()
    tracemalloc.start()
    before_rss = rss_bytes()
    before_py = tracemalloc.get_traced_memory()[0]
    for _ in range(1000):
        y = layer(**args)
    del y
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - before_py
    tracemalloc.stop()
    grown_rss = rss_bytes() - before_rss
    print("%s: Python memory grew %d bytes, RSS %.1f MiB over 1000 calls"
          % (round_, grown_py, grown_rss / 2**20))
    print("%s: Python memory bounded: %s" % (round_, grown_py < 64 << 10))
    print("%s: RSS bounded: %s" % (round_, grown_rss < 16 << 20))
    print("%s: result refcount %d" % (round_, sys.getrefcount(first)))

del args  # its own reference to x
changed = {name: (counts[name], sys.getrefcount(array))
           for name, array in inputs.items() if sys.getrefcount(array) != counts[name]}
print("input reference counts unchanged:", not changed, changed or "")


def bounded(name, call, arguments):
    """1,000 calls of `call` leave Python's memory, the RSS and the
    arguments' reference counts as they were."""
    counts = [sys.getrefcount(a) for a in arguments]
    for _ in range(50):
        call()
    gc.collect()
    tracemalloc.start()
    before_rss = rss_bytes()
    before_py = tracemalloc.get_traced_memory()[0]
    for _ in range(1000):
        result = call()
    del result
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - before_py
    tracemalloc.stop()
    grown_rss = rss_bytes() - before_rss
    print("%s: Python memory grew %d bytes, RSS %.1f MiB over 1000 calls"
          % (name, grown_py, grown_rss / 2**20))
    print("%s: Python memory bounded: %s" % (name, grown_py < 64 << 10))
    print("%s: RSS bounded: %s" % (name, grown_rss < 16 << 20))
    print("%s: argument reference counts unchanged: %s" % (name, counts == [
        sys.getrefcount(a) for a in arguments]))


# The attention weights (512 KiB each, 500 MiB if leaked), a second
# compiled function.
x = inputs["x"]
bounded("attention_weights", lambda: layer.attention_weights(x), [x])

# A decode session: 1,000 steps of 16 tokens (each y 32 KiB, 31 MiB if
# leaked), the session reset whenever its cache of 64 tokens is full; the
# borrowed caches' and the tokens' reference counts stay as they were.
decoder = mha.layer(d_model=256, heads=4, kv_heads=2, kv_cache=64)
decoder.prepare(**{name: rng.standard_normal(shape, dtype=np.float32) * 0.05
                   for name, shape, _ in decoder.arguments
                   if name[:2] in ("w_", "b_")})
k_cache = np.zeros((2, 2, 64, 64), np.float32)
v_cache = np.zeros((2, 2, 64, 64), np.float32)
session = decoder.session(batch=2, k_cache=k_cache, v_cache=v_cache)
tokens = rng.standard_normal((2, 16, 256), dtype=np.float32)


def decode_step():
    if session.lengths[0] + 16 > session.capacity:
        session.reset()
    return session.step(tokens)


bounded("decode session", decode_step, [tokens, k_cache, v_cache])

try:
    import torch
    import mha.torch
except ImportError:
    torch = None
if torch is None:
    print("mha.torch: skipped, no PyTorch")
else:
    # The torch module: tensors in (no copy), the output tensor a view of
    # the compiled code's buffer; need_weights too, and a mask.
    module = torch.nn.MultiheadAttention(256, 4).eval()  # [L, N, E]
    fast = mha.torch.MultiheadAttention.from_torch(module)
    xt = torch.from_numpy(inputs["x"].transpose(1, 0, 2).copy())
    padding = torch.zeros(2, 128, dtype=torch.bool)
    padding[1, 100:] = True
    with torch.inference_mode():
        bounded("mha.torch", lambda: fast(xt, xt, xt, need_weights=False), [xt])
        bounded("mha.torch need_weights", lambda: fast(
            xt, xt, xt, key_padding_mask=padding), [xt, padding])
