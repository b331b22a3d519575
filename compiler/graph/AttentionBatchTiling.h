//===- AttentionBatchTiling.h - mha.attention tiled over its batch -*- C++ -*-//
//
// `mha.attention` implements MLIR's `TilingInterface` through an external
// model (as mha.sdpa and upstream's linalg ops do), over one dimension: the
// batch. Sequences are independent, so a tile of b sequences is the same
// layer on the slices of its batch operands (the query, kv, and the mask
// unless it is one row shared by the batch), with the weights whole.
// `scf::tileUsingSCF` then runs a whole layer chunk by chunk
// (mha-batch-chunks). The tokens are not a dimension of this domain: every
// query of a sequence reads every key of it through the projections, so a tile
// of queries is not a layer of its own.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_GRAPH_ATTENTIONBATCHTILING_H
#define MHA_COMPILER_GRAPH_ATTENTIONBATCHTILING_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace mha {

/// Attaches `TilingInterface` (the batch) and
/// `ReifyRankedShapedTypeOpInterface` to `mha.attention`.
void registerAttentionBatchTilingExternalModels(DialectRegistry &registry);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_GRAPH_ATTENTIONBATCHTILING_H
