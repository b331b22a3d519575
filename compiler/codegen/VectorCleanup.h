//===- VectorCleanup.h - mha-vectorize's vector ops simplified --*- C++ -*-===//
//
// linalg::vectorize leaves transfers of slices, masked ops of the peeled
// blocks and leading unit dimensions; the lowering to LLVM expects the
// slices folded into the transfers, contractions as vector.contract and no
// mask that it would unroll lane by lane.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_VECTORCLEANUP_H
#define MHA_COMPILER_CODEGEN_VECTORCLEANUP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Adds the pattern that rewrites `vector.mask %m { vector.multi_reduction
/// <kind> %x, %acc }` of a float vector as the unmasked reduction of
/// `select(%m, %x, identity)`, where the kind has an identity.
void populateMaskedReductionAsSelectPatterns(RewritePatternSet &patterns);

/// Stage 2 of mha-vectorize: the vector ops in the forms the later lowering
/// expects. Slices read or written by the vector ops fold into their
/// transfers, contractions recognized in reductions of products become
/// vector.contract, masked reductions become selects
/// (populateMaskedReductionAsSelectPatterns), and then a peeled block's
/// contraction loses the mask whose lanes only its masked write would have
/// read (populateUnmaskContractionPatterns).
LogicalResult simplifyVectorOps(func::FuncOp func);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_VECTORCLEANUP_H
