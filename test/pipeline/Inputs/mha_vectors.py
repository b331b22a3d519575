#!/usr/bin/env python3
"""Runs the reference cases of test/vectors through the whole compiler.

For each case it writes an MLIR module: the layer as one `mha.attention` (or,
with --mode steps, as its five steps), and a `main` that calls it on the
case's inputs (dense constants), compares the result with y.npy inside the
IR and prints the largest absolute error and the number of elements outside
the case's tolerance (|y - ref| > atol + rtol * |ref|, NaN counts as
outside). The module is compiled with `mha-opt --mha-to-llvm` and executed
with `mlir-runner`, so this checks the numbers before any runtime exists.

  mha_vectors.py check --vectors DIR --mha-opt BIN --mlir-runner BIN
                       --shared-libs A,B [--mode static|dynamic|steps] CASE...
  mha_vectors.py emit --vectors DIR CASE...   (the execute-small.mlir test)

--mode dynamic makes batch and sequence sizes `?` in the layer's signature.
Standard library only: .npy files are read by hand.
"""
import argparse
import ast
import json
import math
import os
import re
import struct
import subprocess
import sys


def read_npy(path):
    """Shape, values and raw little-endian bytes of a C-order .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(path + ": not a .npy file")
    if data[6] == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start : start + length].decode("latin1"))
    if header["fortran_order"]:
        raise ValueError(path + ": Fortran order")
    shape = tuple(header["shape"])
    count = math.prod(shape)
    body = data[start + length :]
    descr = header["descr"]
    if descr == "<f4":
        values = list(struct.unpack("<%df" % count, body[: 4 * count]))
        raw = body[: 4 * count]
    elif descr == "<f8":
        values = list(struct.unpack("<%dd" % count, body[: 8 * count]))
        raw = struct.pack("<%df" % count, *values)
    elif descr == "|b1":
        values = [bool(b) for b in body[:count]]
        raw = body[:count]
    else:
        raise ValueError(path + ": unsupported dtype " + descr)
    return shape, values, raw


def tensor_type(shape, element):
    return "tensor<" + "".join("%sx" % d for d in shape) + element + ">"


def nested(shape, values, fmt):
    if not shape:
        return fmt(values[0])
    step = len(values) // shape[0]
    return (
        "["
        + ", ".join(
            nested(shape[1:], values[i * step : (i + 1) * step], fmt)
            for i in range(shape[0])
        )
        + "]"
    )


def dense(name, shape, values, raw):
    if name == "mask":
        return "dense<%s>" % nested(shape, values, lambda v: "true" if v else "false")
    # Hex keeps every float32 bit-exact and the file short.
    return 'dense<"0x%s">' % raw.hex().upper()


class Case:
    """One reference case: its configuration and arrays."""

    def __init__(self, vectors, name):
        self.name = name
        directory = os.path.join(vectors, name)
        self.meta = json.load(open(os.path.join(directory, "meta.json")))
        m = self.meta
        self.args = ["x"] + (["kv"] if m["cross"] else []) + (["mask"] if m["mask"] else [])
        self.args += ["w_q", "w_k", "w_v", "w_o"]
        if m["bias"]:
            self.args += ["b_q", "b_k", "b_v", "b_o"]
        self.arrays = {a: read_npy(os.path.join(directory, a + ".npy")) for a in self.args}
        self.y = read_npy(os.path.join(directory, "y.npy"))

    def types(self, dynamic):
        """The layer's argument types; dynamic: `?` batch and sequence."""
        types = {}
        for a in self.args:
            shape = self.arrays[a][0]
            if dynamic and a in ("x", "kv"):
                shape = ("?", "?", shape[2])
            elif dynamic and a == "mask":
                shape = ("?", "?", "?")
            types[a] = tensor_type(shape, "i1" if a == "mask" else "f32")
        return types

    def result_type(self, dynamic):
        m = self.meta
        if dynamic:
            return tensor_type(("?", "?", m["D_out"]), "f32")
        return tensor_type(self.y[0], "f32")


def layer(case, fn, mode):
    """func.func @fn: the layer of `case`."""
    m = case.meta
    dynamic = mode == "dynamic"
    types = case.types(dynamic)
    result = case.result_type(dynamic)
    lines = [
        "func.func @%s(%s) -> %s {"
        % (fn, ", ".join("%%%s: %s" % (a, types[a]) for a in case.args), result)
    ]
    scale = ""
    if abs(m["scale"] - 1 / math.sqrt(m["dk"])) > 1e-12:
        scale = " scale(%r : f32)" % m["scale"]
    if mode == "steps":
        lines += steps(case, types, result)
    else:
        operands = "%x"
        operands += " kv(%kv)" if m["cross"] else ""
        operands += " mask(%mask)" if m["mask"] else ""
        operands += " weights(%w_q, %w_k, %w_v, %w_o)"
        if m["bias"]:
            operands += " bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o)"
        operands += " heads(%d)" % m["H"]
        operands += " kv_heads(%d)" % m["Hkv"] if m["Hkv"] != m["H"] else ""
        operands += " causal" if m["causal"] else ""
        operands += scale
        lines.append(
            "  %%y = mha.attention %s\n      : (%s) -> %s"
            % (operands, ", ".join(types[a] for a in case.args), result)
        )
    lines.append("  return %%y : %s" % result)
    lines.append("}")
    return lines


def steps(case, types, result):
    """The five steps, with mha.concat_heads and a rank-3 output projection
    (run with mha-lower-to-linalg alone, as canonicalization would fold the
    concatenation into the output projection)."""
    m = case.meta
    if m["split_first"]:
        raise ValueError("steps mode covers the standard form only")
    H, Hkv, dk, dv = m["H"], m["Hkv"], m["dk"], m["dv"]
    B, T, S = m["B"], m["T"], m["S"]
    f32 = lambda *shape: tensor_type(shape, "f32")
    source = "%kv" if m["cross"] else "%x"
    lines = []

    def project(name, inp, weight, columns, bias, length):
        b = " bias(%%b_%s)" % bias if m["bias"] else ""
        bt = ", " + types["b_" + bias] if m["bias"] else ""
        inty = types[inp[1:]]
        out = f32(B, length, columns)
        lines.append(
            "  %%%s = mha.project %s, %%%s%s : (%s, %s%s) -> %s"
            % (name, inp, weight, b, inty, types[weight], bt, out)
        )
        return out

    qt = project("q", "%x", "w_q", H * dk, "q", T)
    kt = project("k", source, "w_k", Hkv * dk, "k", S)
    vt = project("v", source, "w_v", Hkv * dv, "v", S)
    lines.append("  %%qh = mha.split_heads %%q heads(%d) : %s -> %s" % (H, qt, f32(B, H, T, dk)))
    lines.append("  %%kh = mha.split_heads %%k heads(%d) : %s -> %s" % (Hkv, kt, f32(B, Hkv, S, dk)))
    lines.append("  %%vh = mha.split_heads %%v heads(%d) : %s -> %s" % (Hkv, vt, f32(B, Hkv, S, dv)))
    mask = " mask(%mask)" if m["mask"] else ""
    maskty = ", " + types["mask"] if m["mask"] else ""
    causal = " causal" if m["causal"] else ""
    scale = ""
    if abs(m["scale"] - 1 / math.sqrt(dk)) > 1e-12:
        scale = " scale(%r : f32)" % m["scale"]
    lines.append(
        "  %%o = mha.sdpa %%qh, %%kh, %%vh%s%s%s : (%s, %s, %s%s) -> %s"
        % (mask, causal, scale, f32(B, H, T, dk), f32(B, Hkv, S, dk), f32(B, Hkv, S, dv), maskty, f32(B, H, T, dv))
    )
    lines.append("  %%c = mha.concat_heads %%o : %s -> %s" % (f32(B, H, T, dv), f32(B, T, H * dv)))
    b = " bias(%b_o)" if m["bias"] else ""
    bt = ", " + types["b_o"] if m["bias"] else ""
    lines.append(
        "  %%y = mha.output_project %%c, %%w_o%s : (%s, %s%s) -> %s"
        % (b, f32(B, T, H * dv), types["w_o"], bt, result)
    )
    return lines


def checker(case, fn, mode, print_rounded):
    """func.func @check_fn: calls @fn on the case's inputs and prints
    [largest |y - ref|] and [elements outside the tolerance]; with
    print_rounded, first y rounded to 3 decimals."""
    m = case.meta
    dynamic = mode == "dynamic"
    types = case.types(dynamic)
    result = case.result_type(dynamic)
    static = tensor_type(case.y[0], "f32")
    tol = m["tolerance"]
    lines = ["func.func @check_%s() {" % fn]
    operands = []
    for a in case.args:
        shape, values, raw = case.arrays[a]
        ty = tensor_type(shape, "i1" if a == "mask" else "f32")
        lines.append("  %%%s = arith.constant %s : %s" % (a, dense(a, shape, values, raw), ty))
        if ty != types[a]:
            lines.append("  %%%s_dyn = tensor.cast %%%s : %s to %s" % (a, a, ty, types[a]))
            operands.append("%%%s_dyn" % a)
        else:
            operands.append("%" + a)
    lines.append(
        "  %%y = call @%s(%s)\n      : (%s) -> %s"
        % (fn, ", ".join(operands), ", ".join(types[a] for a in case.args), result)
    )
    y = "%y"
    if result != static:
        lines.append("  %%y_static = tensor.cast %%y : %s to %s" % (result, static))
        y = "%y_static"
    lines.append(
        '  %%ref = arith.constant dense<"0x%s"> : %s' % (case.y[2].hex().upper(), static)
    )
    rank = len(case.y[0])
    dims = ", ".join("d%d" % i for i in range(rank))
    ident = "affine_map<(%s) -> (%s)>" % (dims, dims)
    scalar = "affine_map<(%s) -> ()>" % dims
    lines += [
        "  %zero = arith.constant 0.0 : f32",
        "  %one = arith.constant 1.0 : f32",
        "  %%atol = arith.constant %r : f32" % float(tol["atol"]),
        "  %%rtol = arith.constant %r : f32" % float(tol["rtol"]),
        "  %empty = tensor.empty() : tensor<f32>",
        "  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>",
        "  %%stats:2 = linalg.generic {indexing_maps = [%s, %s, %s, %s],"
        % (ident, ident, scalar, scalar),
        '      iterator_types = [%s]}' % ", ".join(['"reduction"'] * rank),
        "      ins(%s, %%ref : %s, %s) outs(%%init, %%init : tensor<f32>, tensor<f32>) {"
        % (y, static, static),
        "  ^bb0(%got: f32, %want: f32, %max: f32, %count: f32):",
        "    %diff = arith.subf %got, %want : f32",
        "    %err = math.absf %diff : f32",
        "    %newmax = arith.maximumf %max, %err : f32",
        "    %mag = math.absf %want : f32",
        "    %rel = arith.mulf %rtol, %mag : f32",
        "    %tol = arith.addf %atol, %rel : f32",
        "    %outside = arith.cmpf ugt, %err, %tol : f32",
        "    %inc = arith.select %outside, %one, %zero : f32",
        "    %newcount = arith.addf %count, %inc : f32",
        "    linalg.yield %newmax, %newcount : f32, f32",
        "  } -> (tensor<f32>, tensor<f32>)",
    ]
    if print_rounded:
        lines += [
            "  %thousand = arith.constant 1000.0 : f32",
            "  %%rounded_init = tensor.empty() : %s" % static,
            "  %%rounded = linalg.generic {indexing_maps = [%s, %s]," % (ident, ident),
            '      iterator_types = [%s]}' % ", ".join(['"parallel"'] * rank),
            "      ins(%s : %s) outs(%%rounded_init : %s) {" % (y, static, static),
            "  ^bb0(%v: f32, %unused: f32):",
            "    %scaled = arith.mulf %v, %thousand : f32",
            "    %whole = math.round %scaled : f32",
            "    %r = arith.divf %whole, %thousand : f32",
            "    // -0 prints as -0: make it 0.",
            "    %r0 = arith.addf %r, %zero : f32",
            "    linalg.yield %r0 : f32",
            "  } -> %s" % static,
            "  %%rounded_u = tensor.cast %%rounded : %s to tensor<*xf32>" % static,
            "  call @printMemrefF32(%rounded_u) : (tensor<*xf32>) -> ()",
        ]
    lines += [
        "  %max_u = tensor.cast %stats#0 : tensor<f32> to tensor<*xf32>",
        "  call @printMemrefF32(%max_u) : (tensor<*xf32>) -> ()",
        "  %count_u = tensor.cast %stats#1 : tensor<f32> to tensor<*xf32>",
        "  call @printMemrefF32(%count_u) : (tensor<*xf32>) -> ()",
        "  return",
        "}",
    ]
    return lines


def module(cases, mode, print_rounded=False):
    lines = []
    for case in cases:
        lines += layer(case, case.name, mode) + [""]
        lines += checker(case, case.name, mode, print_rounded) + [""]
    lines.append(
        "func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}"
    )
    lines.append("")
    lines.append("func.func @main() {")
    for case in cases:
        lines.append("  call @check_%s() : () -> ()" % case.name)
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


def rounded_rows(case):
    """y.npy rounded as the IR rounds it (3 decimals, half away from zero),
    row by row, as printMemrefF32 prints them (6 significant digits). Where
    the reference is within 1e-5 of a rounding tie, either neighbour is
    accepted: the check is about the numbers, not the last bit."""
    shape, values, _ = case.y
    width = shape[-1]

    def printed(whole):
        r = struct.unpack("<f", struct.pack("<f", whole / 1000.0))[0] + 0.0
        return "%g" % float("%.6g" % r)

    def fmt(v):
        scaled = v * 1000.0
        lower = math.floor(scaled)
        if abs(scaled - lower - 0.5) < 0.01:
            options = sorted({printed(lower), printed(lower + 1)})
            return "{{(%s)}}" % "|".join(o.replace(".", "\\.") for o in options)
        return printed(math.floor(abs(scaled) + 0.5) * (1 if scaled >= 0 else -1))

    return [
        ", ".join(fmt(v) for v in values[i : i + width])
        for i in range(0, len(values), width)
    ]


def emit(args):
    cases = [Case(args.vectors, name) for name in args.cases]
    out = []
    out.append("// RUN: mha-opt %s --mha-to-llvm \\")
    out.append("// RUN: | mlir-runner -e main -entry-point-result=void \\")
    out.append("// RUN:     --shared-libs=%mlir_c_runner_utils,%mlir_runner_utils,%mha_runner_allocation,%libomp \\")
    out.append("// RUN: | FileCheck %s")
    out.append("// REQUIRES: mlir-runner")
    out.append("")
    out.append("// Generated by Inputs/mha_vectors.py emit %s from test/vectors."
               % " ".join(args.cases))
    out.append("// Each case prints its output rounded to 3 decimals, the largest")
    out.append("// |y - y_ref| and the number of elements outside the case's tolerance,")
    out.append("// against y.npy (a float64 NumPy reference).")
    for case in cases:
        m = case.meta
        out.append("")
        out.append("// %s: B=%d T=%d D=%d H=%d dk=%d dv=%d%s%s%s%s, %s shapes"
                   % (case.name, m["B"], m["T"], m["D"], m["H"], m["dk"], m["dv"],
                      ", split first" if m["split_first"] else "",
                      ", mask" if m["mask"] else "",
                      ", causal" if m["causal"] else "",
                      ", bias" if m["bias"] else "", args.mode))
        if m["mask"]:
            shape, values, _ = case.arrays["mask"]
            keys = shape[2]
            rows = [i for i in range(len(values) // keys)
                    if not any(values[i * keys : (i + 1) * keys])]
            for row in rows:
                out.append("// Query row %d (batch %d, token %d) may attend no key: its "
                           "attention output is 0, so y is b_o." % (row, row // shape[1], row % shape[1]))
        out.append("// CHECK: rank = %d offset = 0 sizes = [%s]"
                   % (len(case.y[0]), ", ".join(str(d) for d in case.y[0])))
        for row in rounded_rows(case):
            out.append("// CHECK-NEXT: %s" % ("{{.*}}[" + row + "]"))
        out.append("// CHECK: rank = 0")
        out.append("// Below 1e-4:")
        out.append("// CHECK-NEXT: [{{[0-9](\\.[0-9]+)?e-(0[5-9]|[1-9][0-9])|0}}]")
        out.append("// CHECK: rank = 0")
        out.append("// CHECK-NEXT: [0]")
    out.append("")
    sys.stdout.write("\n".join(out) + "\n" + module(cases, args.mode, print_rounded=True))


def check(args):
    failures = 0
    for name in args.cases:
        case = Case(args.vectors, name)
        if args.mode == "steps" and case.meta["split_first"]:
            continue
        source = module([case], args.mode)
        if args.mode == "steps":
            linalg = subprocess.run([args.mha_opt, "--mha-lower-to-linalg"], input=source,
                                    capture_output=True, text=True)
            source = linalg.stdout if linalg.returncode == 0 else ""
        llvm = subprocess.run([args.mha_opt, "--mha-to-llvm"], input=source,
                              capture_output=True, text=True)
        run = subprocess.run(
            [args.mlir_runner, "-e", "main", "-entry-point-result=void",
             "--shared-libs=" + args.shared_libs],
            input=llvm.stdout, capture_output=True, text=True)
        numbers = re.findall(r"data =\s*\[([^\]]*)\]", run.stdout)
        if llvm.returncode or run.returncode or len(numbers) != 2:
            print("%s %s: FAILED to compile or run\n%s%s" % (name, args.mode, llvm.stderr, run.stderr))
            failures += 1
            continue
        max_err, outside = float(numbers[0]), float(numbers[1])
        ok = outside == 0 and not math.isnan(max_err)
        failures += not ok
        print("%s %s: max_abs_err=%.3g outside_tolerance=%d %s"
              % (name, args.mode, max_err, outside, "ok" if ok else "FAIL"))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "emit"):
        p = sub.add_parser(name)
        p.add_argument("--vectors", required=True)
        p.add_argument("--mode", choices=["static", "dynamic", "steps"], default="static")
        p.add_argument("cases", nargs="+")
        if name == "check":
            p.add_argument("--mha-opt", required=True)
            p.add_argument("--mlir-runner", required=True)
            p.add_argument("--shared-libs", required=True)
    args = parser.parse_args()
    if args.command == "emit":
        emit(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
