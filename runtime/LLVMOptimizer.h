//===- LLVMOptimizer.h - LLVM IR optimization of layers ---------*- C++ -*-===//
//
// What the JIT (JitRunner.cpp) and mha-compile (ObjectEmitter.cpp) run on
// a layer's LLVM IR before instruction selection: upstream's O3
// (mlir::makeOptimizingTransformer), then narrowConstantMaskStores, a
// workaround for LLVM 22's instruction selection.
//
// Why: a vector fill or copy of a `?` extent with a small bound is one
// masked store of whole registers (mha-vectorize). Where O3 unrolls the
// loops around it and the extent becomes a constant, it is an
// `llvm.masked.store` with a constant mask; a block of a few hundred of
// them (one lane of 16 each, in a graph with tiles of 13 and 11 queries
// and keys and projection tiles of 3 rows) took LLVM 22's DAG combiner
// 14 s (its store merging compares each store with every other), and
// 0.6 s once each was the plain store it is. Drop it when LLVM's combiner
// bounds that search for masked stores as it does for plain ones.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_LLVMOPTIMIZER_H
#define MHA_RUNTIME_LLVMOPTIMIZER_H

#include "llvm/Support/Error.h"

#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mha::runtime {

/// Rewrites each `llvm.masked.store` whose mask is a constant that sets a
/// prefix of the lanes (k of N): none set, the store goes; all, a plain
/// store of the vector; otherwise a plain store of its first k lanes (one
/// element where k = 1), with the same pointer and alignment. Other masked
/// stores are left. Returns how many were rewritten.
unsigned narrowConstantMaskStores(llvm::Module &module);

/// O3 for `machine` (mlir::makeOptimizingTransformer), then
/// narrowConstantMaskStores: the ExecutionEngine's `transformer`.
std::function<llvm::Error(llvm::Module *)>
makeLayerOptimizer(llvm::TargetMachine *machine);

} // namespace mha::runtime

#endif // MHA_RUNTIME_LLVMOPTIMIZER_H
