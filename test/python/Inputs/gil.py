"""The GIL is released while compiled code runs: a second Python thread
runs Python code during a layer's calls (with the GIL held it could run only
between them). One thread calls a layer of a few tens of ms, on one OpenMP
thread, recording when each call starts and ends; the main thread records
when it runs. Also for attention_weights and for mha.torch where PyTorch
is installed."""
import threading
import time

import numpy as np

import mha

mha.set_num_threads(1)
layer = mha.layer(d_model=64, heads=2, attention="decomposed")
rng = np.random.default_rng(0)
layer.prepare(**{n: rng.standard_normal(s, dtype=np.float32)
                 for n, s, _ in layer.arguments if n != "x"})
x = rng.standard_normal((1, 768, 64), dtype=np.float32)


def overlapped(name, call):
    call()  # compiled, warm
    calls, ticks = [], []

    def worker():
        for _ in range(5):
            start = time.perf_counter()
            call()
            calls.append((start, time.perf_counter()))

    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    # A tick well inside a call: the main thread ran Python meanwhile.
    inside = sum(1 for start, end in calls for t in ticks
                 if start + 1e-3 < t < end - 1e-3)
    shortest = min(end - start for start, end in calls)
    print("%s: shortest call %.0f ms; main thread ran during the calls: %s"
          % (name, shortest * 1e3, shortest > 3e-3 and inside > 0))


overlapped("layer(x)", lambda: layer(x))
overlapped("attention_weights(x)", lambda: layer.attention_weights(x))
try:
    import torch
    import mha.torch
except ImportError:
    torch = None
if torch is not None:
    module = torch.nn.MultiheadAttention(64, 2, batch_first=True).eval()
    fast = mha.torch.MultiheadAttention(module, attention="decomposed")
    xt = torch.from_numpy(x)
    overlapped("mha.torch", lambda: fast(xt, xt, xt, need_weights=False))
else:
    print("mha.torch: skipped, no PyTorch")
