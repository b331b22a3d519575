"""Every misuse of the Python package is an exception with the tools'
message, and the interpreter lives on: prints one line per case, checked by
errors.test."""
import sys

import numpy as np

import mha


def attempt(what, function):
    try:
        function()
    except Exception as error:  # the type and the first line are checked
        print("%s: %s: %s" % (what, type(error).__name__, str(error).splitlines()[0]))
        return
    print("%s: no exception" % what)


graph = mha.layer_graph(batch=2, seq=5, d_model=8, heads=2, mask=True)
layer = mha.compile(graph)
rng = np.random.default_rng(0)
good = {name: (rng.random([d for d in shape], dtype=np.float32) if dtype == "float32"
               else np.ones(shape, dtype=bool))
        for name, shape, dtype in layer.arguments}

attempt("float64 x", lambda: layer(**dict(good, x=good["x"].astype(np.float64))))
attempt("float32 mask", lambda: layer(**dict(good, mask=good["mask"].astype(np.float32))))
attempt("wrong shape", lambda: layer(**dict(good, x=good["x"][:, :4])))
attempt("wrong rank", lambda: layer(**dict(good, w_q=good["w_q"][0])))
attempt("a list", lambda: layer(**dict(good, b_o=list(good["b_o"]))))
attempt("missing w_o", lambda: layer(**{k: v for k, v in good.items() if k != "w_o"}))
attempt("unknown name", lambda: layer(**dict(good, w_z=good["w_o"])))
attempt("given twice", lambda: layer(good["x"], **good))
attempt("too many", lambda: layer(*good.values(), good["x"]))
attempt("bad option", lambda: mha.compile(graph, attention="sideways"))
attempt("unknown option", lambda: mha.compile(graph, tile_size=3))
attempt("out of range", lambda: mha.compile(graph, key_splits=0))
attempt("bad graph", lambda: mha.compile("func.func @f(%x: tensor<2xf32>) {"))
attempt("missing file", lambda: mha.compile("/nonexistent/graph.mlir"))
attempt("bad layer", lambda: mha.layer_graph(d_model=10, heads=3))
attempt("zero size", lambda: mha.layer_graph(heads=0))
attempt("unknown layer option", lambda: mha.layer_graph(depth=3))
attempt("bad threads", lambda: mha.set_num_threads(-1))

dynamic = mha.compile(mha.layer_graph(d_model=8, heads=2, mask=True))
attempt("sizes that do not fit", lambda: dynamic(**dict(
    good, mask=np.ones((2, 5, 6), dtype=bool))))
dynamic.prepare(**{k: v for k, v in good.items() if k.startswith(("w_", "b_"))})
attempt("bound twice", lambda: dynamic(good["x"], good["mask"], w_q=good["w_q"]))

attempt("zero length", lambda: dynamic(good["x"][:, :0], good["mask"][:, :0, :0]))

# A mask byte other than 0 or 1 (True to NumPy, "masked" to the compiled
# code, which reads the low bit) is refused wherever a mask comes in, with
# mha-run's words; the index is in C order of the array as passed.
twos = np.ones((2, 5, 5), np.uint8)
twos.flat[7] = 2
twos = twos.view(bool)
attempt("mask byte 2", lambda: layer(**dict(good, mask=twos)))
attempt("mask byte 2, positional", lambda: layer(*dict(good, mask=twos).values()))
attempt("mask byte 2, transposed view",
        lambda: layer(**dict(good, mask=twos.transpose(0, 2, 1))))
attempt("mask byte 255", lambda: layer(**dict(
    good, mask=np.full((2, 5, 5), 255, np.uint8).view(bool))))
attempt("mask byte 2, attention weights",
        lambda: layer.attention_weights(**dict(good, mask=twos)))
attempt("mask byte 2, prepare", lambda: mha.compile(graph).prepare(mask=twos))


def reference(a, heads=2):
    """The layer in float64 NumPy (test/vectors/README.md): softmax over the
    keys the mask allows, a row that allows none 0 before w_o."""
    f = {k: v.astype(np.float64) for k, v in a.items() if k != "mask"}
    q, k, v = (f["x"] @ f["w_" + n] + f["b_" + n] for n in "qkv")
    split = lambda t: t.reshape(t.shape[0], t.shape[1], heads, -1).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    allowed = a["mask"][:, None]
    scores = np.where(allowed, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.where(allowed, np.exp(scores - np.where(np.isfinite(top), top, 0)), 0)
    total = e.sum(axis=-1, keepdims=True)
    p = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(f["x"].shape[0], f["x"].shape[1], -1)
    return o @ f["w_o"] + f["b_o"]


# prepare() may bind an activation: the others get placeholders whose `?`
# sizes follow the bound arrays (a mask of x's 5 queries, not of 1), and
# only arrays that do not fit with each other are refused.
masked = dict(good, mask=rng.random((2, 5, 5)) < 0.7)
masked["mask"][1, 3] = False  # a query that may attend nothing
bound_x = mha.compile(mha.layer_graph(d_model=8, heads=2, mask=True))
bound_x.prepare(**{k: v for k, v in masked.items() if k != "mask"})
error = np.abs(bound_x(masked["mask"]) - reference(masked)).max()
print("x bound by prepare, mask per call: max abs error %.1e: %s"
      % (error, "ok" if error < 1e-5 else "FAILED"))
attempt("prepare with x and a mask that do not fit",
        lambda: mha.compile(mha.layer_graph(d_model=8, heads=2, mask=True)).prepare(
            **dict(good, mask=np.ones((2, 4, 5), bool))))

# Sizes that would need more memory than the machine has are a MemoryError
# before the compiled code runs (it cannot survive a failed allocation):
# a small x and w_o whose output is 4 TiB, attention weights of 4 TiB, and
# the scores of the decomposed path, which holds them all at once.
x_long = np.zeros((1, 1 << 20, 1), dtype=np.float32)
def ones(layer):
    return {n: np.ones(s, dtype=np.float32) for n, s, _ in layer.arguments
            if n != "x"}
wide = mha.layer(d_model=1, heads=1, out_dim=1 << 20)
wide.prepare(**ones(wide))
attempt("huge output", lambda: wide(x_long))
narrow = mha.layer(d_model=1, heads=1)
narrow.prepare(**ones(narrow))
attempt("huge weights", lambda: narrow.attention_weights(x_long))
decomposed = mha.layer(d_model=1, heads=1, attention="decomposed")
decomposed.prepare(**ones(decomposed))
attempt("huge scores", lambda: decomposed(x_long[:, :1 << 18]))
print("small calls still work:", narrow(x_long[:, :100]).shape,
      decomposed(x_long[:, :100]).shape)

# The attention weights need exactly one attention.
two = mha.compile("""
func.func @two(%x: tensor<1x4x8xf32> {mha.name = "x"}, %w: tensor<8x8xf32> {mha.name = "w"}) -> tensor<1x4x8xf32> {
  %a = mha.attention %x weights(%w, %w, %w, %w) heads(2) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %b = mha.attention %a weights(%w, %w, %w, %w) heads(2) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %b : tensor<1x4x8xf32>
}""")
try:
    two.attention_weights(np.ones((1, 4, 8), np.float32), np.ones((8, 8), np.float32))
except ValueError as error:
    print("weights of two attentions: ValueError:", " | ".join(str(error).splitlines()[:2]))
print("two attentions run:", two(np.ones((1, 4, 8), np.float32),
                                 np.ones((8, 8), np.float32)).shape)

# Other layouts of float32 are copied, not refused: the same result as C
# order (Fortran order, a strided view, an unaligned buffer).
y = layer(**good)
strided = np.asfortranarray(good["x"])
print("fortran-order x gives the same result:",
      np.array_equal(layer(**dict(good, x=strided)), y))
spaced = np.repeat(good["x"], 2, axis=2)[:, :, ::2]
print("strided x gives the same result:",
      not spaced.flags.c_contiguous and np.array_equal(layer(**dict(good, x=spaced)), y))
raw = bytearray(good["x"].nbytes + 1)
unaligned = np.frombuffer(raw, dtype=np.float32, offset=1,
                          count=good["x"].size).reshape(good["x"].shape)
unaligned[...] = good["x"]
print("unaligned x gives the same result:",
      not unaligned.flags.aligned and np.array_equal(layer(**dict(good, x=unaligned)), y))
print("interpreter alive; result", y.shape, y.dtype)
