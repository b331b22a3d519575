"""Runs each graph with the projection passes on and off, on both attention
paths and with 1 and 2 threads, and checks that every output has the same
bytes. Usage: projections-bitwise.test.py DIR MHA_RUN GRAPH..."""
import subprocess
import sys

OFF = ["--fuse-projections=false", "--fold-head-layouts=false",
       "--projection-row-tile=0"]
SCALAR = ["--vectorize=false"]
PACKED = ["--fuse-projections=true"]
# The packed weights made once, before the first call (mha-run's default),
# or by the layer itself on every call.
PER_CALL = ["--prepare-weights=false"]
SEPARATE = ["--fuse-projections=false"]
# Each group must give the same bytes. The passes on and off are compared
# on the scalar code: with them off, the untiled projections are not
# vectorized, and a vector FMA rounds once where a scalar multiply-add
# rounds twice. The vector code is compared across thread counts.
GROUPS = {
    "scalar": {
        "on-1": ["--threads=1"] + PACKED + SCALAR,
        "on-2": ["--threads=2"] + PACKED + SCALAR,
        "small-tiles-2": ["--threads=2", "--projection-row-tile=8",
                          "--projection-col-tile=8"] + PACKED + SCALAR,
        "default-2": ["--threads=2"] + SCALAR,
        "per-call-2": ["--threads=2"] + PACKED + PER_CALL + SCALAR,
        "separate-2": ["--threads=2"] + SEPARATE + SCALAR,
        "off-1": ["--threads=1"] + OFF + SCALAR,
    },
    # Tile sizes are not compared here: a tile that does not divide its
    # loop leaves a dynamically shaped remainder, which stays scalar.
    "vector": {
        "on-1": ["--threads=1"] + PACKED,
        "on-2": ["--threads=2"] + PACKED,
        "default-1": ["--threads=1"],
        "default-2": ["--threads=2"],
        "per-call-2": ["--threads=2"] + PACKED + PER_CALL,
        "separate-1": ["--threads=1"] + SEPARATE,
        "separate-2": ["--threads=2"] + SEPARATE,
    },
}

directory, mha_run, graphs = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = False
for graph in graphs:
    for path in ("fused", "decomposed"):
        for group, configs in GROUPS.items():
            outputs = []
            for name, options in configs.items():
                out = f"{directory}/{graph}-{path}-{group}-{name}.npy"
                subprocess.run([mha_run, f"{directory}/{graph}.mlir",
                                "--random", "--seed=5", f"--attention={path}",
                                "--output", out] + options,
                               check=True, stdout=subprocess.DEVNULL)
                with open(out, "rb") as f:
                    outputs.append(f.read())
            same = all(data == outputs[0] for data in outputs)
            print(f"{graph} {path} {group}: "
                  f"{'identical' if same else 'DIFFERENT'}")
            failed |= not same
sys.exit(1 if failed else 0)
