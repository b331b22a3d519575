"""What a decode session and a plain call of a cache graph refuse
(test/python/decode-errors.test): each a Python exception with the numbers,
nothing written, and the session usable afterwards."""
import numpy as np

import mha


def attempt(label, action):
    try:
        action()
    except (ValueError, TypeError) as error:
        print("%s: %s: %s" % (label, type(error).__name__,
                              str(error).splitlines()[0]))
    else:
        print("%s: no error" % label)


rng = np.random.default_rng(3)
D, C = 16, 8
layer = mha.layer(d_model=D, heads=2, kv_cache=C, bias=False)
w = {name: (rng.uniform(-1, 1, shape) * 0.25).astype(np.float32)
     for name, shape, _ in layer.arguments if name.startswith("w_")}
layer.prepare(**w)
session = layer.session(batch=2)


def tokens(batch, count, dtype=np.float32):
    return rng.uniform(-1, 1, (batch, count, D)).astype(dtype)


attempt("prefill past capacity", lambda: session.step(tokens(2, 9)))
session.step(tokens(2, 6))
attempt("step past capacity", lambda: session.step(tokens(2, 3)))
print("lengths after the refusals:", session.lengths.tolist())
session.lengths = [2, 6]
attempt("one sequence past capacity", lambda: session.step(tokens(2, 3)))
attempt("lengths past what the cache holds",
        lambda: setattr(session, "lengths", [7, 0]))
attempt("negative length", lambda: setattr(session, "lengths", [1, -1]))
attempt("lengths of the wrong count",
        lambda: setattr(session, "lengths", [1, 2, 3]))
attempt("lengths not integers",
        lambda: setattr(session, "lengths", [1.5, 2]))
attempt("float64 x", lambda: session.step(tokens(2, 1, np.float64)))
attempt("wrong width", lambda: session.step(np.zeros((2, 1, 8), np.float32)))
attempt("wrong batch", lambda: session.step(tokens(3, 1)))
attempt("x a list", lambda: session.step([[0.0] * D]))
attempt("cache passed to step",
        lambda: session.step(tokens(2, 1), k_cache=session.k_cache))
print("lengths still:", session.lengths.tolist())
print("session still works:", session.step(tokens(2, 1)).shape,
      session.lengths.tolist())
session.reset()
print("after reset:", session.lengths.tolist())
attempt("lengths past an empty cache",
        lambda: setattr(session, "lengths", [1, 0]))

# Sessions that cannot be made.
plain = mha.layer(d_model=D, heads=2, causal=True)
attempt("session of a layer without a cache", lambda: plain.session())
attempt("batch 0", lambda: layer.session(batch=0))
static = mha.layer(d_model=D, heads=2, kv_cache=C, batch=2)
attempt("batch of another size", lambda: static.session(batch=3))
print("static batch by default:", static.session().batch)
attempt("borrowed cache of the wrong shape",
        lambda: layer.session(batch=2, k_cache=np.zeros((2, 2, 4, 8),
                                                        np.float32)))

# The plain call of a cache graph.
k = np.zeros((1, 2, C, 8), np.float32)
v = np.zeros((1, 2, C, 8), np.float32)
x = tokens(1, 2)


def call(**changes):
    arrays = dict(k_cache=k, v_cache=v, cache_lengths=np.zeros(1, np.int64))
    arrays.update(changes)
    return lambda: layer(x, **arrays)


attempt("int32 lengths", call(cache_lengths=np.zeros(1, np.int32)))
attempt("length past capacity", call(cache_lengths=np.array([7])))
attempt("length beyond the cache", call(cache_lengths=np.array([9])))
attempt("negative length", call(cache_lengths=np.array([-1])))
attempt("float64 cache", call(k_cache=k.astype(np.float64)))
read_only = k.copy()
read_only.flags.writeable = False
attempt("read-only cache", call(k_cache=read_only))
attempt("fortran-order cache", call(k_cache=np.asfortranarray(k)))
attempt("strided cache",
        call(v_cache=np.zeros((1, 2, C, 16), np.float32)[..., ::2]))
attempt("one array for both caches", call(v_cache=k))
# Views of one buffer that share bytes, however shifted: refused, to the
# byte, before anything is written; caches back to back are two caches.
both = np.zeros(2 * k.size + 1, np.float32)
first = both[:k.size].reshape(k.shape)
second = both[k.size:2 * k.size].reshape(k.shape)
shifted = both[k.size - 1:2 * k.size - 1].reshape(k.shape)
attempt("v_cache one float into k_cache", call(k_cache=first, v_cache=shifted))
attempt("x inside v_cache", lambda: layer(
    both[k.size + 3:k.size + 3 + x.size].reshape(x.shape), k_cache=first,
    v_cache=second, cache_lengths=np.zeros(1, np.int64)))
attempt("cache_lengths inside k_cache", call(
    k_cache=first, v_cache=second,
    cache_lengths=first.reshape(-1)[:2].view(np.int64)))
attempt("borrowed caches one float apart",
        lambda: layer.session(batch=1, k_cache=first, v_cache=shifted))
print("buffer untouched by the refused calls:", bool((both == 0).all()))
print("caches back to back:", call(k_cache=first, v_cache=second)().shape,
      bool((first[0, :, :2] != 0).all() and (second[0, :, :2] != 0).all()))
attempt("cache bound by prepare", lambda: layer.prepare(k_cache=k, **w))
print("caches untouched by the refused calls:",
      bool((k == 0).all() and (v == 0).all()))
print("plain call works:", layer(x, k_cache=k, v_cache=v,
                                 cache_lengths=np.array([6])).shape,
      "rows 6..7 written:", bool((k[0, :, 6:] != 0).all()),
      "rows 0..5 untouched:", bool((k[0, :, :6] == 0).all()))

# Layer options.
attempt("kv_cache 0", lambda: mha.layer_graph(d_model=D, heads=2, kv_cache=0))
attempt("kv_cache with cross",
        lambda: mha.layer_graph(d_model=D, heads=2, kv_cache=4, cross=True))
attempt("seq past kv_cache",
        lambda: mha.layer_graph(d_model=D, heads=2, kv_cache=4, seq=5))
print("interpreter alive")
