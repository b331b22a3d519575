"""Graphs that mha.compile refuses when it loads them, with the message of
mha-run and mha-compile (runtime/GraphChecks.h), and graphs close to them
that run; prints one line per case, checked by graph-checks.test."""
import numpy as np

import mha

T = "tensor<2x3x4xf32>"
ARG = '%x: ' + T + ' {mha.name = "x"}'


def entry(body):
    return "func.func @f(%s) -> %s {\n%s\n}\n" % (ARG, T, body)


def call(callee):
    return "  %%0 = call @%s(%%x) : (%s) -> %s\n  return %%0 : %s" % (callee, T, T, T)


def helper(name, body):
    return "func.func private @%s(%%x: %s) -> %s {\n%s\n}\n" % (name, T, T, body)


GRAPHS = {
    "identity": entry("  return %x : " + T),
    "split-concat": entry(
        "  %s = mha.split_heads %x heads(2) : " + T + " -> tensor<2x2x3x2xf32>\n"
        "  %c = mha.concat_heads %s : tensor<2x2x3x2xf32> -> " + T + "\n"
        "  return %c : " + T),
    "through a call": helper("g", "  return %x : " + T) + entry(call("g")),
    "fill into x": entry(
        "  %c = arith.constant 2.0 : f32\n"
        "  %0 = linalg.fill ins(%c : f32) outs(%x : " + T + ") -> " + T + "\n"
        "  return %0 : " + T),
    "recursion": entry(call("f")),
    "mutual recursion": helper("g", call("h")) + helper("h", call("g")) + entry(call("g")),
    "undefined": "func.func private @g(%s) -> %s\n" % (T, T) + entry(call("g")),
}


def attempt(what, text):
    try:
        mha.compile(text)
    except ValueError as error:
        print("%s: ValueError: %s" % (what, str(error).splitlines()[0]))
        return
    print("%s: compiled" % what)


for what, text in GRAPHS.items():
    attempt(what, text)

# What runs: a constant result, a view of x of another type, a helper that
# computes; each against the values it must have, and x is left alone.
x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
kept = x.copy()
RUNS = {
    "constant": (entry("  %c = arith.constant dense<1.0> : " + T + "\n  return %c : " + T),
                 np.ones((2, 3, 4), np.float32)),
    "helper": (helper("g", "  %0 = arith.negf %x : " + T + "\n  return %0 : " + T)
               + entry(call("g")), -x),
}
for what, (text, want) in RUNS.items():
    got = mha.compile(text)(x=x)
    print("%s: %s %s" % (what, got.shape, np.array_equal(got, want)))
cast = ("func.func @f(%s) -> tensor<?x3x4xf32> {\n"
        "  %%0 = tensor.cast %%x : %s to tensor<?x3x4xf32>\n"
        "  return %%0 : tensor<?x3x4xf32>\n}\n" % (ARG, T))
got = mha.compile(cast)(x=x)
got_bytes = got.tobytes()
got[...] = 0
print("cast: %s %s, x unchanged by writing the result: %s"
      % (got.shape, got_bytes == kept.tobytes(), np.array_equal(x, kept)))
