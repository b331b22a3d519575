"""split_layer.py DIR B T D H HKV [errors]: mha.layer(..., comm=) on every
rank of the job with the full arrays of DIR (split_library.py inputs),
through an mpi4py communicator and through the int of its Fortran handle;
writes each rank's output to DIR/py.RANK.npy. `errors` makes wrong calls
and prints what each raises on each rank."""
import os
import sys

import numpy as np
from mpi4py import MPI

import mha

folder = sys.argv[1]
b, t, d, h, hkv = map(int, sys.argv[2:7])
rank = MPI.COMM_WORLD.Get_rank()
arrays = {name: np.load(os.path.join(folder, name + ".npy"))
          for name in ("x", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v",
                       "b_o")}
x = arrays.pop("x")
shape = dict(batch=b, seq=t, d_model=d, heads=h, kv_heads=hkv)


def attempt(what, call):
    try:
        call()
        print("rank %d: %s: ok" % (rank, what))
    except Exception as error:  # noqa: BLE001 (printed for the test)
        print("rank %d: %s: %s: %s" % (rank, what, type(error).__name__,
                                       error))


layer = mha.layer(comm=MPI.COMM_WORLD, **shape)
layer.prepare(**arrays)
y = layer(x)
np.save(os.path.join(folder, "py.%d.npy" % rank), y)
by_handle = mha.layer(comm=MPI.COMM_WORLD.py2f(), **shape)
by_handle.prepare(**arrays)
print("rank %d: the Fortran handle's layer: %s" % (
    rank, "bitwise equal" if np.array_equal(by_handle(x=x), y) else
    "DIFFERS"))

if len(sys.argv) > 7 and sys.argv[7] == "errors":
    other = x.copy()
    other[0, 0, 0] += 1
    attempt("rank 1's x differs", lambda: layer(other if rank == 1 else x))
    attempt("rank 1's x too wide", lambda: layer(
        np.zeros((b, t, d + 1), np.float32) if rank == 1 else x))
    wide = dict(arrays, w_q=np.zeros((d, d + 6), np.float32))
    attempt("rank 0's w_q too wide",
            lambda: layer.prepare(**(wide if rank == 0 else arrays)))
    attempt("call after it", lambda: layer(x))
    attempt("prepare again", lambda: layer.prepare(**arrays))
    attempt("call after the errors", lambda: np.testing.assert_array_equal(
        layer(x), y))
    attempt("comm a string", lambda: mha.layer(comm="world", **shape))
    attempt("two positional arguments", lambda: layer(x, x))
    attempt("a cache", lambda: mha.layer(
        comm=MPI.COMM_WORLD, d_model=16, heads=4, kv_cache=8))
    attempt("three heads", lambda: mha.layer(
        comm=MPI.COMM_WORLD, **dict(shape, heads=3, kv_heads=3)))
