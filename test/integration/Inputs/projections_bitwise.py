"""Runs each graph with the projection passes on and off, on both attention
paths and with 1 and 2 threads, and checks that every output has the same
bytes. Usage: projections-bitwise.test.py DIR MHA_RUN GRAPH..."""
import subprocess
import sys

OFF = ["--fuse-projections=false", "--fold-head-layouts=false",
       "--projection-row-tile=0"]
CONFIGS = {
    "on-1": ["--threads=1"],
    "on-2": ["--threads=2"],
    "small-tiles-2": ["--threads=2", "--projection-row-tile=8",
                      "--projection-col-tile=8"],
    "off-1": ["--threads=1"] + OFF,
}

directory, mha_run, graphs = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = False
for graph in graphs:
    for path in ("fused", "decomposed"):
        outputs = {}
        for name, options in CONFIGS.items():
            out = f"{directory}/{graph}-{path}-{name}.npy"
            subprocess.run([mha_run, f"{directory}/{graph}.mlir", "--random",
                            "--seed=5", f"--attention={path}", "--output", out]
                           + options, check=True, stdout=subprocess.DEVNULL)
            with open(out, "rb") as f:
                outputs[name] = f.read()
        same = all(data == outputs["off-1"] for data in outputs.values())
        print(f"{graph} {path}: {'identical' if same else 'DIFFERENT'}")
        failed |= not same
sys.exit(1 if failed else 0)
