//===- GroupedQueries.h - A decoding step's query heads as rows -*- C++ -*-===//
//
// With grouped-query attention (H query heads, Hkv < H key/value heads) and
// one query per sequence (a decoding step), the G = H / Hkv query heads that
// read one key/value head are G rows of one tile: its keys and values are
// read once for the G of them, and Q·Kᵀ and P·V are register-blocked
// products of G rows (FMAs along the keys), where a tile per query head
// reads them G times and sums each key's dk products on its own.
//
// The query [B, H, 1, dk] is [B, Hkv, G, dk] without moving anything (the
// heads of a group are adjacent and T = 1), and so is the result. The rows
// of such a tile share one position (SdpaTiling::sharedQueryPosition): with
// a cache, row i sees the keys up to positions[b], not positions[b] + i.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_GROUPEDQUERIES_H
#define MHA_COMPILER_ATTENTION_GROUPEDQUERIES_H

#include "dialects/MhaOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mha {

/// Whether `op`'s query heads can be grouped: H > Hkv with at least 2
/// key/value heads (so that a step still has 2 tiles per sequence for the
/// cores), no mask, no score step but a window and a softcap (which every
/// head shares), and one query per sequence: T = 1 without `causal`, or
/// T `?` with `positions` (one token at run time is a decoding step; more
/// are a prefill, which keeps a tile per head). f32 keys or a bf16 cache's.
bool canGroupQueryHeads(SdpaOp op);

/// `op` on the query heads of each key/value head as rows: an mha.sdpa of
/// query [B, Hkv, G, dk] (`query`, [B, H, 1, dk], reshaped) on `op`'s keys,
/// values, positions, causal flag, scale and attributes, made at the
/// rewriter's insertion point; and its result reshaped to [B, H, 1, dv].
std::pair<SdpaOp, Value> buildGroupedSdpa(RewriterBase &rewriter, SdpaOp op,
                                          Value query);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_ATTENTION_GROUPEDQUERIES_H
