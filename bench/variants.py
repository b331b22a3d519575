#!/usr/bin/env python3
"""The served models' attention variants against their plain layers.

Each row is a pair of graphs written by mha-gen: a variant and the layer it
is compared with. In R rounds every graph of a group runs once with
`mha-run GRAPH --random --repeat N --warmup W --threads P` (decode rows:
`--prefill CONTEXT --steps N`, the median time of a one-token step), in an
order that is reversed from round to round; a row's ratio is variant /
baseline of the same round, the median over the rounds.

| row | variant | baseline | target |
|---|---|---|---|
| llama | RoPE half, GQA 16:4, no bias, causal (1, 2048, 1024, 16) | the same without RoPE | <= 1.05 |
| softcap, alibi, sinks, float mask | --softcap 50, --alibi, --sinks, --attn-bias 1,1,T,S, causal (1, 2048, 1024, 16) | the plain causal layer | <= 1.10 each |
| window | --window 512, causal (1, 8192, 512, 8) | the full causal layer | <= 0.35 |
| decode window | one step of --kv-cache --window 512 --causal (D 512, 8 heads) at 32768 tokens of context | the same step at 1024 | <= 1.3 |

    python3 bench/variants.py                 # the table above, a few minutes
    python3 bench/variants.py --quick         # small sizes, a few seconds
    python3 bench/variants.py --rounds 7 --bin build/bin

It prints a Markdown table (both medians, the ratio, its per-round range,
the target and whether it is met) and exits 1 when a run fails. Needs only
Python's standard library.
"""

import os
import re
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (  # noqa: E402
    bench_argument_parser, cpu_model, last_line, run_child)

MEDIAN = re.compile(r"^median ([0-9.]+) ms", re.M)
STEP = re.compile(r"^step: median ([0-9.]+) ms", re.M)


def groups(quick):
    """[(group name, {config: mha-gen args}, [(row, variant, baseline,
    target)], kind)], kind "layer" or ("decode", {config: context})."""
    if quick:
        b, t, d, h, hkv = 1, 256, 256, 4, 2
        wt, wd, wh, window = 1024, 256, 4, 64
        contexts, dwindow = {"long": 2048, "short": 256}, 64
    else:
        b, t, d, h, hkv = 1, 2048, 1024, 16, 4
        wt, wd, wh, window = 8192, 512, 8, 512
        contexts, dwindow = {"long": 32768, "short": 1024}, 512
    layer = [f"--batch={b}", f"--seq={t}", f"--d-model={d}", f"--heads={h}"]
    llama = layer + [f"--kv-heads={hkv}", "--no-bias", "--causal"]
    plain = layer + ["--causal"]
    wide = ["--batch=1", f"--seq={wt}", f"--d-model={wd}", f"--heads={wh}",
            "--causal"]
    capacity = max(contexts.values()) + 64
    decode = [f"--d-model={wd}", f"--heads={wh}", "--dynamic",
              f"--kv-cache={capacity}", f"--window={dwindow}", "--causal"]
    size = f"({b}, {t}, {d}, {h})"
    return [
        ("llama", {"rope": llama + ["--rope=half"], "no-rope": llama},
         [(f"llama RoPE half, GQA {h}:{hkv} {size}", "rope", "no-rope",
           1.05)], "layer"),
        ("scores", {"plain": plain, "softcap": plain + ["--softcap=50"],
                    "alibi": plain + ["--alibi"],
                    "sinks": plain + ["--sinks"],
                    "mask": plain + ["--attn-bias=1,1,T,S"]},
         [(f"softcap 50 {size}", "softcap", "plain", 1.10),
          (f"ALiBi {size}", "alibi", "plain", 1.10),
          (f"sinks {size}", "sinks", "plain", 1.10),
          (f"float mask 1,1,T,S {size}", "mask", "plain", 1.10)], "layer"),
        ("window", {"window": wide + [f"--window={window}"], "full": wide},
         [(f"window {window} of (1, {wt}, {wd}, {wh}) causal", "window",
           "full", 0.35)], "layer"),
        ("decode", {"long": decode, "short": decode},
         [(f"decode step, window {dwindow}, context {contexts['long']} vs "
           f"{contexts['short']} (D {wd}, {wh} heads)", "long", "short",
           1.3)], ("decode", contexts)),
    ]


def parse_args():
    parser = bench_argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, 1 round: a smoke run")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=32,
                        help="timed decode steps per run")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--only", action="append",
                        help="groups to run: llama, scores, window, decode")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.repeat = args.repeat or (3 if args.quick else 5)
    if min(args.rounds, args.repeat, args.threads, args.steps) < 1:
        parser.error("--rounds, --repeat, --threads and --steps must be >= 1")
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            parser.error(f"no {tool} in {args.bin}")
    return args


def main():
    args = parse_args()
    work = tempfile.mkdtemp(prefix="variants_bench.")
    selected = [g for g in groups(args.quick)
                if not args.only or g[0] in args.only]
    graphs = {}
    for name, configs, _, _ in selected:
        for config, gen in configs.items():
            path = os.path.join(work, f"{name}_{config}.mlir")
            code, out, err = run_child(
                [os.path.join(args.bin, "mha-gen"), *gen, "-o", path], None,
                args.timeout)
            if code != 0:
                sys.exit(f"variants.py: mha-gen {' '.join(gen)}: "
                         f"{last_line(err or out)}")
            graphs[name, config] = path

    def measure(name, config, kind):
        command = [os.path.join(args.bin, "mha-run"), graphs[name, config],
                   "--random", f"--threads={args.threads}"]
        if kind == "layer":
            command += [f"--repeat={args.repeat}", f"--warmup={args.warmup}"]
            pattern = MEDIAN
        else:
            command += ["--dims=B=1", f"--prefill={kind[1][config]}",
                        f"--steps={args.steps}"]
            pattern = STEP
        code, out, err = run_child(command, None, args.timeout)
        found = pattern.search(out)
        if code != 0 or not found:
            return None, last_line(err or out)
        return float(found.group(1)), None

    times = {(g[0], c): [] for g in selected for c in g[1]}
    ratios = {row[0]: [] for g in selected for row in g[2]}
    failed = False
    for index in range(args.rounds):
        print(f"variants.py: round {index + 1} of {args.rounds}",
              file=sys.stderr)
        for name, configs, rows, kind in selected:
            order = list(configs)
            if index % 2:
                order.reverse()
            measured = {}
            for config in order:
                value, error = measure(name, config, kind)
                if error:
                    print(f"variants.py: {name} {config}: {error}",
                          file=sys.stderr)
                    failed = True
                    continue
                measured[config] = value
                times[name, config].append(value)
            for row, variant, baseline, _ in rows:
                if variant in measured and baseline in measured:
                    ratios[row].append(measured[variant] / measured[baseline])

    print(f"mha variants against their plain layers, {cpu_model()[0]}, "
          f"{args.threads} threads, {args.rounds} rounds"
          f"{' (--quick)' if args.quick else ''}")
    print()
    print("| row | variant ms | baseline ms | ratio | per-round range | "
          "target | met |")
    print("|---|---:|---:|---:|---|---:|---|")
    met_all = True
    for name, configs, rows, kind in selected:
        unit = "" if kind == "layer" else " (step)"
        for row, variant, baseline, target in rows:
            values = ratios[row]
            if not values:
                print(f"| {row} | failed | | | | {target} | no |")
                met_all = False
                continue
            ratio = statistics.median(values)
            met = ratio <= target
            met_all &= met
            print(f"| {row}{unit} "
                  f"| {statistics.median(times[name, variant]):.3f} "
                  f"| {statistics.median(times[name, baseline]):.3f} "
                  f"| {ratio:.3f} | {min(values):.3f} to {max(values):.3f} "
                  f"| <= {target} | {'yes' if met else 'NO'} |", flush=True)
    print()
    print("All targets met." if met_all else "Some targets are missed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
