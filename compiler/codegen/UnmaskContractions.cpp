//===- UnmaskContractions.cpp - Contractions without unread masks ---------===//
//
// See UnmaskContractions.h. A masked lane of `vector.mask %m {
// vector.contract %lhs, %rhs, %acc }` keeps its value of %acc, the plain
// contraction adds lhs · rhs to it: the two differ only in lanes that %m
// masks off, provided %m masks no reduction dimension (else the kept lanes
// would sum masked-off terms too). Those lanes may hold anything if no one
// reads them, which the use chain shows: the value goes to
//
// - transfer writes whose masks keep a subset of %m's lanes, the write's
//   vector dimensions being the accumulator's (the block's masked store);
// - `scf.yield` of an `scf.for` (the reduction loop carries the block),
//   which passes it on to the loop's result and to its iteration argument;
// - the accumulator of a contraction under a mask with the same bounds,
//   whose result is followed in turn (the next reduction step).
//
// Anything else (a use as a multiplicand, a reduction across lanes, an
// unmasked write) keeps the mask.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/UnmaskContractions.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {
/// The bounds of a mask made by `vector.create_mask` or
/// `vector.constant_mask`, one per dimension, or by a `vector.extract` of
/// such a mask's leading dimensions at positions within their bounds (the
/// form in which a one-row block's masked write comes out of
/// linalg::vectorize); nullopt for any other mask.
std::optional<SmallVector<OpFoldResult>> getMaskBounds(Value mask) {
  if (auto extract = mask.getDefiningOp<vector::ExtractOp>()) {
    std::optional<SmallVector<OpFoldResult>> bounds =
        getMaskBounds(extract.getSource());
    if (!bounds)
      return std::nullopt;
    SmallVector<OpFoldResult> positions = extract.getMixedPosition();
    for (auto [position, bound] : llvm::zip(positions, *bounds)) {
      std::optional<int64_t> index = getConstantIntValue(position);
      std::optional<int64_t> size = getConstantIntValue(bound);
      if (!index || !size || *index >= *size)
        return std::nullopt;
    }
    return SmallVector<OpFoldResult>(
        llvm::drop_begin(*bounds, positions.size()));
  }
  if (auto create = mask.getDefiningOp<vector::CreateMaskOp>())
    return getAsOpFoldResult(create.getOperands());
  if (auto constant = mask.getDefiningOp<vector::ConstantMaskOp>()) {
    Builder builder(mask.getContext());
    SmallVector<OpFoldResult> bounds;
    for (int64_t size : constant.getMaskDimSizes())
      bounds.push_back(builder.getIndexAttr(size));
    return bounds;
  }
  return std::nullopt;
}

/// Whether a lane below `inner` in a dimension is always below `outer`.
bool isAtMost(OpFoldResult inner, OpFoldResult outer) {
  if (isEqualConstantIntOrValue(inner, outer))
    return true;
  std::optional<int64_t> innerSize = getConstantIntValue(inner);
  std::optional<int64_t> outerSize = getConstantIntValue(outer);
  return innerSize && outerSize && *innerSize <= *outerSize;
}

/// A masked contraction: its mask's bounds per iteration dimension and
/// the iteration dimension of each accumulator dimension.
struct MaskedContraction {
  vector::MaskOp mask;
  vector::ContractionOp contract;
  SmallVector<OpFoldResult> bounds;
  SmallVector<unsigned> accDims;
};

std::optional<MaskedContraction> matchMaskedContraction(vector::MaskOp mask) {
  auto contract = dyn_cast_or_null<vector::ContractionOp>(mask.getMaskableOp());
  if (!contract || mask.hasPassthru() ||
      contract.getKind() != vector::CombiningKind::ADD ||
      !isa<VectorType>(contract.getAccType()))
    return std::nullopt;
  std::optional<SmallVector<OpFoldResult>> bounds =
      getMaskBounds(mask.getMask());
  if (!bounds)
    return std::nullopt;
  MaskedContraction match{mask, contract, *bounds, {}};
  AffineMap accMap = contract.getIndexingMapsArray()[2];
  for (AffineExpr result : accMap.getResults())
    match.accDims.push_back(cast<AffineDimExpr>(result).getPosition());
  return match;
}

/// Whether `mask` keeps only lanes that `contraction` keeps, its dimensions
/// being the accumulator's.
bool keepsSubset(Value mask, const MaskedContraction &contraction) {
  std::optional<SmallVector<OpFoldResult>> bounds = getMaskBounds(mask);
  if (!bounds || bounds->size() != contraction.accDims.size())
    return false;
  for (auto [bound, dim] : llvm::zip(*bounds, contraction.accDims))
    if (!isAtMost(bound, contraction.bounds[dim]))
      return false;
  return true;
}

/// Whether no one reads the lanes of `contraction`'s result that its mask
/// masks off (see the file comment for the uses followed).
bool masksOffOnlyUnreadLanes(const MaskedContraction &contraction) {
  llvm::SetVector<Value> values;
  values.insert(contraction.mask->getResult(0));
  for (size_t next = 0; next < values.size(); ++next) {
    for (OpOperand &use : values[next].getUses()) {
      Operation *user = use.getOwner();
      if (auto write = dyn_cast<vector::TransferWriteOp>(user)) {
        Value mask = write.getMask();
        if (auto enclosing = dyn_cast<vector::MaskOp>(write->getParentOp()))
          mask = enclosing.getMask();
        if (use.get() != write.getVector() || !mask ||
            !write.getPermutationMap().isMinorIdentity() ||
            !keepsSubset(mask, contraction))
          return false;
        continue;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        auto loop = dyn_cast<scf::ForOp>(yield->getParentOp());
        if (!loop)
          return false;
        unsigned index = use.getOperandNumber();
        values.insert(loop.getRegionIterArgs()[index]);
        values.insert(loop.getResult(index));
        continue;
      }
      if (auto contract = dyn_cast<vector::ContractionOp>(user)) {
        auto enclosing = dyn_cast<vector::MaskOp>(contract->getParentOp());
        std::optional<MaskedContraction> next =
            enclosing ? matchMaskedContraction(enclosing) : std::nullopt;
        if (use.get() != contract.getAcc() || !next ||
            next->accDims != contraction.accDims ||
            next->bounds.size() != contraction.bounds.size() ||
            !llvm::all_of(llvm::seq<size_t>(0, next->bounds.size()),
                          [&](size_t dim) {
                            return isEqualConstantIntOrValue(
                                next->bounds[dim], contraction.bounds[dim]);
                          }))
          return false;
        values.insert(enclosing->getResult(0));
        continue;
      }
      return false;
    }
  }
  return true;
}

struct UnmaskContractionOfUnreadLanes : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    std::optional<MaskedContraction> contraction = matchMaskedContraction(mask);
    if (!contraction)
      return rewriter.notifyMatchFailure(mask, "not a masked contraction");
    // A masked reduction dimension changes the kept lanes too.
    ArrayRef<int64_t> iterationShape =
        cast<VectorType>(mask.getMask().getType()).getShape();
    for (auto [dim, bound] : llvm::enumerate(contraction->bounds)) {
      if (llvm::is_contained(contraction->accDims, dim))
        continue;
      std::optional<int64_t> size = getConstantIntValue(bound);
      if (!size || *size < iterationShape[dim])
        return rewriter.notifyMatchFailure(mask, "masks a reduction");
    }
    if (!masksOffOnlyUnreadLanes(*contraction))
      return rewriter.notifyMatchFailure(mask, "masked-off lanes are read");
    Operation *plain = rewriter.clone(*contraction->contract);
    rewriter.replaceOp(mask, plain->getResults());
    return success();
  }
};
} // namespace

void mlir::mha::populateUnmaskContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<UnmaskContractionOfUnreadLanes>(patterns.getContext());
}
