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
