//===- AttentionStrategy.h - The tile sizes of each attention ---*- C++ -*-===//
//
// The fused attention's part of the strategy step (mha-strategy,
// Strategy.cpp): for each `mha.sdpa`, the query tile, key block and number
// of key ranges, from the target (Strategy.h) where the options leave them
// to it, recorded on the op as `mha.tiles` (`#mha.attention_tiles`, as IREE
// records a `lowering_config`). `mha-tile-attention` and mha.sdpa's
// `TilingInterface` read them there.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_STRATEGY_ATTENTIONSTRATEGY_H
#define MHA_COMPILER_STRATEGY_ATTENTIONSTRATEGY_H

#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/Strategy.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"

#include <cstdint>

namespace mlir {
namespace mha {

/// What the options ask of the strategy.
struct AttentionTileRequest {
  /// Queries per parallel tile and keys per block; 0 takes the target's
  /// (CodegenStrategy::attentionQueryTile and attentionKeyTile).
  int64_t queryTile = 0, keyTile = 0;
  /// The most key ranges run in parallel when the query tiles are fewer.
  int64_t keySplits = kDefaultKeySplits;
};

/// The most key ranges `op` may be split into with blocks of `keyTile`
/// keys: one range per key block where S is static, at most as many as
/// keep its partial outputs' size ([P, B, H, T, dv] f32) in int64; 1 where
/// it cannot be split (f32 only; top-left causal attention without a cache,
/// whose queries see only their own prefix; `?` batch or queries, whose
/// count of query tiles only the data knows).
int64_t getMaxKeySplits(SdpaOp op, int64_t keyTile);

/// The tiles of `op` that `request` asks for, its zeros resolved with the
/// sizes of `target` (Strategy.h):
/// - key ranges: where B·H·⌈T/BQ⌉ query tiles are fewer than
///   `request.keySplits`, that many (at most getMaxKeySplits), else 1;
/// - with causal and one key range, the key block is cut down to a divisor
///   of the query tile, so that every causal block is whole (static shapes,
///   vectorized): each ends at or before a tile's start, or is its diagonal
///   block.
AttentionTilesAttr chooseAttentionTiles(SdpaOp op,
                                        const AttentionTileRequest &request,
                                        const TargetDescription &target);

/// The tiles recorded on `op` (`mha.tiles`), else those the strategy
/// chooses for the default description (an AVX-512 core, never this
/// machine's) with the default request.
AttentionTilesAttr getAttentionTiles(SdpaOp op);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_STRATEGY_ATTENTIONSTRATEGY_H
