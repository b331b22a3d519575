#!/usr/bin/env python3
"""Makes and inspects the .npy files of the numerics tests (float32 and bool,
C order, version 1.0), with the standard library only: CI has no NumPy.

  npy.py random OUT SHAPE [--scale S] [--seed N]  uniform in [-S, S)
  npy.py fill OUT SHAPE VALUE                     every element VALUE (nan ok)
  npy.py mask OUT SHAPE [--false-rows B,T ...] [--false-at B,T,S ...]
                                                  bool, true but the rows or
                                                  elements given
  npy.py set IN OUT INDEX VALUE                   one element changed
  npy.py rows Y [--equal-to B_O]                  one line per row y[b, t]:
                                                  'nan', 'finite', or
                                                  'equals b_o' (bitwise)

SHAPE and INDEX are comma-separated integers ("1,8,4").
"""
import argparse
import ast
import math
import random
import struct
import sys


def shape_arg(text):
    return tuple(int(v) for v in text.split(",") if v != "")


def write(path, shape, values, dtype="<f4"):
    """Writes `values` (flat, C order) as an array of `shape`."""
    dims = "".join("%d, " % d for d in shape) if len(shape) == 1 else ", ".join(map(str, shape))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    if dtype == "<f4":
        body = struct.pack("<%df" % len(values), *values)
    else:
        body = bytes(1 if v else 0 for v in values)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1") + body)


def read(path):
    """Returns (shape, flat values, dtype) of a file `write` could have made."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        sys.exit("%s: not a version 1.0 .npy file" % path)
    (length,) = struct.unpack("<H", data[8:10])
    header = ast.literal_eval(data[10 : 10 + length].decode("latin1"))
    shape = tuple(header["shape"])
    count = math.prod(shape)
    body = data[10 + length :]
    if header["descr"] == "<f4":
        return shape, list(struct.unpack("<%df" % count, body)), "<f4"
    return shape, [b != 0 for b in body], "|b1"


def flat_index(shape, index):
    flat = 0
    for dim, i in zip(shape, index):
        flat = flat * dim + i
    return flat


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("random")
    p.add_argument("out")
    p.add_argument("shape", type=shape_arg)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("fill")
    p.add_argument("out")
    p.add_argument("shape", type=shape_arg)
    p.add_argument("value", type=float)
    p = sub.add_parser("mask")
    p.add_argument("out")
    p.add_argument("shape", type=shape_arg)
    p.add_argument("--false-rows", type=shape_arg, nargs="*", default=[])
    p.add_argument("--false-at", type=shape_arg, nargs="*", default=[])
    p = sub.add_parser("set")
    p.add_argument("input")
    p.add_argument("out")
    p.add_argument("index", type=shape_arg)
    p.add_argument("value", type=float)
    p = sub.add_parser("rows")
    p.add_argument("y")
    p.add_argument("--equal-to")
    args = parser.parse_args()

    if args.command == "random":
        rng = random.Random(args.seed)
        count = math.prod(args.shape)
        write(args.out, args.shape, [rng.uniform(-args.scale, args.scale) for _ in range(count)])
    elif args.command == "fill":
        write(args.out, args.shape, [args.value] * math.prod(args.shape))
    elif args.command == "mask":
        values = [True] * math.prod(args.shape)
        keys = args.shape[-1]
        for row in args.false_rows:
            start = flat_index(args.shape, row + (0,))
            values[start : start + keys] = [False] * keys
        for element in args.false_at:
            values[flat_index(args.shape, element)] = False
        write(args.out, args.shape, values, "|b1")
    elif args.command == "set":
        shape, values, dtype = read(args.input)
        values[flat_index(shape, args.index)] = args.value
        write(args.out, shape, values, dtype)
    elif args.command == "rows":
        shape, values, _ = read(args.y)
        width = shape[-1]
        bias = read(args.equal_to)[1] if args.equal_to else None
        pack = lambda row: struct.pack("<%df" % width, *row)
        for flat in range(0, len(values), width):
            row = values[flat : flat + width]
            index = []
            rest = flat // width
            for dim in reversed(shape[:-1]):
                index.insert(0, rest % dim)
                rest //= dim
            name = "y[%s]" % ", ".join(map(str, index))
            if any(math.isnan(v) for v in row):
                state = "nan"
            elif bias is not None and pack(row) == pack(bias):
                state = "equals b_o"
            elif all(math.isfinite(v) for v in row):
                state = "finite"
            else:
                state = "inf"
            print(name + ": " + state)


if __name__ == "__main__":
    main()
