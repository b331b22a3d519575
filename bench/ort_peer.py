"""ONNX Runtime as a peer of the benchmarks: finding or installing it, and
running one of its models (bench/ort_run.js) in a process of its own.

ONNX Runtime 1.30 runs under node (npm's onnxruntime-node, installed with
--ignore-scripts: its install script fetches a GPU build), and the models
are written by Debian's python3-onnx. bench/ort_gqa.py (GroupQueryAttention)
and bench/ort_mha.py (MultiHeadAttention, also layer_vs_torch.py's ORT
column) share this. Importing it needs only Python's standard library, so
that layer_vs_torch.py can run under any python3; NumPy is imported where
arrays are written or compared.
"""

import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import importable, last_line, run_child  # noqa: E402

ORT_VERSION = "1.30.0"
# Debian package: the Python module that shows it is there, or None for a
# program of the same name (nodejs: node).
DEBIAN = {"python3-onnx": "onnx", "nodejs": None, "npm": None}
MEDIAN = re.compile(r"^median ([0-9.]+) ms", re.M)
RUNNER = os.path.join(HERE, "ort_run.js")


def add_ort_arguments(parser):
    """--node-modules, --ort-dir and --install, as every ORT script takes
    them."""
    parser.add_argument("--node-modules", default=os.environ.get(
        "ORT_NODE_MODULES"), help="a node_modules folder with "
        "onnxruntime-node (default: $ORT_NODE_MODULES, else "
        "ORT_DIR/node_modules)")
    parser.add_argument("--ort-dir", help="where --install puts the npm "
                        "package (default: BIN/../onnxruntime-node)")
    parser.add_argument("--install", action="store_true",
                        help="install what ONNX Runtime needs and is "
                        "missing (apt-get, npm)")


def node_env(node_modules):
    """The environment of a node child that loads onnxruntime-node.
    ORT_DISABLE_TELEMETRY: else ONNX Runtime 1.30 keeps a device id and a
    queue of telemetry events under ~/.cache/Microsoft (seen with strace),
    outside the repository, and would send them where it can."""
    return dict(os.environ, NODE_PATH=node_modules, ORT_DISABLE_TELEMETRY="1")


def default_ort_dir(bin_dir):
    return os.path.join(os.path.dirname(os.path.abspath(bin_dir)),
                        "onnxruntime-node")


def missing_debian(python):
    """The Debian packages of DEBIAN whose module (in `python`) or program
    is missing."""
    modules = [m for m in DEBIAN.values() if m]
    found = importable(python, modules)
    missing = []
    for package, module in DEBIAN.items():
        if module:
            if module not in found:
                missing.append(package)
        elif not shutil.which("node" if package == "nodejs" else package):
            missing.append(package)
    return missing


def install_debian(missing):
    """apt-get installs MISSING as the Makefile's install-missing does;
    returns None or why it could not."""
    print(f"make bench: installing {' '.join(missing)}", file=sys.stderr,
          flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (sudo + ["apt-get", "update"],
                    sudo + ["apt-get", "install", "-y",
                            "--no-install-recommends"] + missing):
        code, out, err = run_child(command, env, 1800)
        if code != 0:
            return f"{' '.join(command)}: {last_line(err or out)}"
    return None


def ort_package_version(node_modules):
    try:
        with open(os.path.join(node_modules, "onnxruntime-node",
                               "package.json")) as file:
            return json.load(file).get("version")
    except (OSError, ValueError):
        return None


def find_ort(python, node_modules=None, ort_dir=None, install=False):
    """(node_modules, version, None) where onnxruntime-node loads and
    `python` writes models, installing what is missing with `install`
    (into ort_dir); else (None, None, why not) in a few words."""
    missing = missing_debian(python)
    if missing and install:
        error = install_debian(missing)
        if error:
            return None, None, f"cannot install {' '.join(missing)} ({error})"
        # The install may have added modules this process imports later.
        import importlib
        importlib.invalidate_caches()
        missing = missing_debian(python)
    if missing:
        return None, None, (f"{' '.join(missing)} missing (apt-get install "
                            f"{' '.join(missing)}, or run with --install)")
    given = node_modules
    node_modules = node_modules or os.path.join(ort_dir, "node_modules")
    version = ort_package_version(node_modules)
    if version is None and install and not given:
        print(f"make bench: installing onnxruntime-node@{ORT_VERSION} into "
              f"{ort_dir} (npm)", file=sys.stderr, flush=True)
        os.makedirs(ort_dir, exist_ok=True)
        code, out, err = run_child(
            ["npm", "install", "--prefix", ort_dir, "--ignore-scripts",
             "--no-audit", "--no-fund", f"onnxruntime-node@{ORT_VERSION}"],
            None, 900)
        if code != 0:
            lines = [line for line in (err or out).splitlines()
                     if line.strip() and "complete log" not in line]
            return None, None, (
                f"npm cannot install onnxruntime-node@{ORT_VERSION} (no "
                f"network?): {' / '.join(lines[:2]) or 'no output'}")
        version = ort_package_version(node_modules)
    if version is None:
        return None, None, (
            f"no onnxruntime-node in {node_modules} (npm install "
            f"--ignore-scripts onnxruntime-node@{ORT_VERSION}, then "
            "--node-modules DIR/node_modules; or run with --install)")
    code, out, err = run_child(
        ["node", "-e", "require('onnxruntime-node')"],
        node_env(node_modules), 120)
    if code != 0:
        return None, None, (f"onnxruntime-node {version} does not load: "
                            f"{last_line(err or out)}")
    return node_modules, version, None


def write_inputs(folder, arrays):
    """The model's inputs for ort_run.js: each array as raw float32
    FOLDER/<name>.bin, and their names and shapes in FOLDER/inputs.json."""
    os.makedirs(folder, exist_ok=True)
    shapes = {}
    for name, value in arrays.items():
        value.astype("float32").tofile(os.path.join(folder, name + ".bin"))
        shapes[name] = list(value.shape)
    with open(os.path.join(folder, "inputs.json"), "w") as file:
        json.dump(shapes, file)


def run_ort(folder, node_modules, threads, repeat, warmup, timeout):
    """One process of FOLDER/layer.onnx (ort_run.js): (median ms, None), or
    (None, why it failed). Leaves the last y in FOLDER/y_ort.bin."""
    code, out, err = run_child(
        ["node", RUNNER, folder, str(threads), str(repeat), str(warmup)],
        node_env(node_modules), timeout)
    found = MEDIAN.search(out)
    if code == 0 and found:
        return float(found.group(1)), None
    return None, f"onnxruntime: {last_line(err or out)}"


def read_y_ort(folder, shape):
    import numpy as np
    return np.fromfile(os.path.join(folder, "y_ort.bin"),
                       np.float32).reshape(shape)


def compare(y_mha, y_ort, tolerance):
    """max |y_mha - y_ort|, max |y_mha|, their ratio (the relative error the
    tables report) and whether it is within `tolerance`."""
    import numpy as np
    size = float(np.abs(y_mha).max()) or 1.0
    diff = float(np.abs(y_mha.astype(np.float64) - y_ort).max())
    return {"max_abs_diff": diff, "max_abs_y": size,
            "max_rel_err": diff / size, "agree": diff <= tolerance * size}


def run_mha(bin_dir, graph, inputs, output, threads, repeat, warmup,
            timeout):
    """One mha-run process of GRAPH on the arrays of INPUTS (--inputs),
    writing y to OUTPUT: (median ms, None), or (None, why it failed)."""
    code, out, err = run_child(
        [os.path.join(bin_dir, "mha-run"), graph, f"--inputs={inputs}",
         f"--output={output}", f"--repeat={repeat}", f"--warmup={warmup}",
         f"--threads={threads}"], None, timeout)
    found = MEDIAN.search(out)
    if code == 0 and found:
        return float(found.group(1)), None
    return None, f"mha-run: {last_line(err or out)}"


def alternate(rows, run, rounds, check, script):
    """ROUNDS rounds of `run(row, side)` -> (ms, error) for side "mha" and
    "ort" of each row, one process each, the order reversed from row to row
    and round to round, so that a slow spell of the shared machine falls on
    both sides alike. `check(row)` compares the outputs of the first round
    in which both sides ran and returns a dict with "agree". Returns
    (times {row: {side: [ms]}}, ratios {row: [ort / mha of a round]},
    checks {row: dict}, whether anything failed or disagreed)."""
    times = {row: {"mha": [], "ort": []} for row in rows}
    ratios = {row: [] for row in rows}
    checks = {}
    failed = False
    for index in range(rounds):
        print(f"{script}: round {index + 1} of {rounds}", file=sys.stderr,
              flush=True)
        for number, row in enumerate(rows):
            order = ["mha", "ort"]
            if (index + number) % 2:
                order.reverse()
            measured = {}
            for side in order:
                value, error = run(row, side)
                if error:
                    print(f"{script}: {row}: {error}", file=sys.stderr)
                    failed = True
                    continue
                measured[side] = value
                times[row][side].append(value)
            if len(measured) < 2:
                continue
            ratios[row].append(measured["ort"] / measured["mha"])
            if row not in checks:
                checks[row] = check(row)
                if not checks[row]["agree"]:
                    failed = True
                    print(f"{script}: {row}: outputs differ: max |diff| "
                          f"{checks[row]['max_abs_diff']:.2e}, max |y| "
                          f"{checks[row]['max_abs_y']:.2e}", file=sys.stderr)
    return times, ratios, checks, failed
