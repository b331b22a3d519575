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

# Non-contiguous float32 is copied, not refused: same result as C order.
y = layer(**good)
strided = np.asfortranarray(good["x"])
print("fortran-order x gives the same result:",
      np.array_equal(layer(**dict(good, x=strided)), y))
print("interpreter alive; result", y.shape, y.dtype)
