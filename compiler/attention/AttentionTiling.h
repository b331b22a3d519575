//===- AttentionTiling.h - An mha.sdpa cut into query tiles -----*- C++ -*-===//
//
// What the patterns that tile `mha.sdpa` share: its operands and sizes
// (static where the types say so), the query tiles, and the slices that one
// query tile of one head reads.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_ATTENTIONTILING_H
#define MHA_COMPILER_ATTENTION_ATTENTIONTILING_H

#include "compiler/attention/OnlineSoftmax.h"
#include "dialects/MhaOnlineAttention.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mha {

/// An f32 `mha.sdpa` cut into query tiles of `queryTile` rows and key blocks
/// of `keyTile` keys.
struct SdpaTiling {
  /// Reads the operands and sizes of `op` (creating `tensor.dim` ops for the
  /// dynamic ones at the builder's insertion point).
  SdpaTiling(OpBuilder &builder, SdpaOp op, int64_t queryTile, int64_t keyTile);

  /// The same for the queries of `op`, one key split of an mha.sdpa: its
  /// key blocks are the op's `key_block`.
  SdpaTiling(OpBuilder &builder, SdpaSplitOp op, int64_t queryTile);

  /// The bf16 tensor that `operand` widens (`arith.extf`), else null: the
  /// key and value that the tiles read (and widen per key block) instead of
  /// the op's f32 operands.
  static Value getBF16Source(Value operand);

  /// The codes and scales that `operand` dequantizes (`mha.dequantize`),
  /// else nulls: the key or value that the tiles read (and dequantize per
  /// key block) instead of the op's f32 operand.
  static std::pair<Value, Value> getInt8Source(Value operand);

  /// The `mha.paged_view` that `operand` is (the pool and its table), else
  /// null: the tiles read each key block from its page instead.
  static PagedViewOp getPagedSource(Value operand);

  /// Erases the unused `arith.extf` of the bf16 key and value once `op` is
  /// replaced: the tiles read the bf16 sources, and a dead widening of a
  /// whole cache is not left to later passes. Reads only `key` and `value`,
  /// so it may run after `op` is erased.
  void eraseDeadWidenings(RewriterBase &rewriter) const;

  /// Replaces `op` by `replacements`, the results of `forall`, its tiles
  /// (scf::tileUsingSCF), after erasing what tileUsingSCF computed in the
  /// loop that the tiles did not use; then eraseDeadWidenings.
  void replaceByTiles(RewriterBase &rewriter, SdpaOp op, scf::ForallOp forall,
                      ValueRange replacements) const;

  /// ⌈T / BQ⌉.
  OpFoldResult getNumQueryTiles(OpBuilder &builder) const;

  /// The rows of the tile that starts at `queryStart`: BQ, or T when T is
  /// static and at most BQ, or min(BQ, T - queryStart).
  OpFoldResult getTileRows(OpBuilder &builder, OpFoldResult queryStart) const;

  /// True when every key block in [0, S) has exactly BK keys; `causalBounds`
  /// says that the key loops also stop at the causal bounds of the tiles
  /// (query tile ends, moved by S - T when bottom-right aligned).
  bool hasFullKeyBlocks(bool causalBounds) const;

  /// The operands of query tile [queryStart, queryStart + rows) of head `h`
  /// of batch element `b`: views of the query, its key/value head and its
  /// rows of the mask.
  AttentionTile sliceTile(OpBuilder &builder, Value b, Value h,
                          OpFoldResult queryStart, OpFoldResult rows) const;

  /// Kᵀ of every key/value head, [B, Hkv, dk, S]: a `linalg.transpose`
  /// tiled into an `scf.forall` over (batch, key/value head) at the
  /// rewriter's insertion point; `sliceTile` then hands each tile its head's
  /// [dk, S] view. Once per head instead of once per query tile and key
  /// block: every query tile of a head needs the same transposed keys.
  LogicalResult transposeKeys(RewriterBase &rewriter);

  /// Whether the keys and values can be packed for AMX (pack): static
  /// query tiles of whole 16-row tiles, keys, dk and dv in whole 16s, f32
  /// keys and values (no cache), and bf16 parts of Q and P that fit a stack
  /// scratch (mha-amx-split).
  bool canPack() const;

  /// The keys and values of every head in bf16 hi and lo pairs, AMX's B
  /// operands of Q·Kᵀ and P·V (mha.online_attention's `packed` says the
  /// layout; mha-amx-split lowers the products): Kᵀ [B, Hkv, dk, S] as
  /// transposeKeys makes it, then in pairs of rows, and V [B, Hkv, S, dv]
  /// in pairs of keys, each an `scf.forall` over (batch, key/value head).
  /// Replaces `keysT` and `value`, sets `packed`.
  LogicalResult pack(RewriterBase &rewriter);

  /// The fused attention of query tile [queryStart, queryStart + tileRows)
  /// of head `h` of batch element `b`, [tileRows, dv]: its operands sliced
  /// (`sliceTile`), the key loops of the online softmax (OnlineSoftmax.h)
  /// over the keys the tile may see (with `causal`, up to the tile's last
  /// query's diagonal; only blocks that cross the diagonal test it), and
  /// the normalization. The accumulator is `out`'s slice when `out` (the
  /// result's destination, [B, H, T, dv]) is given, else a new tensor.
  Value buildTile(OpBuilder &builder, Value b, Value h, OpFoldResult queryStart,
                  OpFoldResult tileRows, Value out) const;

  /// The unnormalized state (acc, m, l) of query tile [queryStart,
  /// queryStart + rows) of head `h` of batch element `b` over key split
  /// `split` of `splits` (mha.sdpa_split's tile), computed in `acc` [rows,
  /// dv], `max` and `sum` [rows]. The split's range is whole key blocks
  /// (each sequence's own with `positions`; SplitKeys.cpp, which defines
  /// it).
  SmallVector<Value> buildSplitTile(OpBuilder &builder, Value split,
                                    int64_t splits, Value b, Value h,
                                    OpFoldResult queryStart, OpFoldResult rows,
                                    Value acc, Value max, Value sum) const;

  /// The key loops of a query tile of `rows` queries from `queryStart` of
  /// a cache (`positions`): query i sees keys j <= position + queryStart +
  /// i, never past the tile's last query's diagonal (so the unused capacity
  /// of the cache is never read); whole blocks below the first query's
  /// diagonal need no test.
  OnlineSoftmaxState
  iteratePositionKeys(OpBuilder &builder, OnlineSoftmaxBuilder &softmax,
                      OnlineSoftmaxState state, OpFoldResult queryStart,
                      OpFoldResult rows, Value position) const;

  /// The key loops of a causal query tile (no positions): up to the tile's
  /// last query, the blocks before its first query without the test.
  OnlineSoftmaxState iterateCausalKeys(OpBuilder &builder,
                                       OnlineSoftmaxBuilder &softmax,
                                       OnlineSoftmaxState state,
                                       OpFoldResult queryStart,
                                       OpFoldResult rows) const;

  /// Where the key blocks after `bound` start with a window whose blocks
  /// begin at `windowBegin`: the later of the two (`bound` itself without
  /// one).
  OpFoldResult laterOf(OpBuilder &builder, OpFoldResult bound,
                       OpFoldResult windowBegin) const;

  /// The first key block that the query tile whose first query sits at
  /// `diagonal` (its position) may see through the window: the block of
  /// key diagonal - W + 1 (0 without a window). Blocks before it are never
  /// visited.
  OpFoldResult getWindowBegin(OpBuilder &builder, OpFoldResult diagonal) const;

  /// positions[b] as an index (`tensor.extract` at the builder's insertion
  /// point); requires `positions`.
  Value loadPosition(OpBuilder &builder, Value b) const;

  /// The end of the keys that sequence `b` may see with `positions`:
  /// clamp(position + T, 0, S) (queries of a cache never see past the
  /// last new token, and a wrong position never reads outside the keys).
  OpFoldResult getPositionKeyEnd(OpBuilder &builder, Value position) const;

  /// An empty tensor of `type`, sized by `sizes` where `type` is dynamic.
  Value createEmpty(OpBuilder &builder, RankedTensorType type,
                    ArrayRef<OpFoldResult> sizes) const;

  /// `source[offsets][sizes]` with unit strides, rank-reduced to its
  /// `keptRank` trailing dimensions (the leading sizes are 1).
  Value sliceTrailing(OpBuilder &builder, Value source,
                      ArrayRef<OpFoldResult> offsets,
                      ArrayRef<OpFoldResult> sizes, unsigned keptRank) const;

  /// `affine.apply` of `expr`, folded where the operands are constants.
  OpFoldResult apply(OpBuilder &builder, AffineExpr expr,
                     ArrayRef<OpFoldResult> operands) const;

  /// Where the ops that tile it go.
  Location loc;
  /// Its operands; `mask` and `positions` are null without them. `key` and
  /// `value` are bf16 where the op's are widened from bf16 (getBF16Source).
  /// `keysT`: Kᵀ once `transposeKeys` ran, else null. `key` and `value`
  /// are the i8 codes where the op's are dequantized from an int8 cache
  /// (getInt8Source), `keyScales` and `valueScales` their scales
  /// [B, Hkv, S] (null otherwise).
  Value query, key, value, mask, positions, keysT, keyScales, valueScales;
  /// A paged cache's pools [N, Hkv, P, d] and block table [B, M] where the
  /// key and value are its `mha.paged_view`s (getPagedSource; `key` and
  /// `value` stay the views, for their sizes); null otherwise.
  Value keyPool, valuePool, blockTable;
  /// An int8 paged cache's pools of scales [N, Hkv, P] (`keyScales` and
  /// `valueScales` stay their views); null otherwise.
  Value keyScalePool, valueScalePool;
  int64_t pageSize = 0;
  /// Whether `keysT` and `value` are packed (pack).
  bool packed = false;
  /// Whether every query row sits at the same position: the query heads of
  /// one key/value head as the rows of one decoding step (GroupedQueries.h).
  /// With `positions`, row i then sees keys j <= positions[b], not
  /// positions[b] + i.
  bool sharedQueryPosition = false;
  /// Whether a tile of `?` rows with `positions` has a branch of its own
  /// for one row (buildTile): off where a grouped op takes the decoding
  /// steps (GroupedQueries.h), so that the code is not there twice.
  bool oneQueryBranch = true;
  /// Its `causal`, `causal_bottom_right` and effective scale.
  bool causal, causalBottomRight;
  double scale;
  /// Its score steps (null or none where absent): the bias
  /// [B or 1, H or 1, T or 1, S], ALiBi slopes and sinks [H], the window and
  /// the softcap.
  Value attnBias, alibiSlopes, sinks;
  std::optional<int64_t> window;
  std::optional<double> softcap;
  /// Its `score_mod` region; null without one.
  Region *scoreMod = nullptr;
  /// The offset of the causal diagonal, S - T, when bottom-right aligned
  /// (a constant when T and S are static); null otherwise (offset 0).
  Value causalOffset;
  /// H, Hkv, dk and dv (static).
  int64_t heads, kvHeads, keyDim, valueDim;
  /// B, T and S.
  OpFoldResult batch, numQueries, numKeys;
  /// BQ and BK.
  int64_t queryTile, keyTile;

private:
  /// The head counts and dimensions, B, T, S, the causal offset and the
  /// mask's broadcast, from the operands.
  void readSizes(OpBuilder &builder);

  /// Reads the key and value through their `mha.paged_view`s, where both
  /// are views of one table (getPagedSource), and makes the key blocks
  /// divide the page.
  void readPages();

  /// transposeKeys, or Kᵀ in pairs of rows where `packedKeys` (pack).
  LogicalResult makeKeysT(RewriterBase &rewriter, bool packedKeys);

  /// Whether the mask's batch, known at run time only, is 1 (broadcast);
  /// null when the type says it.
  Value maskBroadcasts;
};

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_ATTENTION_ATTENTIONTILING_H
