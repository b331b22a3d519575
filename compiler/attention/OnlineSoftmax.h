//===- OnlineSoftmax.h - Flash attention of one query tile ------*- C++ -*-===//
//
// Builds, in linalg on tensors, the attention of one query tile of one head
// against its keys one block at a time: the running row maximum m, the
// running sum l and the unnormalized output acc are carried from block to
// block (online softmax), so that no more than one [tq, tk] block of scores
// ever exists. The update by a range of keys is `mha.online_attention`,
// whose key loop is scf::tileUsingSCF's (its TilingInterface, attached
// here) and whose blocks decompose into linalg ops (its
// AggregatedOpInterface). `mha-tile-attention` calls it inside its parallel
// tile loop.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_ONLINESOFTMAX_H
#define MHA_COMPILER_ATTENTION_ONLINESOFTMAX_H

#include "compiler/strategy/Strategy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir {
namespace mha {

class OnlineAttentionOp;

/// One query tile of one head: the operands the online softmax reads.
struct AttentionTile {
  /// The tile's queries, [tq, dk].
  Value query;
  /// The keys and values of the key/value head the tile reads, [S, dk] and
  /// [S, dv]; blocks of them are sliced per iteration, never copied. f32,
  /// or bf16 (a bf16 cache): each block is then widened in the tile.
  Value key, value;
  /// With i8 keys or values (the codes of an int8 cache), their scales, one
  /// per key, [S]: each block is dequantized in the tile. Null otherwise.
  Value keyScales, valueScales;
  /// A paged cache's (mha.paged_view): the pages of the key/value head,
  /// [N, P, dk] and [N, P, dv], and the sequence's row of the block table
  /// [M] (i32). Key j is row j mod P of page pageTable[j / P]: the key
  /// loop then runs over pages, and each block is sliced from its page
  /// (`key` and `value` are one page's view, [P, d], for the shapes).
  /// Null otherwise. With an int8 paged cache, the pages of the scales too,
  /// [N, P] (`keyScales` and `valueScales` are then one page's, [P]).
  Value keyPages, valuePages, pageTable, keyScalePages, valueScalePages;
  int64_t pageSize = 0;
  /// The same keys transposed, [dk, S], when the caller made them once for
  /// all tiles of the head; null: each key block is transposed itself.
  Value keyT;
  /// Whether `keyT` and `value` hold the keys and values in bf16 hi and lo
  /// pairs (SdpaTiling::pack, mha.online_attention's `packed`), for Q·Kᵀ
  /// and P·V on AMX.
  bool packed = false;
  /// Whether every row is one query at queryStart (+ causalOffset): a
  /// decoding step's query heads as the rows (mha.online_attention's
  /// `shared_position`).
  bool sharedPosition = false;
  /// The tile's rows of the boolean mask, [tq, S]; null without a mask.
  Value maskRows;
  /// Position of the tile's first query in the sequence (for causality).
  Value queryStart;
  /// The offset of the causal diagonal (query i sees keys j <= i + offset):
  /// S - T when bottom-right aligned; null for top-left (offset 0).
  Value causalOffset;
  /// tq (static when every tile is full).
  OpFoldResult numQueries;
  /// The factor applied to the scores.
  double scale;
  /// The score steps of mha.sdpa for this tile: its rows of the score bias,
  /// [tq or 1, S] (one row for every query where the bias broadcasts over
  /// them), the head's ALiBi slope and sink (f32), the sliding window
  /// (index) and the softcap; null (none) where the attention has no such
  /// step.
  Value biasRows, slope, sink, window;
  std::optional<double> softcap;
  /// mha.sdpa's `score_mod` region (null without one), and the batch
  /// element and head of the tile that its arguments receive.
  Region *scoreMod = nullptr;
  Value batchIndex, headIndex;
  /// Whether the scores are modified (softcap, ALiBi, bias or the region):
  /// the state is then over steps(s·scale), its exponentials with a scale
  /// of 1. mha.online_attention carries them all as one `score_mod` region
  /// (buildTileScoreMod).
  bool modifiesScores() const {
    return biasRows || slope || softcap || scoreMod;
  }

  /// A tile of one (static) query without a transposed view of its keys:
  /// the scores are dot products along each key row.
  bool isOneQuery() const;
};

/// The tensors carried from one key block to the next.
struct OnlineSoftmaxState {
  /// Running row maximum m [tq], running row sum l [tq], and the running
  /// unnormalized output acc [tq, dv], all f32.
  Value max, sum, acc;
  /// Per-thread scratch of the largest block's size ([BQ, BK] scores,
  /// [dk, BK] transposed keys, [BQ] new maximum and correction): carried
  /// through the loop so that they are allocated once per tile, not once per
  /// key block.
  Value scores, keysT, newMax, correction;
  /// [BK, max(dk, dv)] f32: a bf16 block widened (the keys, where several
  /// queries read them transposed, then the values); null with f32 keys
  /// and values (then not carried).
  Value widened;

  /// The values in a fixed order (the destinations of
  /// `mha.online_attention`, and so the key loop's carried values);
  /// `widened` last, where there is one.
  SmallVector<Value> asRange() const;
  /// The inverse of `asRange`.
  static OnlineSoftmaxState fromRange(ValueRange values);
};

/// Builds the online softmax of one `AttentionTile` at the builder's
/// insertion point.
class OnlineSoftmaxBuilder {
public:
  /// `queryTile` (BQ) and `keyTile` (BK) bound tq and every block's size.
  OnlineSoftmaxBuilder(OpBuilder &builder, Location loc,
                       const AttentionTile &tile, int64_t queryTile,
                       int64_t keyTile);

  /// m = -inf, l = 0, acc = 0 (acc written into `accInit`, [tq, dv]; m and
  /// l into `maxInit` and `sumInit` ([tq]) when given, else into new
  /// tensors), and the scratch tensors.
  OnlineSoftmaxState initialize(Value accInit, Value maxInit = {},
                                Value sumInit = {});

  /// The update of the state by the keys [begin, end): an
  /// `mha.online_attention` whose key loop is scf::tileUsingSCF's (an
  /// scf.for over blocks of BK keys, or `blockKeys`), each block decomposed
  /// (decomposeOnlineAttention). `causal` applies key <= query (+ the tile's
  /// causal offset) inside the blocks (only needed for blocks that cross the
  /// diagonal). The short last block of a range that BK may not divide is
  /// peeled off, so the other blocks have static shapes; `fullBlocks` says
  /// that the range is whole blocks, so there is no short block to peel.
  OnlineSoftmaxState iterateKeyBlocks(const OnlineSoftmaxState &state,
                                      OpFoldResult begin, OpFoldResult end,
                                      bool causal, bool fullBlocks,
                                      int64_t blockKeys = 0);

  /// The blocks of [begin, end) where `end - begin` is only known at run
  /// time: as many whole blocks of BK keys as fit, then whole blocks of
  /// `tailKeys` keys, then the rest (< tailKeys keys): the key loop of BK
  /// with its last block peeled, that block tiled again by `tailKeys` and
  /// peeled (tileKeys). The first two loops have static shapes (so they are
  /// vectorized); only the few keys of the last have dynamic ones. Decoding
  /// needs it: a sequence's keys end at its own length, which no tile size
  /// divides.
  OnlineSoftmaxState iterateKeyRange(const OnlineSoftmaxState &state,
                                     OpFoldResult begin, OpFoldResult end,
                                     bool causal);

  /// Keys per block of the tail of `iterateKeyRange`: the function's
  /// recorded tail_keys (mha-strategy: one vector of f32, so that no block
  /// but the last is shorter than a vector), 0 (no such blocks) without a
  /// record, which mha-tile-attention refuses.
  int64_t tailKeys = 0;

  /// out = l == 0 ? 0 : acc / l, in place of acc: a row that attended no
  /// key gives exactly 0.
  Value finalize(const OnlineSoftmaxState &state);

private:
  /// The `mha.online_attention` of the state by the `count` keys from
  /// `begin`, whose rows of `tile.key` and `tile.value` start at `rowBegin`
  /// (`begin` where null; a page's first row for a paged tile).
  OnlineAttentionOp createUpdate(RewriterBase &rewriter,
                                 const OnlineSoftmaxState &state,
                                 OpFoldResult begin, OpFoldResult count,
                                 bool causal, OpFoldResult rowBegin = {});

  /// The update by [begin, end) of a paged tile: a loop over the pages the
  /// range touches, each page's part of it an update of its own that reads
  /// its keys and values from the page (so no block straddles two pages),
  /// tiled by `tileKeys`.
  OnlineSoftmaxState updateByPages(const OnlineSoftmaxState &state,
                                   OpFoldResult begin, OpFoldResult end,
                                   bool causal, ArrayRef<int64_t> blockSizes,
                                   bool fullBlocks);

  /// The update by [begin, end), tiled by `tileKeys`.
  OnlineSoftmaxState updateByKeys(const OnlineSoftmaxState &state,
                                  OpFoldResult begin, OpFoldResult end,
                                  bool causal, ArrayRef<int64_t> blockSizes,
                                  bool fullBlocks);

  /// Where the ops go, and what they compute on.
  OpBuilder &builder;
  Location loc;
  AttentionTile tile;
  /// BQ and BK.
  int64_t queryTile, keyTile;
  /// dk and dv.
  int64_t keyDim, valueDim;
};

/// Tiles the keys of `op` (scf::tileUsingSCF, FullReduction: an scf.for
/// that carries the state) by `blockSizes.front()` keys; the last, short
/// block is peeled off (scf::peelForLoopAndSimplifyBounds), so that every
/// other block has static shapes, and tiled again by the next block size,
/// and so on; without block sizes, `op` is one block. `fullBlocks`: the
/// caller knows that the keys are whole blocks of the first size, so the
/// short block is dropped. Every block is then decomposed. `bound`, where
/// not 0, is a size that the keys of `op` are known to be below (the peeled
/// block of a loop of blocks of that size). Returns the final state (in
/// `op`'s result order), which replaces `op`.
FailureOr<SmallVector<Value>> tileKeys(RewriterBase &rewriter,
                                       OnlineAttentionOp op,
                                       ArrayRef<int64_t> blockSizes,
                                       bool fullBlocks, int64_t bound = 0);

/// One block of `mha.online_attention` as linalg ops on tensors (the
/// online-softmax update; their bodies AttentionMath's), written into its
/// destinations: the values that replace its results.
FailureOr<SmallVector<Value>> decomposeOnlineAttention(OpBuilder &builder,
                                                       OnlineAttentionOp op);

/// Attaches `TilingInterface` (one reduction loop, the keys) and linalg's
/// `AggregatedOpInterface` (decomposeOnlineAttention) to
/// `mha.online_attention`.
void registerOnlineAttentionTilingInterfaceExternalModels(
    DialectRegistry &registry);

/// out = l == 0 ? 0 : acc / l, in place of `acc` ([rows..., dv]) with `sum`
/// l ([rows...]): a row that attended no key gives exactly 0. The end of the
/// online softmax (finalize) and of the key-split merge.
Value buildNormalizedRows(OpBuilder &builder, Location loc, Value sum,
                          Value acc);

/// Merges the states of P disjoint key ranges of the same rows into the
/// attention output: with M = max_p m_p and w_p = m_p == -inf ? 0 :
/// exp((m_p - M)·scale) (the maxima are raw scores; `modifiedScores`: the
/// score steps' modified scores, scale 1), out = Σ_p w_p·acc_p / (Σ_p
/// w_p·l_p + the sink's weight, where `sinks` [H] is given: rows [B, H, T]),
/// and 0 where that sum is 0. `accParts` is [P, rows..., dv], `maxParts` and
/// `sumParts` [P, rows...], `init` the result [rows..., dv]. The splits are
/// added in order, so the result does not depend on which thread computed
/// which; a sink is added once.
Value combineKeySplits(OpBuilder &builder, Location loc, Value accParts,
                       Value maxParts, Value sumParts, Value init, double scale,
                       bool modifiedScores = false, Value sinks = {});

/// l + the sink's weight e^(sink - m) for the rows of `max` and `sum`
/// ([rows...]), in the base and scale of the state's exponentials
/// (`modifiedScores`: the score steps' scale 1; else the raw scores'
/// `scale`). `sinks` is one f32 for every row (`sinkMap` null), or a tensor
/// that `sinkMap` reads over the rows' loops. A row that attended nothing
/// (m = -inf) gets an infinite denominator, so that its accumulator of 0
/// normalizes to 0.
Value addSinkWeights(OpBuilder &builder, Location loc, Value max, Value sum,
                     Value sinks, AffineMap sinkMap, double scale,
                     bool modifiedScores);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_ATTENTION_ONLINESOFTMAX_H
