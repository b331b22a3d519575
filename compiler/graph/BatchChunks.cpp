//===- BatchChunks.cpp - A layer over its batch in chunks that stay in cache -//
//
// Each stage of a layer (the Q|K|V projection, attention, the output
// projection) runs over the whole batch before the next one starts, in
// parallel within the stage. With B sequences the intermediates between the
// stages (Q, K, V and the heads' output, about 6·T·D floats per sequence)
// are B times those of one sequence: past the caches, each stage reads what
// the one before wrote from memory. This pass runs the whole layer on a
// chunk of sequences at a time, an scf.for from scf::tileUsingSCF over
// mha.attention's batch (AttentionBatchTiling.h), so that a chunk's
// intermediates stay in L2 from one stage to the next; the stages are still
// parallel inside each chunk (heads, query tiles, projection tiles).
//
// The chunk is as many sequences as fit their intermediates in `cache-bytes`,
// but at least enough for `min-rows` query rows: short sequences in small
// chunks would run each stage's parallel loops on a few tiles, many times
// over, and pay each chunk's fixed costs (the fork-joins, the keys' and
// values' packing per head) for little work. For a static batch it is a
// divisor, so that every chunk has the same static shape; a `?` batch takes
// chunks of that size and a last one of the rest, and with `?` lengths computes
// the chunk at run time (a static batch with `?` lengths stays whole: its
// chunks would have a `?` batch). Where the whole batch fits, the op is left as
// it is.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHABATCHCHUNKS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Columns of a projection weight: `[D, H·d]`, or `[H, D/H, d]` split first.
int64_t weightColumns(Value weight) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(weight.getType()).getShape();
  return shape.size() == 3 ? shape[0] * shape[2] : shape[1];
}

/// Floats that one sequence of `op` keeps between the layer's stages:
/// `perQuery` per query token (its input, Q, the heads' output and y) and
/// `perKey` per key token (K, V and a separate kv input).
struct SequenceFootprint {
  int64_t perQuery, perKey;

  explicit SequenceFootprint(AttentionOp op) {
    RankedTensorType wo = op.getWO().getType();
    perQuery = op.getQuery().getType().getDimSize(2) +
               weightColumns(op.getWQ()) + wo.getDimSize(0) + wo.getDimSize(1);
    perKey = weightColumns(op.getWK()) + weightColumns(op.getWV());
    if (Value kv = op.getKv())
      perKey += cast<RankedTensorType>(kv.getType()).getDimSize(2);
  }
};

/// True if the query and key lengths of `op` are static.
bool hasStaticLengths(AttentionOp op) {
  Value kv = op.getKv() ? op.getKv() : op.getQuery();
  return !op.getQuery().getType().isDynamicDim(1) &&
         !cast<RankedTensorType>(kv.getType()).isDynamicDim(1);
}

/// The smallest divisor of `batch` that is at least `limit` (at most
/// `batch`).
int64_t smallestDivisorAtLeast(int64_t batch, int64_t limit) {
  for (int64_t chunk = std::max<int64_t>(1, limit); chunk < batch; ++chunk)
    if (batch % chunk == 0)
      return chunk;
  return batch;
}

/// The largest divisor of `batch` that is at most `limit` (at least 1).
int64_t largestDivisorAtMost(int64_t batch, int64_t limit) {
  for (int64_t chunk = std::min(batch, limit); chunk > 1; --chunk)
    if (batch % chunk == 0)
      return chunk;
  return 1;
}

struct MhaBatchChunksPass : mha::impl::MhaBatchChunksBase<MhaBatchChunksPass> {
  using MhaBatchChunksBase::MhaBatchChunksBase;

  /// Bytes and rows of a chunk: the options where set, else the record
  /// (mha-strategy).
  int64_t budgetBytes = 0, fewestRows = 0;

  void runOnOperation() override {
    if (chunk == 0)
      return;
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    // A chunk given in sequences needs no sizes.
    if (ops.empty() || chunk > 0)
      return tileAll(ops);
    FailureOr<int64_t> bytes = getOptionOrRecorded(
        getOperation(), "mha-batch-chunks", std::max<int64_t>(cacheBytes, 0),
        "cache-bytes",
        [](CodegenSizesAttr sizes) { return sizes.getChunkBytes(); });
    if (failed(bytes))
      return signalPassFailure();
    FailureOr<int64_t> rows = getOptionOrRecorded(
        getOperation(), "mha-batch-chunks", std::max<int64_t>(minRows, 0),
        "min-rows",
        [](CodegenSizesAttr sizes) { return sizes.getChunkRows(); });
    if (failed(rows))
      return signalPassFailure();
    budgetBytes = *bytes;
    fewestRows = *rows;
    tileAll(ops);
  }

  void tileAll(ArrayRef<AttentionOp> ops) {
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      if (failed(tileOverBatch(rewriter, op)))
        return signalPassFailure();
  }

  /// Tiles `op` over its batch where chunks fit the cache better than the
  /// whole batch; leaves it otherwise.
  LogicalResult tileOverBatch(RewriterBase &rewriter, AttentionOp op) {
    int64_t batch = op.getQuery().getType().getDimSize(0);
    // A static batch with `?` lengths: its chunks would have a `?` batch.
    if (!ShapedType::isDynamic(batch) && chunk <= 0 && !hasStaticLengths(op))
      return success();
    rewriter.setInsertionPoint(op);
    auto [chunkSize, fewest] = getChunk(rewriter, op);
    std::optional<int64_t> staticChunk = getConstantIntValue(chunkSize);
    if (!ShapedType::isDynamic(batch)) {
      // A divisor of the batch, so that every chunk has one static shape:
      // the largest within the chunk, or else the smallest with enough rows.
      int64_t divisor = largestDivisorAtMost(batch, *staticChunk);
      if (divisor < fewest)
        divisor = smallestDivisorAtLeast(batch, fewest);
      if (divisor >= batch)
        return success();
      chunkSize = rewriter.getIndexAttr(divisor);
    }
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
        .setTileSizes({chunkSize});
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return op.emitOpError("could not be tiled over its batch");
    rewriter.replaceOp(op, tiled->replacements);
    return success();
  }

  /// Sequences per chunk: `chunk` when positive; else as many as fit
  /// their intermediates (4-byte floats) in cache-bytes, and at least the
  /// fewest that make `min-rows` query rows (and 1), computed at run time
  /// where the sequence lengths are `?`. With that fewest count (0 when
  /// not static).
  std::pair<OpFoldResult, int64_t> getChunk(OpBuilder &b, AttentionOp op) {
    if (chunk > 0)
      return {b.getIndexAttr(chunk), 1};
    SequenceFootprint footprint(op);
    int64_t budget = std::max<int64_t>(1, budgetBytes / 4);
    int64_t rows = std::max<int64_t>(1, fewestRows);
    int64_t queries = op.getQuery().getType().getDimSize(1);
    Value kv = op.getKv() ? op.getKv() : op.getQuery();
    int64_t keys = cast<RankedTensorType>(kv.getType()).getDimSize(1);
    if (!ShapedType::isDynamic(queries) && !ShapedType::isDynamic(keys)) {
      int64_t floats = std::max<int64_t>(1, queries * footprint.perQuery +
                                                keys * footprint.perKey);
      int64_t fewest = llvm::divideCeil(rows, std::max<int64_t>(1, queries));
      return {b.getIndexAttr(std::max({int64_t(1), budget / floats, fewest})),
              fewest};
    }
    Location loc = op.getLoc();
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value one = index(1);
    // max(x, 1): empty sequences must not divide by zero.
    auto length = [&](Value tokens) -> Value {
      return arith::MaxSIOp::create(
          b, loc, tensor::DimOp::create(b, loc, tokens, 1), one);
    };
    Value queryLength = length(op.getQuery());
    Value floats = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, queryLength, index(footprint.perQuery)),
        arith::MulIOp::create(b, loc, length(kv), index(footprint.perKey)));
    Value fit = arith::DivUIOp::create(b, loc, index(budget), floats);
    Value fewest = arith::CeilDivUIOp::create(b, loc, index(rows), queryLength);
    return {arith::MaxSIOp::create(
                b, loc, arith::MaxSIOp::create(b, loc, fit, fewest), one)
                .getResult(),
            0};
  }
};
} // namespace
