//===- SplitHeads.cpp - One rank's share of the heads of a layer ----------===//
//
// Megatron-style head parallelism: rank r of N keeps the query heads
// [r·H/N, (r+1)·H/N), the key/value heads they read, and the rows of W_O
// those heads multiply; the N partial outputs add up to the layer's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// The share of `rank` among `ranks` of a layer of `numHeads` query heads on
/// `numKvHeads` key/value heads, or an error on `op` when its heads do not
/// split into whole groups: each rank's query heads must read whole
/// key/value heads of their own (or one shared key/value head), so that the
/// rank's layer again has `heads` a multiple of `kv_heads`.
FailureOr<HeadShare> getShare(Operation *op, int64_t numHeads,
                              int64_t numKvHeads, int64_t rank, int64_t ranks) {
  if (numHeads % ranks != 0)
    return op->emitError() << "cannot split heads(" << numHeads << ") among "
                           << ranks << " ranks: the heads must divide evenly";
  HeadShare share;
  share.heads = numHeads / ranks;
  share.query = rank * share.heads;
  int64_t group = numHeads / numKvHeads;
  if (share.heads % group != 0 && group % share.heads != 0)
    return op->emitError()
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

/// The mha ops of a layer written as its steps that the split follows: the
/// projections, the heads' layout, QK-norm, RoPE, the cache and the sdpa.
bool isLayerStep(Operation *op) {
  return isa<ProjectOp, SplitHeadsOp, RmsNormOp, RopeOp, CacheAppendOp, SdpaOp,
             ConcatHeadsOp, OutputProjectOp, YieldOp>(op);
}

/// The checks that make the rank's output a partial sum of the layer's:
/// whole mha.attention layers, or layers written as their steps (as a graph
/// with a key/value cache is), whose output the function returns as it is,
/// for the caller to add up.
LogicalResult checkSplittable(func::FuncOp func) {
  bool steps = !func.getOps<SdpaOp>().empty();
  WalkResult walk = func.walk([&](Operation *op) {
    // mha.yield ends a layer's score_mod region, which moves with the layer.
    if (!isa_and_nonnull<MhaDialect>(op->getDialect()) || isa<YieldOp>(op))
      return WalkResult::advance();
    auto attention = dyn_cast<AttentionOp>(op);
    if (!attention && (!steps || !isLayerStep(op))) {
      op->emitError() << "mha-split-heads splits mha.attention layers and "
                         "layers written as their steps around an mha.sdpa; "
                      << op->getName() << " is not split yet";
      return WalkResult::interrupt();
    }
    if (attention && steps) {
      op->emitError() << "mha-split-heads splits a function of mha.attention "
                         "layers or one of steps around mha.sdpa, not both";
      return WalkResult::interrupt();
    }
    if (attention && attention.isSplitFirst()) {
      op->emitError() << "mha-split-heads does not split a split-first layer "
                         "(per-head weights [H, D/H, dk]) yet";
      return WalkResult::interrupt();
    }
    if (isa<AttentionOp, OutputProjectOp>(op) &&
        !llvm::all_of(op->getUsers(), llvm::IsaPred<func::ReturnOp>)) {
      op->emitError() << "mha-split-heads needs the layer's result returned "
                         "as it is: each rank's result is a partial sum that "
                         "the ranks add up";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Narrows a weight or bias operand; through the arith.extf of a bf16 layer,
/// whose input is then narrowed (refreshResultTypes gives the extf its new
/// type).
void narrowWeight(func::FuncOp func, OpOperand &operand, int64_t dim,
                  int64_t offset, int64_t size) {
  if (auto extend = operand.get().getDefiningOp<arith::ExtFOp>();
      extend && extend->hasOneUse())
    return narrow(func, extend.getInMutable(), dim, offset, size);
  narrow(func, operand, dim, offset, size);
}

/// Narrows the per-head operands of `op` (an mha.attention or mha.sdpa) to
/// the query heads of `share`: ALiBi slopes, sinks, a per-head score bias;
/// and offsets the head its score_mod region receives, which is the whole
/// layer's.
template <typename OpTy>
LogicalResult narrowPerHeadOperands(func::FuncOp func, OpTy op,
                                    const HeadShare &share) {
  for (MutableOperandRange range :
       {op.getAlibiSlopesMutable(), op.getSinksMutable()})
    if (!range.empty())
      narrowWeight(func, range[0], 0, share.query, share.heads);
  if (Value bias = op.getAttnBias()) {
    auto type = cast<RankedTensorType>(bias.getType());
    if (type.isDynamicDim(1))
      return op.emitError() << "mha-split-heads cannot split a score bias "
                               "whose head dimension is `?`";
    if (type.getDimSize(1) != 1)
      narrow(func, op.getAttnBiasMutable()[0], 1, share.query, share.heads);
  }
  OpBuilder builder(op);
  if (share.query != 0)
    offsetScoreModArgument(
        builder, op, 2,
        arith::ConstantIndexOp::create(builder, op.getLoc(), share.query));
  return success();
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
  if (failed(narrowPerHeadOperands(func, op, share)))
    return failure();
  if (rank != 0)
    op.getBOMutable().clear();
  Builder builder(op.getContext());
  op.setNumHeadsAttr(builder.getI64IntegerAttr(share.heads));
  if (op.getNumKvHeads() || share.kvHeads != share.heads)
    op.setNumKvHeadsAttr(builder.getI64IntegerAttr(share.kvHeads));
  return success();
}

/// Follows `value`, heads [B, H, T, d] that `user` reads as its `what`, back to
/// the projection that makes them, through the ops that keep each head apart
/// (QK-norm, RoPE, casts, the cache they are appended to, which keeps the
/// same heads), and keeps heads [first, first + count) all the way: the
/// projection's columns, the split's head count, the cache's heads.
LogicalResult narrowHeadsSource(func::FuncOp func, Operation *user,
                                llvm::StringRef what, Value value,
                                int64_t first, int64_t count) {
  Builder builder(func.getContext());
  for (Operation *op = value.getDefiningOp(); op; op = value.getDefiningOp()) {
    if (auto append = dyn_cast<CacheAppendOp>(op)) {
      narrow(func, append.getCacheMutable(), 1, first, count);
      value = append.getUpdate();
      continue;
    }
    if (isa<RopeOp, RmsNormOp, arith::ExtFOp, arith::TruncFOp>(op) &&
        op->getResult(0).hasOneUse()) {
      value = op->getOperand(0);
      continue;
    }
    ProjectOp project;
    auto split = dyn_cast<SplitHeadsOp>(op);
    if (split && split->hasOneUse())
      project = split.getInput().getDefiningOp<ProjectOp>();
    else if (!split && op->hasOneUse())
      project = dyn_cast<ProjectOp>(op);
    if (!project || project.isPerHead() || !project->hasOneUse() ||
        bool(split) == project.getNumHeads().has_value())
      break;
    int64_t width = cast<RankedTensorType>(value.getType()).getDimSize(3);
    if (split)
      split.setNumHeadsAttr(builder.getI64IntegerAttr(count));
    else
      project.setNumHeadsAttr(builder.getI64IntegerAttr(count));
    narrowWeight(func, project.getWeightMutable(), 1, first * width,
                 count * width);
    if (!project.getBiasMutable().empty())
      narrowWeight(func, project.getBiasMutable()[0], 0, first * width,
                   count * width);
    return success();
  }
  return user->emitError()
         << "mha-split-heads cannot follow the " << what
         << " heads back to the one projection that makes them (through "
            "mha.split_heads, mha.rms_norm, mha.rope, mha.cache_append and "
            "casts, each used once)";
}

/// Keeps `share` of the heads of a layer written as its steps around `sdpa`:
/// the query, key and value projections (and the caches) of its heads, and
/// the rows of the output projection they multiply; its bias on rank 0 only.
LogicalResult splitSteps(func::FuncOp func, SdpaOp sdpa, const HeadShare &share,
                         int64_t rank) {
  Operation *user = sdpa->hasOneUse() ? *sdpa->getUsers().begin() : nullptr;
  if (auto concat = dyn_cast_or_null<ConcatHeadsOp>(user))
    user = concat->hasOneUse() ? *concat->getUsers().begin() : nullptr;
  auto output = dyn_cast_or_null<OutputProjectOp>(user);
  if (!output)
    return sdpa.emitError()
           << "mha-split-heads needs the heads of mha.sdpa to go to one "
              "mha.output_project (through mha.concat_heads), whose rows the "
              "ranks share";
  if (failed(narrowHeadsSource(func, sdpa, "query", sdpa.getQuery(),
                               share.query, share.heads)) ||
      failed(narrowHeadsSource(func, sdpa, "key", sdpa.getKey(), share.kv,
                               share.kvHeads)) ||
      failed(narrowHeadsSource(func, sdpa, "value", sdpa.getValue(), share.kv,
                               share.kvHeads)) ||
      failed(narrowPerHeadOperands(func, sdpa, share)))
    return failure();
  int64_t valueDim = sdpa.getValue().getType().getDimSize(3);
  narrowWeight(func, output.getWeightMutable(), 0, share.query * valueDim,
               share.heads * valueDim);
  if (rank != 0)
    output.getBiasMutable().clear();
  return success();
}

/// The result types of the ops of `func`'s body from their narrowed
/// operands, in order; then the function's type.
void refreshResultTypes(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    Type type =
        llvm::TypeSwitch<Operation *, Type>(&op)
            .Case<ProjectOp, SplitHeadsOp, ConcatHeadsOp, OutputProjectOp>(
                [](auto op) { return op.inferResultType(); })
            .Case<RopeOp, RmsNormOp>(
                [](auto op) { return op.getInput().getType(); })
            .Case<CacheAppendOp>(
                [](CacheAppendOp op) { return op.getCache().getType(); })
            .Case<arith::ExtFOp, arith::TruncFOp>([](auto op) -> Type {
              auto input = dyn_cast<RankedTensorType>(op.getIn().getType());
              if (!input)
                return op.getType();
              return input.clone(getElementTypeOrSelf(op.getType()));
            })
            .Case<SdpaOp>([](SdpaOp op) -> Type {
              SmallVector<int64_t> shape(op.getQuery().getType().getShape());
              shape.back() = op.getValue().getType().getShape().back();
              return op.getType().clone(shape);
            })
            .Default([](Operation *op) {
              return op->getNumResults() == 1 ? op->getResult(0).getType()
                                              : Type();
            });
    if (type)
      op.getResult(0).setType(type);
  }
  Operation *terminator = func.getBody().front().getTerminator();
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getBody().getArgumentTypes(),
                                         terminator->getOperandTypes()));
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
        FailureOr<HeadShare> share = getShare(
            op, op.getNumHeads(), op.getEffectiveNumKvHeads(), rank, ranks);
        if (failed(share) ||
            failed(splitAttention(func, op, *share, int64_t(rank))))
          return signalPassFailure();
      }
      for (SdpaOp op : llvm::to_vector(func.getOps<SdpaOp>())) {
        if (op.getQuery().getType().isDynamicDim(1) ||
            op.getKey().getType().isDynamicDim(1)) {
          op.emitError() << "mha-split-heads needs the heads of mha.sdpa's "
                            "query and key static";
          return signalPassFailure();
        }
        FailureOr<HeadShare> share =
            getShare(op, op.getQuery().getType().getDimSize(1),
                     op.getKey().getType().getDimSize(1), rank, ranks);
        if (failed(share) ||
            failed(splitSteps(func, op, *share, int64_t(rank))))
          return signalPassFailure();
      }
      refreshResultTypes(func);
    }
  }
};
} // namespace
