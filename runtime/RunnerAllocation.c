/*===- RunnerAllocation.c - Allocation functions for mlir-runner ----------===*
 *
 * The pipeline lowers memref.alloc and memref.dealloc to calls of
 * `_mlir_memref_to_llvm_alloc`, `..._aligned_alloc` and `..._free`, which the
 * runtime that runs the code provides (mha-run's JIT, a library's wrapper).
 * MLIR's own runtime libraries do not: the tests that run lowered IR with
 * mlir-runner load this library (libmha_runner_allocation.so) for them, the
 * C library's functions without a cache.
 *
 *===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdlib.h>

void *_mlir_memref_to_llvm_alloc(size_t bytes) { return malloc(bytes); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  /* aligned_alloc wants a multiple of the alignment. */
  return aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}

void _mlir_memref_to_llvm_free(void *pointer) { free(pointer); }
