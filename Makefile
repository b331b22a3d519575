# The README's two commands: `make run` and `make test`. Each installs the
# Debian packages that are missing, configures with CMake + Ninja into build/
# and builds before it does its job.

LLVM_PREFIX ?= /usr/lib/llvm-22
BUILD_DIR   ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)

# What the project needs from Debian (`make deps` installs the missing ones).
PACKAGES := llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools \
            libomp-22-dev clang-22 cmake ninja-build ccache libgtest-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build test run clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_C_COMPILER=$(LLVM_PREFIX)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_PREFIX)/bin/clang++ \
	  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit

configure: $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cmake --build $(BUILD_DIR) --target check-mha

# The main job: the classic layer (1x512 tokens, d_model 512, 8 heads) on
# random data, checked against the plain C++ reference, with timing.
run: build
	$(BUILD_DIR)/bin/mha-run examples/classic.mlir --random --check --repeat 5 --warmup 1

clean:
	rm -rf $(BUILD_DIR)
