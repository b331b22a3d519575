//===- LinalgBuilder.h - What the lowerings to linalg share -----*- C++ -*-===//
//
// The pieces of `mha-lower-to-linalg` that its patterns share across files
// (LowerToLinalg.cpp: the projections, heads and caches; LowerSdpa.cpp:
// attention; LowerAttentionWeights.cpp: the attention maps): the builder of
// the layer's linalg ops, and the base of the patterns, which lowers f32
// only.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_LOWERING_LINALGBUILDER_H
#define MHA_COMPILER_LOWERING_LINALGBUILDER_H

#include "compiler/utils/GenericBuilder.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/Sequence.h"

namespace mlir {
namespace mha {

/// The first element type among `op`'s operands and results that is a float
/// other than f32, or null when everything is f32 (masks are i1).
Type findNonF32ElementType(Operation *op);

/// Builds the linalg form of one mha op at one location: the generics of
/// GenericBuilder, and the named ops and reshapes of the layer. Sizes are
/// carried as OpFoldResults so that static sizes stay static in the types
/// and dynamic batch and sequence sizes are read with `tensor.dim`.
class LinalgBuilder : public GenericBuilder {
public:
  using GenericBuilder::GenericBuilder;

  /// Size `dim` of `value`.
  OpFoldResult dim(Value value, int64_t dim) {
    return tensor::getMixedSize(builder, loc, value, dim);
  }

  OpFoldResult index(int64_t size) { return builder.getIndexAttr(size); }

  /// `input` repeated along `dimensions` of a tensor of `sizes`.
  Value broadcast(Value input, ArrayRef<OpFoldResult> sizes,
                  ArrayRef<int64_t> dimensions) {
    return linalg::BroadcastOp::create(builder, loc, input, empty(sizes),
                                       dimensions)
        ->getResult(0);
  }

  /// The accumulator of a projection: the bias repeated along `dimensions`,
  /// or zeros when there is no bias.
  Value biasOrZeros(Value bias, ArrayRef<OpFoldResult> sizes,
                    ArrayRef<int64_t> dimensions) {
    return bias ? broadcast(bias, sizes, dimensions) : zeros(sizes);
  }

  /// `input` with its dimensions permuted: result dim i is input dim
  /// `permutation[i]`.
  Value transpose(Value input, ArrayRef<int64_t> permutation) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t from : permutation)
      sizes.push_back(dim(input, from));
    return linalg::TransposeOp::create(builder, loc, input, empty(sizes),
                                       permutation)
        ->getResult(0);
  }

  /// `input` reshaped to `sizes` by splitting dimensions (`reassociation`
  /// says which result dimensions each input dimension becomes).
  Value expand(Value input, ArrayRef<ReassociationIndices> reassociation,
               ArrayRef<OpFoldResult> sizes) {
    auto type = RankedTensorType::get(staticShape(sizes), builder.getF32Type());
    return tensor::ExpandShapeOp::create(builder, loc, type, input,
                                         reassociation, sizes);
  }

  Value collapse(Value input, ArrayRef<ReassociationIndices> reassociation) {
    return tensor::CollapseShapeOp::create(builder, loc, input, reassociation);
  }

  /// `value` with the type the replaced op declared, which may know more
  /// static sizes than the lowering derived.
  Value castTo(Value value, Type type) {
    if (value.getType() == type)
      return value;
    return tensor::CastOp::create(builder, loc, type, value);
  }

  /// `input [..., D_in] · weight [D_in, D_out] (+ bias [D_out])` as one
  /// matmul over the rows of `input` flattened to 2-D.
  Value rowsTimesWeight(Value input, Value weight, Value bias) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t inWidth = inputType.getDimSize(rank - 1);
    int64_t outWidth = cast<RankedTensorType>(weight.getType()).getDimSize(1);
    ReassociationIndices outer =
        llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));

    // The result's sizes: the input's leading ones and D_out.
    SmallVector<OpFoldResult> sizes;
    for (int64_t i : outer)
      sizes.push_back(dim(input, i));
    sizes.push_back(index(outWidth));

    Value rows = input;
    if (rank == 1)
      rows = expand(input, {{0, 1}}, {index(1), index(inWidth)});
    else if (rank > 2)
      rows = collapse(input, {outer, {rank - 1}});

    Value init = biasOrZeros(bias, {dim(rows, 0), index(outWidth)}, {0});
    Value product = markProjection(
        linalg::MatmulOp::create(builder, loc, TypeRange{init.getType()},
                                 ValueRange{rows, weight}, ValueRange{init})
            .getResult(0));
    if (rank == 1)
      return collapse(product, {{0, 1}});
    if (rank == 2)
      return product;
    return expand(product, {outer, {rank - 1}}, sizes);
  }

  /// Tags the op of a projection's contraction, so that
  /// `mha-tile-projections` finds it among attention's contractions.
  Value markProjection(Value contraction) {
    contraction.getDefiningOp()->setAttr(
        MhaDialect::ProjectionAttrHelper::getNameStr(),
        UnitAttr::get(getContext()));
    return contraction;
  }

private:
  static SmallVector<int64_t> staticShape(ArrayRef<OpFoldResult> sizes) {
    SmallVector<int64_t> shape;
    for (OpFoldResult size : sizes)
      shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
    return shape;
  }
};

/// Base of the patterns: refuses element types other than f32, which the
/// lowering does not handle yet (the pass reports them first).
template <typename OpTy> struct F32Pattern : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (findNonF32ElementType(op))
      return rewriter.notifyMatchFailure(op, "only f32 is lowered");
    LinalgBuilder builder(rewriter, op.getLoc());
    Value result = lower(op, adaptor, builder);
    rewriter.replaceOp(op, builder.castTo(result, op.getType()));
    return success();
  }

  /// Builds the replacement of `op`.
  virtual Value lower(OpTy op, OpAdaptor adaptor, LinalgBuilder &b) const = 0;
};

/// The lowering of `mha.sdpa` (LowerSdpa.cpp).
void populateSdpaToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.rms_norm` and `mha.rope` (LowerRopeAndNorm.cpp).
void populateRopeAndNormToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.cache_append_quantized` and `mha.dequantize`
/// (LowerQuantizedCache.cpp).
void populateQuantizedCacheToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.paged_cache_append` and `mha.paged_view`
/// (LowerPagedCache.cpp).
void populatePagedCacheToLinalgPatterns(RewritePatternSet &patterns);

/// An `scf.for` over the sequences that writes each one's new rows of
/// `updates` ([B, Hkv, T, ...]) into the matching `caches` ([B, Hkv, C,
/// ...]) at row `lengths[b]` (`linalg.copy` into the slice, written back in
/// place), carrying the caches; a sequence whose rows do not fit (length <
/// 0 or length + T > C, with T and C those of the first pair) is skipped,
/// so that a wrong length never writes outside a cache. Returns the caches
/// after the loop. Every cache append lowers to it.
SmallVector<Value> buildCacheAppendLoop(OpBuilder &builder, Location loc,
                                        Value lengths, ValueRange updates,
                                        ValueRange caches);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_LOWERING_LINALGBUILDER_H
