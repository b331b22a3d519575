//===- GraphChecks.h - Graphs the compiled code cannot run ------*- C++ -*-===//
//
// What loadGraph refuses beyond parsing, verifying and the signature, so that
// mha-run, mha-compile and the Python package refuse the same graphs with the
// same message: calls the compiled code could not make or would never return
// from, and a result that is no new value but one of the arguments (the
// pipeline then drops it, and the compiled function returns nothing).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_GRAPHCHECKS_H
#define MHA_RUNTIME_GRAPHCHECKS_H

#include "runtime/GraphSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mha {
namespace runtime {

/// Checks every call that `entry` makes, directly or through the functions
/// it calls: each must name a function that the graph defines, and none may
/// lead back to a function on the way to it (recursion, which the pipeline
/// compiles as it is: a call that never returns). The error names the call
/// and its place in the file.
llvm::Error checkCalls(mlir::func::FuncOp entry);

/// Checks that the output of `entry` (`signature.resultIndex`) is computed:
/// not one of the arguments as it is, once canonicalized as the pipeline
/// does (`mha.concat_heads` of `mha.split_heads` folds away) or through the
/// functions it calls, and not written into an argument's buffer (a
/// destination-style op such as `linalg.fill` or `mha.cache_append` whose
/// destination is an argument). Bufferization makes such a result the
/// argument's buffer and the pipeline drops it from the compiled function,
/// which then has no result to give. Call after checkCalls.
llvm::Error checkOutputIsComputed(mlir::func::FuncOp entry,
                                  const GraphSignature &signature);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_GRAPHCHECKS_H
