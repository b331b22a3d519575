# The README's two commands: `make run` and `make test`. Each installs the
# Debian packages that are missing, configures with CMake + Ninja into build/
# and builds before it does its job.

LLVM_PREFIX ?= /usr/lib/llvm-22
BUILD_DIR   ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)
# The sanitizer build (ASan + UBSan, and the libFuzzer targets) and how long
# each fuzz target runs in `make fuzz` and `make test`.
ASAN_BUILD_DIR ?= build-asan
FUZZ_SECONDS   ?= 60

# What the project needs from Debian (`make deps` installs the missing ones).
# libclang-rt-22-dev: clang-22's ASan, UBSan and libFuzzer runtimes.
# libcairo2-dev: draws the attention maps of mha-run --dump-attention (PNG).
# python3-numpy: the reference of the differential test (test/differential/),
# and with python3-dev and pybind11-dev the Python package mha (python/).
# python3-torch: the reference of mha.torch and tools/torch_export.py, so
# that `make test` runs their tests (test/python/torch.test,
# test/tools/torch-export.test; lit skips them, saying so, where it is
# missing); large, hence --no-install-recommends.
# python3-pip, python3-setuptools, python3-wheel: `pip install` of the built
# package without network access (python/README.md, "Installing"), which
# test/python/pip-install.test runs (UNSUPPORTED, saying so, without them).
# libopenmpi-dev, openmpi-bin: Open MPI 4.1 for `mha-run --parallel heads`
# (docs/distributed.md) and mpirun for its tests (test/distributed/); mha
# builds without them, and lit skips those tests, saying so.
# python3-mpi4py: the communicator of mha.layer(..., comm=) in the tests of
# a split Python layer (test/distributed/split-python.test).
PACKAGES := llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools \
            libomp-22-dev clang-22 libclang-rt-22-dev cmake ninja-build ccache \
            libgtest-dev libcairo2-dev python3-numpy python3-dev pybind11-dev \
            python3-torch python3-pip python3-setuptools python3-wheel \
            libopenmpi-dev openmpi-bin python3-mpi4py

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build test run clean build-asan test-asan fuzz bench \
        differential

all: build

# $(call install-missing,TARGET,PACKAGES): apt-get installs those of
# PACKAGES that are not installed yet (after an update), and nothing else.
define install-missing
	@missing=""; \
	for p in $(2); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make $(1): installing$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install-missing,deps,$(PACKAGES))

CMAKE_FLAGS = -G Ninja \
	  -DCMAKE_C_COMPILER=$(LLVM_PREFIX)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_PREFIX)/bin/clang++ \
	  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit

$(BUILD_DIR)/build.ninja: | deps
	cmake $(CMAKE_FLAGS) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

$(ASAN_BUILD_DIR)/build.ninja: | deps
	cmake $(CMAKE_FLAGS) -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DMHA_SANITIZE=ON -DMHA_FUZZ=ON

configure: $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# CI: the test suite, the same suite on the sanitizer build, and bounded
# fuzzing (README.md, "Reliability").
test: build build-asan
	cmake --build $(BUILD_DIR) --target check-mha
	cmake --build $(ASAN_BUILD_DIR) --target check-mha
	test/fuzz/run-fuzzers.sh $(ASAN_BUILD_DIR) $(FUZZ_SECONDS)

# Our code with AddressSanitizer and UBSan, and the libFuzzer targets.
build-asan: $(ASAN_BUILD_DIR)/build.ninja
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)

test-asan: build-asan
	cmake --build $(ASAN_BUILD_DIR) --target check-mha

fuzz: build-asan
	test/fuzz/run-fuzzers.sh $(ASAN_BUILD_DIR) $(FUZZ_SECONDS)

# The long run of the differential test (test/differential/README.md):
# DIFF_COUNT random valid layers from seed DIFF_SEED, DIFF_JOBS at a time,
# each against a float64 NumPy reference and mha-run --check; it prints each
# failure with its reproducer, the failures by class and the time taken.
DIFF_SEED  ?= 0
DIFF_COUNT ?= 2000
DIFF_JOBS  ?= 2
DIFF_ARGS  ?=

differential: build
	/usr/bin/python3 test/differential/differential.py --bin $(BUILD_DIR)/bin \
	  --seed-start $(DIFF_SEED) --count $(DIFF_COUNT) --jobs $(DIFF_JOBS) --quiet $(DIFF_ARGS)

# The main job: the classic layer (1x512 tokens, d_model 512, 8 heads) on
# random data, checked against the plain C++ reference, with timing.
# It builds the four tools only, not the unit tests, benchmarks and generated
# docs that `make` builds too (99 of 123 build steps, about 90 % of the
# compile time: the tools are most of it).
RUN_TARGETS := mha-gen mha-run mha-compile mha-opt
run: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(RUN_TARGETS)
	$(BUILD_DIR)/bin/mha-run examples/classic.mlir --random --check --repeat 5 --warmup 1

# Our layer against tuned PyTorch, ONNX Runtime's MultiHeadAttention and a
# NumPy GEMM ceiling, same run (README.md, "Performance"); layer_vs_torch.py
# --install installs node's onnxruntime-node into build/ where it can and
# else says in one line why ONNX Runtime is left out; e.g.
# BENCH_ARGS=--quick for a fast check.
BENCH_ARGS ?=
# The benchmark's peers need a tuned BLAS: NumPy (the GEMM ceiling) and
# PyTorch use whatever libblas.so.3 points at, and Debian's reference BLAS
# is no yardstick. (python3-torch, the PyTorch peers, is in PACKAGES.)
BENCH_PACKAGES := python3-numpy libopenblas0-pthread

# Then odd lengths and `?` sizes against the shapes the tiles divide
# (bench/every_shape.py, timed through the Python package in one process),
# and the Python package against mha-run and
# nn.MultiheadAttention (bench/python_vs_torch.py, in Debian's python3,
# where python3-torch lives); --quick in BENCH_ARGS shortens them.
# Then decoding with a key/value cache against its bandwidth bound, today's
# recompute and the PyTorch peer bench/torch_decode.py (TORCH_DECODE to run
# another), and the prefill against the causal layer (bench/decode_vs_bound.py).
# Then bf16 next to float32, ours and PyTorch's (bench/bf16_vs_f32.py, all
# four in one process through the Python package).
# Then the Llama-style layer against ONNX Runtime's GroupQueryAttention
# (bench/ort_gqa.py, which installs node's onnxruntime-node where it can)
# and the served models' variants against the plain layer
# (bench/variants.py); then 1 rank x 2 threads against 2 MPI ranks x 1 thread
# split by heads (bench/distributed.py, one line saying so without MPI).
TORCH_DECODE ?= bench/torch_decode.py

bench: build
	$(call install-missing,bench,$(BENCH_PACKAGES))
	python3 bench/layer_vs_torch.py --bin $(BUILD_DIR)/bin --install $(BENCH_ARGS)
	/usr/bin/python3 bench/every_shape.py --bin $(BUILD_DIR)/bin \
	  $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/python_vs_torch.py --bin $(BUILD_DIR)/bin \
	  $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	python3 bench/decode_vs_bound.py --bin $(BUILD_DIR)/bin \
	  --torch-decode $(TORCH_DECODE) $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/bf16_vs_f32.py --bin $(BUILD_DIR)/bin \
	  $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/bf16_precision.py --bin $(BUILD_DIR)/bin \
	  $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/ort_gqa.py --bin $(BUILD_DIR)/bin --install $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/variants.py --bin $(BUILD_DIR)/bin \
	  $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	/usr/bin/python3 bench/distributed.py --bin $(BUILD_DIR)/bin $(if $(findstring --quick,$(BENCH_ARGS)),--quick)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR)
