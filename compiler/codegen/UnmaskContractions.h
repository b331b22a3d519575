//===- UnmaskContractions.h - Contractions without unread masks -*- C++ -*-===//
//
// linalg::vectorize with vector sizes masks every op of a short block, the
// vector.contract of a matmul's peeled columns included. Its lowering keeps
// that mask on each FMA, and the masks of the contraction and of its loads
// are different values to LLVM 22, which has 8 mask registers for them:
// a `?` block of 64 columns took 8 compares and 4 mask merges per reduction
// step, inside the loop. Where the contraction's masked-off lanes are never
// read (they end in writes masked at least as tightly, and its reduction
// dimensions are not masked) the mask changes nothing that is observed.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_UNMASKCONTRACTIONS_H
#define MHA_COMPILER_CODEGEN_UNMASKCONTRACTIONS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// `vector.mask %m { vector.contract }` becomes the plain contraction where
/// %m masks none of the contraction's reduction dimensions and every lane
/// that %m masks off is discarded: the result (carried through `scf.for`
/// iterations, or accumulated by contractions under an equal mask) reaches
/// only transfer writes whose masks keep no lane that %m drops.
void populateUnmaskContractionPatterns(RewritePatternSet &patterns);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_UNMASKCONTRACTIONS_H
