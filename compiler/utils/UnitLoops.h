//===- UnitLoops.h - Tiles without their unit loops ------------*- C++ -*-===//
//
// mha-vectorize vectorizes generics of up to 3 loops. A parallel tile of a
// larger generic (one sequence, one head of it) keeps a loop of one
// iteration for each of those: dropping them makes it vectorizable.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_UTILS_UNITLOOPS_H
#define MHA_COMPILER_UTILS_UNITLOOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Replaces `tile` by the same generic without its loops of one iteration
/// (linalg::dropUnitDims, its operands rank-reduced by tensor.extract_slice
/// and its result put back by tensor.insert_slice), and returns that op;
/// leaves `tile` as it is, and returns it, where that fails.
linalg::LinalgOp dropUnitLoops(RewriterBase &rewriter, linalg::GenericOp tile);

} // namespace mlir::mha

#endif // MHA_COMPILER_UTILS_UNITLOOPS_H
