//===- PanelResults.h - Projection results in panels, without serial passes
//-===//
//
// mha-weight-layouts stores the output projection's weight in panels of P
// columns and reads its result as [B, T, N/P, P]: an expand_shape of the
// result's initial value (the bias broadcast), and a collapse_shape back.
// Two upstream mechanisms stop at those reshapes, and each left a pass
// over the whole result on one thread, before or after the parallel tiles:
//
// - tileConsumerAndFuseProducersUsingSCF does not fuse the bias broadcast
//   through the expand_shape into the tiles: the broadcast filled the result
//   first;
// - eliminate-empty-tensors follows only same-typed values from an
//   `insert_slice` back to its `tensor.empty`: a chunk of the batch
//   (mha-batch-chunks) computed its result into a buffer of its own and
//   copied it into the layer's.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_PANELRESULTS_H
#define MHA_COMPILER_CODEGEN_PANELRESULTS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Patterns, for before the projections are tiled (mha-tile-projections):
/// - an expand_shape of a projection's bias broadcast becomes a broadcast of
///   the bias in panels (upstream's fold by expansion, then named a
///   `linalg.broadcast` again), which the tiles fuse;
/// - `insert_slice (collapse_shape %x) into %dest`, where the slice covers
///   whole each dimension that the collapse merges, becomes `collapse_shape
///   (insert_slice %x into (expand_shape %dest))`, the expand_shape placed
///   right after %dest is defined, so that %x's tensor.empty can become a
///   slice of it (eliminate-empty-tensors).
void populatePanelResultPatterns(RewritePatternSet &patterns);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_PANELRESULTS_H
