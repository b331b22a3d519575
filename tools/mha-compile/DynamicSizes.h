//===- DynamicSizes.h - Which `?` sizes of a graph must agree ---*- C++ -*-===//
//
// A compiled library receives its sizes at call time and must refuse shapes
// that do not fit together (a batch of 2 in x and 3 in kv) before the code
// reads out of bounds. The relations come from the ops' verifiers: sizes are
// tried on a copy of the graph, and two `?` sizes that can only change
// together must be equal.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_DYNAMICSIZES_H
#define MHA_TOOLS_MHACOMPILE_DYNAMICSIZES_H

#include "runtime/GraphSignature.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace mha {
namespace compile {

/// One `?` dimension of one argument.
struct DynamicDim {
  /// The argument's index.
  unsigned argument;
  /// The dimension's index in that argument.
  unsigned dim;
};

/// The `?` dimensions that must be equal at every call; a class of one is a
/// size no other depends on.
using SizeClasses = std::vector<std::vector<DynamicDim>>;

/// Works out the classes of `func`'s dynamic argument sizes.
llvm::Expected<SizeClasses>
findSizeClasses(mlir::func::FuncOp func,
                const runtime::GraphSignature &signature);

} // namespace compile
} // namespace mha

#endif // MHA_TOOLS_MHACOMPILE_DYNAMICSIZES_H
