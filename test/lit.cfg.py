# lit configuration of the mha tests: FileCheck tests of the tools and passes
# and integration tests that run graphs. Unit tests have their own suite in
# unit/.
import os
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "mha"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mha_obj_root, "test")
config.excludes = [
    "CMakeLists.txt",
    "README.md",
    "lit.cfg.py",
    "lit.site.cfg.py",
    "vectors",
    "Inputs",
    # Fuzzer seeds (test/fuzz), not tests.
    "corpus-graph",
    "corpus-npy",
    "corpus-library",
    "corpus-options",
]

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not and count come from LLVM's tools folder (Debian ships no
# llvm-lit that would set this up).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The reference cases (copied from the team's shared vectors).
config.substitutions.append(
    ("%vectors", os.path.join(config.test_source_root, "vectors"))
)
# The C compiler that builds the ahead-of-time examples.
config.substitutions.append(("%cc", os.path.join(config.llvm_tools_dir, "clang")))
config.substitutions.append(("%examples", os.path.join(config.mha_src_root, "examples")))

tool_dirs = [config.mha_tools_dir, config.llvm_tools_dir]
tools = ["mha-compile", "mha-gen", "mha-opt", "mha-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The repository and the tools' folder, for tests that run commands the way a
# reader does (docs/tutorial.md) and scripts from tools/.
config.substitutions.append(("%mha_src", config.mha_src_root))
config.substitutions.append(("%mha_bin", config.mha_tools_dir))

# tools/torch_export.py needs PyTorch (Debian's python3-torch), an optional
# dependency: its test is UNSUPPORTED where `import torch` fails.
if subprocess.run([sys.executable, "-c", "import torch"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch")

# AVX512_BF16 (vdpbf16ps): tests that run the bf16 dot-product path
# (`bf16-dot=avx512`, or `on`) need it; they are UNSUPPORTED on other CPUs,
# where the f32 fallback (`bf16-dot=off`) is what runs.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = cpuinfo.read().split()
except OSError:
    cpu_flags = []
if "avx512_bf16" in cpu_flags:
    config.available_features.add("avx512bf16")
# AVX-512F: the register blocks that the target rule gives the host
# (compiler/strategy/Strategy.h) are 8 x 32.
if "avx512f" in cpu_flags:
    config.available_features.add("avx512f")

# AMX-BF16 (TDPBF16PS): tests that run the AMX path of the bf16 projections
# (`bf16-dot=amx`, and `auto` on such a CPU) need it and Linux's permission
# for the tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
# which the runtime asks for); UNSUPPORTED elsewhere.
if "amx_bf16" in cpu_flags and "amx_tile" in cpu_flags:
    try:
        import ctypes
        SYS_arch_prctl = 158  # x86-64
        if ctypes.CDLL(None, use_errno=True).syscall(
                SYS_arch_prctl, 0x1023, 18) == 0:
            config.available_features.add("amx-bf16")
    except (OSError, AttributeError):
        pass

# The Python package (python/): built where pybind11-dev is installed, and
# not in the sanitizer build (an instrumented module cannot load into an
# uninstrumented python3).
import glob
if glob.glob(os.path.join(config.mha_obj_root, "python", "mha", "_mha*.so")):
    config.available_features.add("python-mha")
# ONNX Runtime, the optional peer of bench/ort_mha.py and
# layer_vs_torch.py: node, Debian's python3-onnx and npm's onnxruntime-node
# where `make bench` installs it (build/onnxruntime-node). `make test`
# installs none of them, so test/tools/bench-ort.test is UNSUPPORTED where
# one is missing.
import importlib.util
import shutil
ort_node_modules = os.path.join(config.mha_obj_root, "onnxruntime-node",
                                "node_modules")
if shutil.which("node") and os.path.isfile(os.path.join(
        ort_node_modules, "onnxruntime-node", "package.json")) and all(
        importlib.util.find_spec(m) for m in ("onnx", "numpy")):
    config.available_features.add("onnxruntime")
    config.substitutions.append(("%ort_node_modules", ort_node_modules))
# What docs/tutorial.md's `requires:` blocks may use (test/docs).
config.substitutions.append(
    ("%doc_features",
     "--available python-mha" if "python-mha" in config.available_features
     else ""))

# `%expect-exit CODE COMMAND...`: COMMAND must exit with exactly CODE (the
# exit codes of README.md, "The tools"); `not` accepts any failure.
config.substitutions.append(
    ("%expect-exit", "sh " + os.path.join(config.test_source_root, "Inputs", "expect-exit.sh"))
)

# Helper scripts use only the standard library of the Python that runs lit.
config.substitutions.append(("%python", sys.executable))

lit_config.load_config(
    config, os.path.join(config.mha_src_root, "test", "sanitizers", "lit.sanitizers.py")
)
if config.mha_fuzz:
    config.available_features.add("fuzzers")
    llvm_config.add_tool_substitutions(
        ["mha-fuzz-npy", "mha-fuzz-graph", "mha-fuzz-library", "mha-fuzz-options",
         "mha-fuzz-session", "mha-fuzz-paged"],
        tool_dirs,
    )
