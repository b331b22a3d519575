//===- SplitHeads.cpp - One rank's share of the heads of a layer ----------===//
//
// Megatron-style head parallelism: rank r of N keeps the query heads
// [r·H/N, (r+1)·H/N), the key/value heads they read, and the rows of W_O
// those heads multiply; the N partial outputs add up to the layer's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/attention/AttentionMath.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHASPLITHEADS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

llvm::StringRef mlir::mha::getShardAttrName() { return "mha.shard"; }

namespace {
/// The heads one rank keeps: query heads [query, query + heads), key/value
/// heads [kv, kv + kvHeads).
struct HeadShare {
  int64_t query = 0, heads = 0, kv = 0, kvHeads = 0;
};

/// The share of `rank` among `ranks`, or an error on `op` when its heads do
/// not split into whole groups: each rank's query heads must read whole
/// key/value heads of their own (or one shared key/value head), so that the
/// rank's layer is again an mha.attention with `heads` a multiple of
/// `kv_heads`.
FailureOr<HeadShare> getShare(AttentionOp op, int64_t rank, int64_t ranks) {
  int64_t numHeads = op.getNumHeads();
  int64_t numKvHeads = op.getEffectiveNumKvHeads();
  if (numHeads % ranks != 0)
    return op.emitError() << "cannot split heads(" << numHeads << ") among "
                          << ranks << " ranks: the heads must divide evenly";
  HeadShare share;
  share.heads = numHeads / ranks;
  share.query = rank * share.heads;
  int64_t group = numHeads / numKvHeads;
  if (share.heads % group != 0 && group % share.heads != 0)
    return op.emitError()
           << "cannot split heads(" << numHeads << ") kv_heads(" << numKvHeads
           << ") among " << ranks << " ranks: " << share.heads
           << " query heads per rank would not cover whole groups of " << group
           << " query heads per key/value head";
  share.kv = share.query / group;
  // Fewer key/value heads than ranks: each is replicated on the ranks whose
  // query heads read it.
  share.kvHeads = std::max<int64_t>(share.heads / group, 1);
  return share;
}

/// Narrows `operand` to [offset, offset + size) along `dim`. An argument of
/// `func` that only this operand uses takes the narrower type, with
/// `mha.shard = array<i64: dim, offset, size>`: the rank is given only its
/// slice, as Megatron's ranks hold only theirs, and the weights stay
/// arguments that the pipeline packs once (mha-prepare-weights). Any other
/// value is sliced in the graph with tensor.extract_slice.
void narrow(func::FuncOp func, OpOperand &operand, int64_t dim, int64_t offset,
            int64_t size) {
  Value value = operand.get();
  auto type = cast<RankedTensorType>(value.getType());
  if (offset == 0 && size == type.getDimSize(dim))
    return;
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  RankedTensorType narrowType = type.clone(shape);
  auto argument = dyn_cast<BlockArgument>(value);
  if (argument && argument.getOwner() == &func.getBody().front() &&
      argument.hasOneUse()) {
    argument.setType(narrowType);
    func.setArgAttr(
        argument.getArgNumber(), getShardAttrName(),
        DenseI64ArrayAttr::get(func.getContext(), {dim, offset, size}));
    return;
  }
  OpBuilder builder(operand.getOwner());
  Location loc = operand.getOwner()->getLoc();
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  offsets[dim] = builder.getIndexAttr(offset);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, value);
  sizes[dim] = builder.getIndexAttr(size);
  SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
  operand.set(tensor::ExtractSliceOp::create(builder, loc, narrowType, value,
                                             offsets, sizes, strides));
}

/// The checks that make the rank's output a partial sum of the layer's:
/// whole mha.attention layers (no steps written out, no key/value cache)
/// whose result the function returns as it is, for the caller to add up.
LogicalResult checkSplittable(func::FuncOp func) {
  WalkResult walk = func.walk([](Operation *op) {
    // mha.yield ends a layer's score_mod region, which moves with the layer.
    if (!isa_and_nonnull<MhaDialect>(op->getDialect()) || isa<YieldOp>(op))
      return WalkResult::advance();
    auto attention = dyn_cast<AttentionOp>(op);
    if (!attention) {
      op->emitError() << "mha-split-heads splits whole mha.attention layers; "
                      << op->getName()
                      << " is not split yet (a graph written step by step, or "
                         "one with a key/value cache)";
      return WalkResult::interrupt();
    }
    if (attention.isSplitFirst()) {
      op->emitError() << "mha-split-heads does not split a split-first layer "
                         "(per-head weights [H, D/H, dk]) yet";
      return WalkResult::interrupt();
    }
    if (!llvm::all_of(attention->getUsers(), llvm::IsaPred<func::ReturnOp>)) {
      op->emitError() << "mha-split-heads needs the layer's result returned "
                         "as it is: each rank's result is a partial sum that "
                         "the ranks add up";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Keeps `share` of `op`'s heads; the output bias only on rank 0, so that
/// the sum over the ranks adds it once.
LogicalResult splitAttention(func::FuncOp func, AttentionOp op,
                             const HeadShare &share, int64_t rank) {
  int64_t numHeads = op.getNumHeads();
  int64_t keyDim = op.getWQ().getType().getDimSize(1) / numHeads;
  int64_t valueDim =
      op.getWV().getType().getDimSize(1) / op.getEffectiveNumKvHeads();
  narrow(func, op.getWQMutable(), 1, share.query * keyDim,
         share.heads * keyDim);
  narrow(func, op.getWKMutable(), 1, share.kv * keyDim, share.kvHeads * keyDim);
  narrow(func, op.getWVMutable(), 1, share.kv * valueDim,
         share.kvHeads * valueDim);
  narrow(func, op.getWOMutable(), 0, share.query * valueDim,
         share.heads * valueDim);
  auto narrowOptional = [&](MutableOperandRange range, int64_t dim,
                            int64_t start, int64_t step, int64_t count) {
    if (!range.empty())
      narrow(func, range[0], dim, start * step, count * step);
  };
  narrowOptional(op.getBQMutable(), 0, share.query, keyDim, share.heads);
  narrowOptional(op.getBKMutable(), 0, share.kv, keyDim, share.kvHeads);
  narrowOptional(op.getBVMutable(), 0, share.kv, valueDim, share.kvHeads);
  narrowOptional(op.getAlibiSlopesMutable(), 0, share.query, 1, share.heads);
  narrowOptional(op.getSinksMutable(), 0, share.query, 1, share.heads);
  if (Value bias = op.getAttnBias()) {
    auto type = cast<RankedTensorType>(bias.getType());
    if (type.isDynamicDim(1))
      return op.emitError() << "mha-split-heads cannot split a score bias "
                               "whose head dimension is `?`";
    if (type.getDimSize(1) != 1)
      narrowOptional(op.getAttnBiasMutable(), 1, share.query, 1, share.heads);
  }
  if (rank != 0)
    op.getBOMutable().clear();
  // The score_mod region receives the head of the whole layer.
  OpBuilder builder(op);
  if (share.query != 0)
    offsetScoreModArgument(
        builder, op, 2,
        arith::ConstantIndexOp::create(builder, op.getLoc(), share.query));
  op.setNumHeadsAttr(builder.getI64IntegerAttr(share.heads));
  if (op.getNumKvHeads() || share.kvHeads != share.heads)
    op.setNumKvHeadsAttr(builder.getI64IntegerAttr(share.kvHeads));
  return success();
}

struct MhaSplitHeadsPass : mha::impl::MhaSplitHeadsBase<MhaSplitHeadsPass> {
  using MhaSplitHeadsBase::MhaSplitHeadsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      emitError(module.getLoc())
          << "mha-split-heads needs ranks >= 1 and 0 <= rank < ranks, got "
             "rank="
          << int64_t(rank) << " ranks=" << int64_t(ranks);
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(checkSplittable(func)))
        return signalPassFailure();
      SmallVector<AttentionOp> layers;
      func.walk([&](AttentionOp op) { layers.push_back(op); });
      for (AttentionOp op : layers) {
        FailureOr<HeadShare> share = getShare(op, rank, ranks);
        if (failed(share) ||
            failed(splitAttention(func, op, *share, int64_t(rank))))
          return signalPassFailure();
      }
      func.setFunctionType(FunctionType::get(&getContext(),
                                             func.getBody().getArgumentTypes(),
                                             func.getResultTypes()));
    }
  }
};
} // namespace
