//===- FuseProjections.cpp - Pack projections of one input into one -------===//
//
// Q, K and V of self-attention (K and V of cross-attention) are three
// contractions over the same input. Packing their weights side by side makes
// them one contraction that reads the input once; slices give back each
// result. The sum behind every output element is unchanged, so the results
// are bitwise the same.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAFUSEPROJECTIONS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// How projections of one input can be packed. Only projections with equal
/// keys are packed together.
struct PackingKey {
  enum Form { Rows, Heads, PerHead } form;
  /// Heads: the head dimension; PerHead: the head count.
  int64_t size0 = 0;
  /// PerHead: the slice width.
  int64_t size1 = 0;

  bool operator==(const PackingKey &other) const {
    return form == other.form && size0 == other.size0 && size1 == other.size1;
  }
};

PackingKey packingKey(ProjectOp op) {
  ArrayRef<int64_t> w = op.getWeight().getType().getShape();
  if (op.isPerHead())
    return {PackingKey::PerHead, w[0], w[1]};
  if (std::optional<int64_t> heads = op.getNumHeads())
    return {PackingKey::Heads, w[1] / *heads, 0};
  return {PackingKey::Rows, 0, 0};
}

/// The weight dimension the packed weights are concatenated along, and the
/// result dimension the packed result is sliced along.
int64_t weightAxis(PackingKey key) {
  return key.form == PackingKey::PerHead ? 2 : 1;
}
int64_t resultAxis(PackingKey key, ProjectOp op) {
  if (key.form == PackingKey::Heads)
    return 1;
  return op.getType().getRank() - 1;
}

/// Whether `value` can be used at `point`: a block argument of an enclosing
/// block, or an op result defined before `point` (or before its ancestor) in
/// an enclosing block.
bool isAvailableAt(Value value, Operation *point) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->findAncestorOpInBlock(*point) != nullptr;
  Operation *def = value.getDefiningOp();
  Operation *ancestor = def->getBlock()->findAncestorOpInBlock(*point);
  return ancestor && def->isBeforeInBlock(ancestor);
}

/// Packs the projections of `op`'s input that share its form; rooted at the
/// first of them in the block, so that each group is rewritten once.
struct PackProjectionsOfOneInput : OpRewritePattern<ProjectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ProjectOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    PackingKey key = packingKey(op);
    llvm::SetVector<Operation *> candidates;
    for (Operation *user : input.getUsers()) {
      auto sibling = dyn_cast<ProjectOp>(user);
      if (sibling && sibling.getInput() == input &&
          sibling->getBlock() == op->getBlock() && packingKey(sibling) == key)
        candidates.insert(sibling);
    }
    SmallVector<Operation *> ordered = candidates.takeVector();
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    if (ordered.front() != op)
      return rewriter.notifyMatchFailure(op, "not the first of its group");

    // The packed weights are built before the first projection: every
    // weight and bias must already exist there.
    SmallVector<ProjectOp> group;
    for (Operation *candidate : ordered) {
      auto sibling = cast<ProjectOp>(candidate);
      Value bias = sibling.getBias();
      if (isAvailableAt(sibling.getWeight(), op) &&
          (!bias || isAvailableAt(bias, op)))
        group.push_back(sibling);
    }
    if (group.size() < 2)
      return rewriter.notifyMatchFailure(
          op, "no other projection of this input to pack with");

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<Value> weights;
    for (ProjectOp member : group)
      weights.push_back(member.getWeight());
    Value weight =
        tensor::ConcatOp::create(rewriter, loc, weightAxis(key), weights);
    Value bias = packBiases(rewriter, loc, key, group);
    std::optional<int64_t> heads;
    if (key.form == PackingKey::Heads) {
      heads = 0;
      for (ProjectOp member : group)
        *heads += *member.getNumHeads();
    }
    Value packed = ProjectOp::create(rewriter, loc, input, weight, bias, heads);

    // Each projection becomes its slice of the packed result.
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, packed);
    int64_t axis = resultAxis(key, op);
    int64_t offset = 0;
    for (ProjectOp member : group) {
      int64_t width = member.getType().getDimSize(axis);
      SmallVector<OpFoldResult> offsets(sizes.size(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(sizes.size(), rewriter.getIndexAttr(1));
      offsets[axis] = rewriter.getIndexAttr(offset);
      sizes[axis] = rewriter.getIndexAttr(width);
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, member.getLoc(), packed, offsets, sizes, strides);
      if (slice.getType() != member.getType())
        slice = tensor::CastOp::create(rewriter, member.getLoc(),
                                       member.getType(), slice);
      rewriter.replaceOp(member, slice);
      offset += width;
    }
    return success();
  }

private:
  /// The biases side by side in the packed weight's column order, zeros
  /// for a projection without one; null when no projection has a bias.
  static Value packBiases(PatternRewriter &rewriter, Location loc,
                          PackingKey key, MutableArrayRef<ProjectOp> group) {
    if (llvm::none_of(group, [](ProjectOp p) { return p.getBias(); }))
      return {};
    Type element = group.front().getType().getElementType();
    SmallVector<Value> biases;
    for (ProjectOp member : group) {
      Value bias = member.getBias();
      if (!bias) {
        // The bias has one element per output column: [D_out] or [H·d].
        ArrayRef<int64_t> w = member.getWeight().getType().getShape();
        int64_t columns = member.isPerHead() ? w[0] * w[2] : w[1];
        auto type = RankedTensorType::get({columns}, element);
        bias = arith::ConstantOp::create(
            rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(type)));
      }
      biases.push_back(bias);
    }
    if (key.form != PackingKey::PerHead)
      return tensor::ConcatOp::create(rewriter, loc, 0, biases);

    // Per head, each bias is [H·d_i] head after head: interleave them as
    // [H, d_0 + d_1 + ...] so that head h's packed columns get its biases.
    int64_t heads = key.size0;
    SmallVector<Value> perHead;
    for (auto [member, bias] : llvm::zip_equal(group, biases)) {
      int64_t columns = member.getWeight().getType().getDimSize(2);
      auto type = RankedTensorType::get({heads, columns}, element);
      perHead.push_back(tensor::ExpandShapeOp::create(
          rewriter, loc, type, bias, ArrayRef<ReassociationIndices>{{0, 1}}));
    }
    Value interleaved = tensor::ConcatOp::create(rewriter, loc, 1, perHead);
    return tensor::CollapseShapeOp::create(
        rewriter, loc, interleaved, ArrayRef<ReassociationIndices>{{0, 1}});
  }
};

struct MhaFuseProjectionsPass
    : mha::impl::MhaFuseProjectionsBase<MhaFuseProjectionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseProjectionsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateFuseProjectionsPatterns(RewritePatternSet &patterns) {
  patterns.add<PackProjectionsOfOneInput>(patterns.getContext());
}
