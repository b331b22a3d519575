#!/usr/bin/python3
"""Differential test of mha: random valid layers against a NumPy reference.

Each seed picks one valid configuration of the layer (sizes, variants and
the pipeline options of mha-run that change the generated code), writes its
graph with mha-gen, draws float32 inputs with NumPy, computes the expected
output with an independent float64 NumPy implementation of the semantics in
test/vectors/README.md (layer_reference.py; and, for the served models'
attention that about one seed in three draws when mha-gen has its flags
(model_variants.py), of mha.attention's description in
dialects/MhaAttentionOps.td), and runs

    mha-run GRAPH --inputs DIR --expect ref.npy --atol A --rtol R --check ...

which must exit with 0: the compiled code matches both this reference and
the C++ reference of --check. Any other exit code, a crash (signal) or a
timeout is a failure. About one seed in five decodes with a key/value cache
instead (decoding.py: prefill and steps, dense or paged caches, checked
against the same float64 layer over each sequence, --check and, for a paged
cache, the dense graph). Every failure is printed with its seed, its class and
the commands that reproduce it; the last line is `N passed, M failed; ...`
(how many seeds drew the served models' variants, or why none did, and how
many decoded).

    test/differential/differential.py --seed-start 0 --count 2000 --jobs 2

The configuration of a seed depends only on the seed (and this file), so
`--seed-start S --count 1 --keep` reproduces one case and keeps its folder
(graph.mlir, the inputs, ref.npy, repro.sh). Needs Debian's python3-numpy.
Exit status: 0 when every configuration passed, 1 otherwise, 2 on bad usage.
"""

import argparse
import concurrent.futures
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import decoding
from layer_reference import causal_allowed, check_reference, reference
from model_variants import (VARIANT_FLAGS, chance, draw_model_variants, model_variant_flags,
                            pick, variant_gen_args, variant_inputs)

# Sizes to draw from: every size 1, small primes and a few lengths past the
# default tiles (61, 127), so that tiles and vector blocks have remainders.
SEQ_LENGTHS = [1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 61, 127]
HEADS = [1, 1, 2, 3, 4, 6, 8]
HEAD_DIMS = [1, 2, 3, 4, 5, 7, 8, 16]
WIDTHS = [1, 2, 3, 5, 7, 8, 12, 16, 24, 33]
QUERY_TILES = [1, 2, 3, 5, 7, 13, 64]
KEY_TILES = [1, 2, 3, 5, 7, 11, 128]
KEY_SPLITS = [1, 2, 3, 4, 7, 16]
# The largest values mha-run accepts (key-splits is at most 1024): far more
# ranges than key blocks.
HUGE_KEY_SPLITS = [1000, 1024]
ROW_TILES = [0, 1, 2, 3, 5, 7, 32]
COL_TILES = [0, 1, 2, 3, 7, 128]


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def make_config(seed, variants=False):
    """The configuration of one seed: a dict of sizes, variants and options.
    With `variants` (mha-gen has the flags of the served models' attention),
    about one seed in three also draws those (draw_model_variants); the
    classic fields are drawn first, from the same stream, either way."""
    if decoding.is_decoding(seed):
        return decoding.make_config(seed, variants)
    rng = np.random.default_rng([seed, 0x6D6861])
    c = {"seed": seed}
    tiny = chance(rng, 0.06)  # every size 1 at once
    c["B"] = 1 if tiny else pick(rng, [1, 1, 2, 3])
    c["T"] = 1 if tiny else pick(rng, SEQ_LENGTHS)
    c["H"] = 1 if tiny else pick(rng, HEADS)
    c["Hkv"] = 1 if tiny else pick(rng, divisors(c["H"]))
    c["split_first"] = chance(rng, 0.2)
    c["cross"] = chance(rng, 0.45)
    c["dynamic"] = chance(rng, 0.3)
    c["causal"] = chance(rng, 0.4)
    c["bias"] = chance(rng, 0.7)
    c["mask"] = None if not chance(rng, 0.35) else pick(rng, ["full", "broadcast"])
    # Rows that may attend no key at all (the semantics: zero attention output).
    c["empty_rows"] = c["mask"] is not None and chance(rng, 0.15)

    # Head dimensions: --head-dim given (any model width) or D = H * dk
    # (mha-gen's default); dv equal to dk (the default) or not.
    gen = {}
    if c["split_first"]:
        slice_width = 1 if tiny else pick(rng, [1, 1, 2, 3, 4, 5])
        c["D"] = c["H"] * slice_width
        c["dk"] = 1 if tiny else pick(rng, HEAD_DIMS + [slice_width] * 3)
        if c["dk"] != slice_width or chance(rng, 0.3):
            gen["head_dim"] = c["dk"]
    elif tiny:
        c["D"], c["dk"] = 1, 1
    elif chance(rng, 0.5):
        c["dk"] = pick(rng, HEAD_DIMS)
        c["D"] = c["H"] * c["dk"]
    else:
        c["dk"] = pick(rng, HEAD_DIMS)
        c["D"] = pick(rng, WIDTHS)
        gen["head_dim"] = c["dk"]
    if c["D"] % c["H"] == 0 and c["D"] // c["H"] == c["dk"] and "head_dim" not in gen:
        pass  # mha-gen derives dk = D / H
    else:
        gen["head_dim"] = c["dk"]
    if chance(rng, 0.65) and not tiny:
        c["dv"] = pick(rng, [d for d in HEAD_DIMS if d != c["dk"]])
        gen["value_dim"] = c["dv"]
    else:
        c["dv"] = c["dk"]

    # Cross-attention: its own sequence length S and width D_kv.
    if c["cross"]:
        c["S"] = 1 if tiny else pick(rng, SEQ_LENGTHS)
        if c["split_first"]:
            c["Dkv"] = c["Hkv"] * (1 if tiny else pick(rng, [1, 2, 3, 4]))
        else:
            c["Dkv"] = 1 if tiny else pick(rng, WIDTHS)
        how = pick(rng, ["both", "both", "seq", "dim", "flag"])
        if how == "seq" and c["Dkv"] != c["D"]:
            how = "both"
        if how == "dim" and c["S"] != c["T"]:
            how = "both"
        if how == "flag":
            c["S"], c["Dkv"] = c["T"], c["D"]
        if how in ("both", "seq"):
            gen["kv_seq"] = c["S"]
        if how in ("both", "dim"):
            gen["kv_dim"] = c["Dkv"]
        if how == "flag" or chance(rng, 0.2):
            gen["cross_flag"] = True
    else:
        c["S"], c["Dkv"] = c["T"], c["D"]
    if chance(rng, 0.5) and not tiny:
        c["Dout"] = pick(rng, [1, 2, 3, 5, 9, 16])
        gen["out_dim"] = c["Dout"]
    else:
        c["Dout"] = c["D"] if not tiny else 1
        if tiny:
            gen["out_dim"] = 1
    c["gen"] = gen

    # Pipeline options of mha-run that change the code paths.
    run = []
    run += ["--attention", pick(rng, ["fused", "fused", "decomposed", "decomposed", "auto"])]
    if chance(rng, 0.6):
        run += ["--query-tile", str(pick(rng, QUERY_TILES))]
    if chance(rng, 0.6):
        run += ["--key-tile", str(pick(rng, KEY_TILES))]
    if chance(rng, 0.02):
        run += ["--key-splits", str(pick(rng, HUGE_KEY_SPLITS))]
    elif chance(rng, 0.5):
        run += ["--key-splits", str(pick(rng, KEY_SPLITS))]
    run += ["--threads", str(pick(rng, [1, 2]))]
    if chance(rng, 0.5):
        run += ["--projection-row-tile", str(pick(rng, ROW_TILES))]
    if chance(rng, 0.5):
        run += ["--projection-col-tile", str(pick(rng, COL_TILES))]
    for flag, p in (("--vectorize", 0.2), ("--fuse-projections", 0.1),
                    ("--prepare-weights", 0.1), ("--fold-head-layouts", 0.1)):
        if chance(rng, p):
            run.append(flag + "=false")
    c["run"] = run
    # Drawn last, so that the draws above (and the configurations of earlier
    # seeds' other fields) do not move.
    c["causal_bottom_right"] = c["causal"] and chance(rng, 0.5)
    # Logits anywhere in float32's range: integer inputs and weights (so that
    # the scores are exact in float32 and float64 alike) with the query's
    # weights and bias times 2^e, e from -100 to as far as the largest
    # possible score stays below 3e38 (scores of 1e-30 to 1e38).
    if chance(rng, 0.15):
        bound = c["dk"] * (c["D"] + 1) * (c["Dkv"] + 1)
        top = int(np.floor(np.log2(3e38 / bound)))
        c["logit_exponent"] = int(rng.integers(-100, top + 1))
    if variants:
        draw_model_variants(c)
    return c


def gen_args(c):
    """mha-gen's options for configuration c."""
    g = c["gen"]
    args = ["--batch", str(c["B"]), "--seq", str(c["T"]), "--d-model", str(c["D"]),
            "--heads", str(c["H"])]
    if c["Hkv"] != c["H"] or (c["seed"] % 5 == 0):
        args += ["--kv-heads", str(c["Hkv"])]
    for key, flag in (("head_dim", "--head-dim"), ("value_dim", "--value-dim"),
                      ("kv_seq", "--kv-seq"), ("kv_dim", "--kv-dim"),
                      ("out_dim", "--out-dim")):
        if key in g:
            args += [flag, str(g[key])]
    if g.get("cross_flag"):
        args.append("--cross")
    if c.get("causal_bottom_right"):
        args.append("--causal-bottom-right")
    elif c["causal"]:
        args.append("--causal")
    if c["mask"] == "full":
        args.append("--mask")
    elif c["mask"] == "broadcast":
        args.append("--mask-broadcast")
    if not c["bias"]:
        args.append("--no-bias")
    if c["split_first"]:
        args.append("--split-first")
    if c["dynamic"]:
        args.append("--dynamic")
    args += variant_gen_args(c)
    return args


def describe(c):
    if c.get("decoding"):
        return decoding.describe(c)
    parts = ["B=%d T=%d S=%d D=%d Dkv=%d H=%d Hkv=%d dk=%d dv=%d Dout=%d" % (
        c["B"], c["T"], c["S"], c["D"], c["Dkv"], c["H"], c["Hkv"], c["dk"],
        c["dv"], c["Dout"])]
    for key in ("cross", "causal", "causal_bottom_right", "split_first",
                "dynamic"):
        if c.get(key):
            parts.append(key)
    if c["mask"]:
        parts.append("mask=" + c["mask"] + (" with empty rows" if c["empty_rows"] else ""))
    parts.append("bias" if c["bias"] else "no bias")
    if "logit_exponent" in c:
        parts.append("integer inputs, logits times 2^%d" % c["logit_exponent"])
    if "recipe" in c:
        v = ["variants(%s):" % c["recipe"]]
        rope = c.get("rope")
        if rope:
            v.append("rope=%s R=%d base=%g scale=%g mscale=%g%s" % (
                rope["layout"], rope["rotary_dim"], rope["base"], rope["scale"],
                rope["mscale"], " inv_freq=" + rope["inv_freq_kind"]
                if rope["inv_freq"] is not None else ""))
        if "qk_norm_eps" in c:
            v.append("qk_norm eps=%g" % (1e-6 if c["qk_norm_eps"] is None else c["qk_norm_eps"]))
        for key in ("window", "softcap", "alibi", "sinks", "scale"):
            if key in c:
                v.append("%s=%s" % (key, c[key]))
        if "query_gain" in c:
            v.append("query gain %g" % c["query_gain"])
        if "attn_bias" in c:
            v.append("attn_bias=[%s] %s" % (c["attn_bias"], c["attn_bias_values"]))
        parts.append(" ".join(v))
    return " ".join(parts)


def make_inputs(c):
    """float32 inputs (bool mask) named as the graph's arguments."""
    rng = np.random.default_rng([c["seed"], 0x696E70])
    B, T, S, D, Dkv = c["B"], c["T"], c["S"], c["D"], c["Dkv"]
    H, Hkv, dk, dv, Dout = c["H"], c["Hkv"], c["dk"], c["dv"], c["Dout"]
    f32 = np.float32
    inputs = {"x": rng.standard_normal((B, T, D)).astype(f32)}
    if c["cross"]:
        inputs["kv"] = rng.standard_normal((B, S, Dkv)).astype(f32)
    if c["split_first"]:
        wd, wkv = D // H, Dkv // Hkv
        inputs["w_q"] = (rng.standard_normal((H, wd, dk)) / np.sqrt(wd)).astype(f32)
        inputs["w_k"] = (rng.standard_normal((Hkv, wkv, dk)) / np.sqrt(wkv)).astype(f32)
        inputs["w_v"] = (rng.standard_normal((Hkv, wkv, dv)) / np.sqrt(wkv)).astype(f32)
    else:
        inputs["w_q"] = (rng.standard_normal((D, H * dk)) / np.sqrt(D)).astype(f32)
        inputs["w_k"] = (rng.standard_normal((Dkv, Hkv * dk)) / np.sqrt(Dkv)).astype(f32)
        inputs["w_v"] = (rng.standard_normal((Dkv, Hkv * dv)) / np.sqrt(Dkv)).astype(f32)
    inputs["w_o"] = (rng.standard_normal((H * dv, Dout)) / np.sqrt(H * dv)).astype(f32)
    if c["bias"]:
        for name, n in (("b_q", H * dk), ("b_k", Hkv * dk), ("b_v", Hkv * dv), ("b_o", Dout)):
            inputs[name] = (0.5 * rng.standard_normal(n)).astype(f32)
    if c["mask"]:
        mb = B if c["mask"] == "full" else 1
        mask = rng.random((mb, T, S)) < pick(rng, [0.3, 0.6, 0.9])
        allowed = mask & causal_allowed(c)
        # At least one key per query row, unless this case asks for rows that
        # may attend nothing (then some rows are emptied on purpose).
        for b in range(mb):
            for t in range(T):
                if not allowed[b, t].any():
                    reachable = np.flatnonzero(causal_allowed(c)[t])
                    if reachable.size:
                        mask[b, t, int(pick(rng, list(reachable)))] = True
        if c["empty_rows"]:
            for b in range(mb):
                for t in range(T):
                    if rng.random() < 0.3:
                        mask[b, t, :] = False
        inputs["mask"] = mask
    if "logit_exponent" in c:
        exact_logits(inputs, c["logit_exponent"], rng)
    if "recipe" in c:
        variant_inputs(c, inputs)
    return inputs




def exact_logits(inputs, exponent, rng):
    """Makes every float input an integer in [-1, 1] (mask kept), then the
    query's weights and bias times 2^exponent: every score is an integer
    times 2^exponent, exact in float32, so the softmax of the compiled code
    and of the float64 reference see the same scores at any magnitude."""
    for name, value in inputs.items():
        if name != "mask":
            inputs[name] = rng.integers(-1, 2, value.shape).astype(np.float32)
    for name in ("w_q", "b_q"):
        if name in inputs:
            inputs[name] = np.ldexp(inputs[name], exponent).astype(np.float32)




# A crash of a tool ends at once with its signal: LLVM's crash handler would
# run llvm-symbolizer, which can hang after the heap was corrupted (seen:


# A crash of a tool ends at once with its signal: LLVM's crash handler would
# run llvm-symbolizer, which can hang after the heap was corrupted (seen:
# "corrupted double-linked list", then a timeout instead of SIGABRT).
CHILD_ENV = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")


def limit_memory(megabytes):
    def apply():
        if megabytes:
            size = megabytes << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return apply


def run_tools(steps, args):
    """Runs each (name, command) in turn until one fails; returns (kind,
    detail) of the failure, or (None, "")."""
    for step, cmd in steps:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=args.timeout, env=CHILD_ENV,
                                  preexec_fn=limit_memory(args.mem_limit_mb))
        except subprocess.TimeoutExpired:
            return step + " timeout", "no exit within %g s" % args.timeout
        except OSError as error:  # e.g. the binary being rebuilt meanwhile
            return step + " did not start", str(error)
        out = proc.stdout + proc.stderr
        if proc.returncode == 0:
            continue
        if proc.returncode < 0:
            kind = "%s crash (signal %d)" % (step, -proc.returncode)
        elif step.startswith("mha-run") and proc.returncode == 1:
            bad = [l for l in out.splitlines()
                   if (l.startswith("expect ") or l.startswith("check ")) and not l.endswith(": ok")]
            which = sorted({l.split()[0] for l in bad}) or ["?"]
            kind = "%s mismatch (%s)" % (step, "+".join(
                "NumPy" if w == "expect" else "C++ --check" if w == "check" else w
                for w in which))
        else:
            kind = "%s exit %d" % (step, proc.returncode)
        lines = [l for l in out.splitlines() if "error" in l or " max abs " in l]
        return kind, " | ".join((lines or out.strip().splitlines() or [""])[-3:])
    return None, ""


def write_repro(case_dir, text, commands):
    with open(os.path.join(case_dir, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# %s\nset -e\n" % text)
        f.write("\n".join(shlex.join(cmd) for cmd in commands) + "\n")


def run_one(seed, args, bin_dir, work_root):
    """Runs one configuration; returns (seed, config, kind, detail, commands)."""
    c = make_config(seed, args.variants)
    case_dir = os.path.join(work_root, "seed%d" % seed)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    if c.get("decoding"):
        kind, detail, commands = decoding.run_case(c, args, bin_dir, case_dir, run_tools,
                                                   write_repro)
    else:
        kind, detail, commands = run_layer(c, args, bin_dir, case_dir)
    if kind is None and not args.keep_all:
        shutil.rmtree(case_dir, ignore_errors=True)
    elif kind is not None and not args.keep:
        shutil.rmtree(case_dir, ignore_errors=True)
    return seed, c, kind, detail, commands


def run_layer(c, args, bin_dir, case_dir):
    """A layer without a cache: mha-run with --expect and --check."""
    graph = os.path.join(case_dir, "graph.mlir")
    gen_cmd = [os.path.join(bin_dir, "mha-gen")] + gen_args(c) + ["-o", graph]
    ref_path = os.path.join(case_dir, "ref.npy")
    run_cmd = ([os.path.join(bin_dir, "mha-run"), graph, "--inputs", case_dir,
                "--expect", ref_path, "--atol", repr(args.atol), "--rtol", repr(args.rtol),
                "--check"] + c["run"])
    commands = [gen_cmd, run_cmd]
    write_repro(case_dir, describe(c), commands)
    try:
        inputs = make_inputs(c)
        for name, value in inputs.items():
            np.save(os.path.join(case_dir, name + ".npy"), value)
        # Underflow is the softmax of logits far apart: 0, as it should be.
        with np.errstate(all="raise", under="ignore"):
            expected = reference(c, inputs)
        np.save(ref_path, expected.astype(np.float32))
    except Exception as error:  # a bug of this script: report, never hide
        return "driver-error", repr(error), commands
    kind, detail = run_tools([("mha-gen", gen_cmd), ("mha-run", run_cmd)], args)
    return kind, detail, commands


def signature(kind, detail):
    """The class of a failure: its kind and its first message, without paths
    and numbers (a mismatch: whether the error is finite; a crash or a
    timeout: only its kind)."""
    if "mismatch" in kind:
        return kind + (": non-finite error" if re.search(r"INF|NAN", detail, re.I) else "")
    if "crash" in kind or "timeout" in kind:
        return kind
    text = detail.split(" | ")[0]
    text = re.sub(r"/\S+", "FILE", text)
    text = re.sub(r"\d+", "N", text)
    return kind + (": " + text[:150] if text else "")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "..", "build", "bin")
    parser = argparse.ArgumentParser(
        description="Differential test: random valid mha layers, mha-run "
                    "against a float64 NumPy reference and --check.")
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=100, help="configurations (default 100)")
    parser.add_argument("--jobs", type=int, default=2, help="configurations run at once (default 2)")
    parser.add_argument("--keep", action="store_true",
                        help="keep each failing case's folder (under --work)")
    parser.add_argument("--keep-all", action="store_true", help="keep every case's folder")
    parser.add_argument("--work", help="folder for the cases (default: a new temporary one)")
    parser.add_argument("--bin", default=default_bin, help="folder of mha-gen and mha-run")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    # A hang detector, not a speed limit: most cases take well under 1 s,
    # and a slow, loaded machine must not fail the test. (Seed 172 of the
    # lit test's range took 14 to 16 s, all of it in LLVM 22's DAG
    # combiner, until runtime/LLVMOptimizer.h narrowed its constant-mask
    # stores; 20 s timed out under load.)
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds one tool may run (default 60; most cases take "
                             "well under 1 s)")
    parser.add_argument("--mem-limit-mb", type=int, default=4096,
                        help="address-space limit of each tool, 0: none (default 4096; "
                             "0 under AddressSanitizer)")
    parser.add_argument("--list", action="store_true",
                        help="print each seed's configuration and commands, run nothing")
    parser.add_argument("--quiet", action="store_true", help="no line per passing seed")
    parser.add_argument("--no-variants", action="store_true",
                        help="draw none of the served models' variants (RoPE, QK-norm, window, "
                             "softcap, ALiBi, sinks, attn_bias, scale) even where mha-gen has "
                             "their flags")
    parser.add_argument("--check-reference", metavar="VECTORS",
                        help="only compare this script's reference with the cases in VECTORS "
                             "(test/vectors), run nothing")
    args = parser.parse_args()
    if args.check_reference:
        return 1 if check_reference(args.check_reference) else 0
    if args.count < 0 or args.jobs < 1 or args.seed_start < 0:
        parser.error("--count must be >= 0, --jobs >= 1 and --seed-start >= 0")
    bin_dir = os.path.abspath(args.bin)
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            parser.error("no executable %s in %s (--bin)" % (tool, bin_dir))
    seeds = range(args.seed_start, args.seed_start + args.count)
    # The served models' variants, drawn when mha-gen has their flags.
    flags = model_variant_flags(bin_dir)
    args.variants = len(flags) == len(VARIANT_FLAGS)
    if args.no_variants:
        args.variants = False
        variants_note = "model variants off (--no-variants)"
    elif args.variants:
        variants_note = "%d drew model variants"
    else:
        variants_note = "model variants not drawn: mha-gen lacks %s" % " ".join(
            f for f in VARIANT_FLAGS if f not in flags)
    if args.list:
        for seed in seeds:
            c = make_config(seed, args.variants)
            if c.get("decoding"):
                gen, run = decoding.gen_args(c), decoding.run_args(c)
            else:
                gen, run = gen_args(c), c["run"]
            print("seed %d: %s\n  mha-gen %s\n  mha-run ... %s" % (
                seed, describe(c), shlex.join(gen), shlex.join(run)))
        return 0

    work_root = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="mha-diff.")
    os.makedirs(work_root, exist_ok=True)
    me = os.path.abspath(__file__)
    start = time.monotonic()
    failures = []
    passed = 0
    variant_seeds = 0
    decoding_seeds = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, seed, args, bin_dir, work_root) for seed in seeds]
        for future in futures:  # in seed order, so the output is deterministic
            seed, c, kind, detail, commands = future.result()
            variant_seeds += "recipe" in c
            decoding_seeds += bool(c.get("decoding"))
            if kind is None:
                passed += 1
                if not args.quiet:
                    print("PASS seed %d" % seed, flush=True)
                continue
            failures.append((seed, c, kind, detail))
            print("FAIL seed %d: %s: %s" % (seed, kind, detail))
            print("  config: %s" % describe(c))
            print("  reproduce: /usr/bin/python3 %s --bin %s --seed-start %d --count 1 --keep"
                  " --work /tmp/mha-diff-seed%d" % (me, shlex.quote(bin_dir), seed, seed))
            print("  commands (inputs in %s%s):" % (
                os.path.dirname(commands[0][-1]), "" if args.keep else ", removed; use --keep"))
            for cmd in commands:
                print("    " + shlex.join(cmd))
            sys.stdout.flush()
    elapsed = time.monotonic() - start
    if not args.work and not ((args.keep and failures) or args.keep_all):
        shutil.rmtree(work_root, ignore_errors=True)

    if failures:
        classes = {}
        for seed, c, kind, detail in failures:
            classes.setdefault(signature(kind, detail), []).append(seed)
        print("failures by class:")
        for sig, class_seeds in sorted(classes.items(), key=lambda item: -len(item[1])):
            shown = " ".join(str(s) for s in class_seeds[:8])
            more = " ..." if len(class_seeds) > 8 else ""
            print("  %4d  %s\n        seeds %s%s" % (len(class_seeds), sig, shown, more))
    print("seeds %d..%d, %d jobs, %.1f s" % (
        args.seed_start, args.seed_start + args.count - 1, args.jobs, elapsed))
    print("%d passed, %d failed; %s; %d decoded with a key/value cache" % (
        passed, len(failures),
        variants_note % variant_seeds if "%d" in variants_note else variants_note,
        decoding_seeds))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
