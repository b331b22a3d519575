//===- GenericBuilder.h - linalg.generic and its companions -----*- C++ -*-===//
//
// The one builder of linalg ops on tensors: `linalg.generic`s and what they
// are built from (indexing maps, empty and filled tensors, f32 constants),
// and the named ops and reshapes of the layer's lowering (broadcasts,
// transposes, the projections' matmuls). The decomposed path
// (`mha-lower-to-linalg`), the fused path (the online softmax and the
// key-split merge) and the softmax constants of AttentionMath all build
// through it, so that a generic is made one way: one result written into
// its init, its body the value that the body builder returns.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_UTILS_GENERICBUILDER_H
#define MHA_COMPILER_UTILS_GENERICBUILDER_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace mha {

/// The iterator types of the generics, short.
constexpr utils::IteratorType kParallel = utils::IteratorType::parallel;
constexpr utils::IteratorType kReduction = utils::IteratorType::reduction;

/// Builds linalg ops on tensors at one location (the builder's insertion
/// point). Element types are f32 unless said otherwise. Sizes are carried as
/// OpFoldResults so that static sizes stay static in the types and dynamic
/// batch and sequence sizes are read with `tensor.dim`.
class GenericBuilder {
public:
  /// The scalar body of a generic: what it yields for the block arguments
  /// (the inputs' elements, then the init's).
  using BodyBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

  GenericBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  MLIRContext *getContext() const { return builder.getContext(); }

  /// Loop dimension `position` of an indexing map.
  AffineExpr d(unsigned position) const;
  /// The constant `value` in an indexing map.
  AffineExpr constantExpr(int64_t value) const;

  /// The projection of `numDims` loop dimensions onto `dims`.
  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims) const;
  /// The indexing map of `numDims` loop dimensions onto `results`.
  AffineMap affineMap(unsigned numDims, ArrayRef<AffineExpr> results) const;

  /// An f32 constant.
  Value f32Constant(double value);
  /// -inf in f32.
  Value minusInfinity();

  /// A new tensor of `sizes` (`tensor.empty`) of `elementType`, f32 when
  /// null.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType = {});
  /// `init` filled with `value` (`linalg.fill`).
  Value fill(Value value, Value init);
  /// A new f32 tensor of `sizes` filled with `value`.
  Value filled(ArrayRef<OpFoldResult> sizes, Value value);
  /// A new f32 tensor of `sizes` filled with 0.
  Value zeros(ArrayRef<OpFoldResult> sizes);

  /// A `linalg.generic` with one result written into `init`, whose body
  /// yields what `body` returns.
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators, BodyBuilder body);

  /// `init + Σ lhs·rhs` over the reduction iterators (buildMultiplyAdd):
  /// every contraction of attention and of the projections.
  Value contraction(Value lhs, Value rhs, Value init, ArrayRef<AffineMap> maps,
                    ArrayRef<utils::IteratorType> iterators);

  /// Size `dim` of `value`.
  OpFoldResult dim(Value value, int64_t dim);
  /// The static size `size`.
  OpFoldResult index(int64_t size);

  /// `input` repeated along `dimensions` of a tensor of `sizes`.
  Value broadcast(Value input, ArrayRef<OpFoldResult> sizes,
                  ArrayRef<int64_t> dimensions);
  /// The accumulator of a projection: the bias repeated along `dimensions`,
  /// or zeros when there is no bias.
  Value biasOrZeros(Value bias, ArrayRef<OpFoldResult> sizes,
                    ArrayRef<int64_t> dimensions);
  /// `input` with its dimensions permuted: result dim i is input dim
  /// `permutation[i]`.
  Value transpose(Value input, ArrayRef<int64_t> permutation);
  /// `input` (f32) reshaped to `sizes` by splitting dimensions
  /// (`reassociation` says which result dimensions each input dimension
  /// becomes).
  Value expand(Value input, ArrayRef<ReassociationIndices> reassociation,
               ArrayRef<OpFoldResult> sizes);
  /// `input` reshaped by merging the dimensions of each group of
  /// `reassociation`.
  Value collapse(Value input, ArrayRef<ReassociationIndices> reassociation);
  /// `value` with the type the replaced op declared, which may know more
  /// static sizes than the lowering derived.
  Value castTo(Value value, Type type);

  /// `input [..., D_in] · weight [D_in, D_out] (+ bias [D_out])` as one
  /// matmul over the rows of `input` flattened to 2-D.
  Value rowsTimesWeight(Value input, Value weight, Value bias);
  /// Tags the op of a projection's contraction, so that
  /// `mha-tile-projections` finds it among attention's contractions.
  Value markProjection(Value contraction);

  /// Where the ops go.
  OpBuilder &builder;
  Location loc;
};

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_UTILS_GENERICBUILDER_H
