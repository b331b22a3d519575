//===- SpecializeContraction.h - Named ops from generics --------*- C++ -*-===//
//
// LLVM 22's `linalg::specializeGenericOp` turns a contraction whose operand
// is read transposed, e.g. `C[m, n] += A[k, m] · B[k, n]`, into a plain
// `linalg.matmul` with the default maps: the transpose is dropped and the
// result is wrong (`mlir-opt --linalg-specialize-generic-ops` on such a
// generic shows it). Our tiles meet that form when a dimension of 1 is
// dropped, e.g. the output projection of heads of width 1. This wrapper
// keeps the generic unless the named op has its indexing maps (up to the
// order of the loops).
//
// Retired by: linalg::specializeGenericOp keeping a transposed operand's
// indexing map (or leaving such a generic as it is).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_WORKAROUNDS_SPECIALIZECONTRACTION_H
#define MHA_COMPILER_WORKAROUNDS_SPECIALIZECONTRACTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Replaces `generic` with the named linalg op it is
/// (`linalg::specializeGenericOp`) when that op computes the same thing, i.e.
/// has the same indexing maps up to the order of its loops; otherwise leaves
/// `generic` as it is and fails.
FailureOr<linalg::LinalgOp>
specializeGenericOpChecked(RewriterBase &rewriter, linalg::GenericOp generic);

} // namespace mlir::mha

#endif // MHA_COMPILER_WORKAROUNDS_SPECIALIZECONTRACTION_H
