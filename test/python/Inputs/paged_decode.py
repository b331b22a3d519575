"""Decoding with paged key/value caches from Python (test/python/paged-cache.test).

A session of mha.layer(kv_cache=C, paged_kv=P) keeps pools of pages, a
block table and a free list. Three sequences decode in a pool too small for
all of them at full length: the pool runs full (a ValueError that names the
sequence and the pages missing, nothing changed), a finished sequence is
freed and a new one starts in its slot on its pages. Every output row is
checked against the float64 causal layer of
test/Inputs/causal_decode_reference.py (written from the definitions,
independent of mha) of that sequence's own tokens, and against a dense-cache
session fed the same tokens (lengths set back to 0 where the paged session
freed the sequence). bf16 pools are checked the same way, against the
float64 layer on what bf16 stores. Then each refused array.
"""
import os
import sys

import numpy as np

import mha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Inputs"))
from causal_decode_reference import causal_layer, random_weights  # noqa: E402,E501

rng = np.random.default_rng(31)
failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s: %s%s" % (what, "ok" if ok else "FAILED", detail))
    failures += not ok


def weights(d_model, heads, kv_heads):
    return random_weights(rng, d_model, heads, kv_heads, d_model // heads)


def round_bf16(a):
    """Nearest bfloat16 (ties to even), as float64: bit arithmetic of its
    own, not the layer's."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def stored_layer(x, w, heads, kv_heads):
    """The float64 causal layer on what a bf16 layer stores: x, the weights
    and the cached keys and values rounded to bf16."""
    x, f = round_bf16(x), {k: round_bf16(v) for k, v in w.items()}
    t, group = x.shape[0], heads // kv_heads
    q = (x @ f["w_q"] + f["b_q"]).reshape(t, heads, -1)
    k = round_bf16(x @ f["w_k"] + f["b_k"]).reshape(t, kv_heads, -1)
    v = round_bf16(x @ f["w_v"] + f["b_v"]).reshape(t, kv_heads, -1)
    out = []
    for h in range(heads):
        s = q[:, h] @ k[:, h // group].T / np.sqrt(q.shape[2])
        s[np.triu(np.ones((t, t), bool), 1)] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out.append((p / p.sum(axis=1, keepdims=True)) @ v[:, h // group])
    return np.concatenate(out, axis=1) @ f["w_o"] + f["b_o"]


def decode(name, dtype, heads, kv_heads, tolerance, **pipeline):
    """Three sequences, pages of 16 rows, M = 3 pages each, a pool of 7."""
    d_model, batch = 32, 3
    options = dict(d_model=d_model, heads=heads, kv_heads=kv_heads,
                   kv_cache=40, dtype=dtype, **pipeline)
    paged = mha.layer(paged_kv=16, **options)
    dense = mha.layer(**options)
    w = weights(d_model, heads, kv_heads)
    paged.prepare(**w)
    dense.prepare(**w)
    w64 = {k: v.astype(np.float64) for k, v in w.items()}
    session = paged.session(batch=batch, pages=7)
    plain = dense.session(batch=batch)
    print("%s: pools %s %s, table %s, %d pages free" % (
        name, session.k_pool.dtype, list(session.k_pool.shape),
        list(session.block_table.shape), session.free_pages))
    # The tokens of each sequence, and its output rows, as they come.
    tokens = [[] for _ in range(batch)]
    rows = [[] for _ in range(batch)]
    worst_dense = [0.0]

    def step(x):
        y = session.step(x)
        y_dense = plain.step(x)
        worst_dense[0] = max(worst_dense[0], np.abs(y - y_dense).max())
        for b in range(batch):
            tokens[b].append(x[b])
            rows[b].append(y[b])

    step(rng.uniform(-1, 1, (batch, 12, d_model)).astype(np.float32))
    for _ in range(20):  # to 32 tokens: two pages each, one page free
        step(rng.uniform(-1, 1, (batch, 1, d_model)).astype(np.float32))
    before = (session.block_table, session.lengths, session.free_pages)
    try:
        session.step(np.zeros((batch, 1, d_model), np.float32))
        print("%s: a full pool: no error" % name)
    except ValueError as error:
        print("%s: a full pool: ValueError: %s" % (name, error))
    after = (session.block_table, session.lengths, session.free_pages)
    check("%s: a refused step changes nothing" % name,
          all(np.array_equal(a, b) for a, b in zip(before, after)))
    # Sequence 1 ends; a new sequence takes its slot and its pages.
    freed = set(session.block_table[1].tolist()) - {-1}
    session.free(1)
    plain.lengths = [32, 0, 32]
    finished = (np.concatenate(tokens[1]), np.concatenate(rows[1]))
    tokens[1], rows[1] = [], []
    print("%s: after free(1): lengths %s, %d pages free" % (
        name, session.lengths.tolist(), session.free_pages))
    for _ in range(8):
        step(rng.uniform(-1, 1, (batch, 1, d_model)).astype(np.float32))
    new_pages = set(session.block_table[1].tolist()) - {-1}
    check("%s: the new sequence 1 is on freed pages" % name,
          bool(new_pages) and new_pages <= freed, " %s" % sorted(new_pages))
    print("%s: lengths %s, %d pages free" % (
        name, session.lengths.tolist(), session.free_pages))
    # Each sequence against the float64 layer of its own tokens alone.
    worst = 0.0
    sequences = [(np.concatenate(tokens[b]), np.concatenate(rows[b]))
                 for b in range(batch)] + [finished]
    for x, y in sequences:
        if dtype == "bf16":
            expected = stored_layer(x, w64, heads, kv_heads)
        else:
            expected = causal_layer(x, w64, heads, kv_heads)
        worst = max(worst, np.abs(y - expected).max())
    check("%s: every row within %g of the float64 reference" % (
        name, tolerance), worst <= tolerance, " (%.1e)" % worst)
    check("%s: equal to the dense cache's decode" % name,
          worst_dense[0] <= 1e-6, " (%.1e)" % worst_dense[0])


decode("f32, fused", "f32", heads=4, kv_heads=4, tolerance=1e-5,
       attention="fused")
decode("f32 gqa, decomposed", "f32", heads=4, kv_heads=2, tolerance=1e-5,
       attention="decomposed")
decode("bf16", "bf16", heads=4, kv_heads=2, tolerance=1e-4)
# int8 pools: codes and a scale per row, quantized when appended. The dense
# int8 cache quantizes the same rows the same way, so the two agree to
# rounding; against the float64 layer (which stores the rows exactly) the
# error is that of the quantization, at most scale / 2 = max|x| / 254 per
# stored element.
decode("int8", "f32", heads=4, kv_heads=2, tolerance=5e-3,
       cache_dtype="int8")


def attempt(label, action):
    try:
        action()
        print("%s: no error" % label)
    except (TypeError, ValueError) as error:
        print("%s: %s: %s" % (label, type(error).__name__, error))


layer = mha.layer(d_model=16, heads=2, kv_cache=40, paged_kv=16)
w = weights(16, 2, 2)
layer.prepare(**w)


def call(table, lengths, tokens=1, pool_pages=4, pool_dtype=np.float32):
    pools = {name: np.zeros((pool_pages, 2, 16, 8), pool_dtype)
             for name in ("k_pool", "v_pool")}
    return layer(np.zeros((len(lengths), tokens, 16), np.float32), **pools,
                 block_table=table, cache_lengths=np.array(lengths, np.int64))


ok_table = np.array([[0, 1, -1], [2, -1, -1]], np.int32)
attempt("a good call", lambda: call(ok_table, [16, 3]))
attempt("an entry outside the pool",
        lambda: call(np.array([[0, 4, -1], [2, -1, -1]], np.int32), [16, 3]))
attempt("a used entry of -1", lambda: call(ok_table, [32, 3]))
attempt("a page given to two sequences",
        lambda: call(np.array([[0, 1, -1], [1, -1, -1]], np.int32), [16, 3]))
attempt("a length past M * P", lambda: call(ok_table, [48, 3]))
attempt("a negative length", lambda: call(ok_table, [-1, 3]))
attempt("an int64 table", lambda: call(ok_table.astype(np.int64), [16, 3]))
attempt("a table of 2 pages", lambda: call(ok_table[:, :2], [16, 3]))
attempt("pools of 8-row pages", lambda: layer(
    np.zeros((1, 1, 16), np.float32),
    k_pool=np.zeros((4, 2, 8, 8), np.float32),
    v_pool=np.zeros((4, 2, 8, 8), np.float32),
    block_table=ok_table[:1], cache_lengths=np.zeros(1, np.int64)))
attempt("a v_pool of 2 pages", lambda: layer(
    np.zeros((2, 1, 16), np.float32),
    k_pool=np.zeros((4, 2, 16, 8), np.float32),
    v_pool=np.zeros((2, 2, 16, 8), np.float32),
    block_table=ok_table, cache_lengths=np.array([16, 3], np.int64)))
attempt("scales for f32 pools", lambda: layer.session(
    batch=2, k_scales=np.zeros((6, 2, 16), np.float32)))
attempt("pages of 20 rows",
        lambda: mha.layer(d_model=16, heads=2, kv_cache=40, paged_kv=20))
attempt("a borrowed pool of the wrong shape", lambda: layer.session(
    batch=2, k_pool=np.zeros((6, 2, 16, 4), np.float32),
    v_pool=np.zeros((6, 2, 16, 8), np.float32)))
attempt("a borrowed pool of float64", lambda: layer.session(
    batch=2, k_pool=np.zeros((6, 2, 16, 8)),
    v_pool=np.zeros((6, 2, 16, 8), np.float32)))
shared = np.zeros((6, 2, 16, 8), np.float32)
attempt("one array for both pools",
        lambda: layer.session(batch=2, k_pool=shared, v_pool=shared))
attempt("a dense cache for a paged layer", lambda: layer.session(
    batch=1, k_cache=np.zeros((1, 2, 40, 8), np.float32)))
attempt("pages for a dense layer", lambda: mha.layer(
    d_model=16, heads=2, kv_cache=40).session(batch=1, pages=4))
session = layer.session(batch=2, pages=5)
print("a session of mha.paged.PagedDecodeSession:",
      type(session) is mha.paged.PagedDecodeSession)
attempt("the session's table", lambda: session.step(
    np.zeros((2, 1, 16), np.float32), block_table=ok_table))
attempt("free(2) of 2 sequences", lambda: session.free(2))
attempt("49 tokens", lambda: session.step(np.zeros((2, 49, 16), np.float32)))
attempt("prefill 40", lambda: session.step(np.zeros((2, 40, 16), np.float32)))
print("after the refused step: %r" % session)
# The layer refuses x after the session has given the pages: they go back.
attempt("float64 tokens", lambda: session.step(np.zeros((2, 3, 16))))
check("pages given back after the layer's refusal",
      session.free_pages == 5 and (session.block_table == -1).all())
lent = {name: np.full((4, 2, 16, 8), np.nan, np.float32)
        for name in ("k_pool", "v_pool")}
borrowed = layer.session(batch=2, **lent)
print("borrowed pools of 4 pages: %r" % borrowed)
y = borrowed.step(rng.uniform(-1, 1, (2, 5, 16)).astype(np.float32))
check("borrowed NaN pools: finite output, written in place",
      bool(np.isfinite(y).all()) and borrowed.k_pool is lent["k_pool"] and
      bool(np.isfinite(lent["k_pool"][borrowed.block_table[0, 0]][:, :5])
           .all()))
sys.exit(1 if failures else 0)
