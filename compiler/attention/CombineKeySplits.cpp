//===- CombineKeySplits.cpp - Merging the states of key splits ------------===//
//
// The end of attention whose keys were split into P ranges (SplitKeys.cpp,
// mha.sdpa's PartialReductionOpInterface): the P unnormalized states
// (acc, m, l) of the same rows merged into the output, each weighed by the
// distance of its maximum from the largest (buildPartWeight), the splits
// added in order.
//
//===----------------------------------------------------------------------===//

#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/GenericBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::mha;

using utils::IteratorType;

Value mlir::mha::combineKeySplits(OpBuilder &builder, Location loc,
                                  Value accParts, Value maxParts,
                                  Value sumParts, Value init, double scale,
                                  bool modifiedScores, Value sinks) {
  GenericBuilder ops(builder, loc);
  unsigned rowRank = cast<RankedTensorType>(init.getType()).getRank() - 1;
  SmallVector<OpFoldResult> rowSizes =
      tensor::getMixedSizes(builder, loc, init);
  rowSizes.pop_back();
  // Loop dimensions: the rows, (the value column,) and the split last.
  SmallVector<unsigned> rows = llvm::to_vector(llvm::seq<unsigned>(0, rowRank));
  auto withSplit = [&](unsigned split, ArrayRef<unsigned> dims) {
    SmallVector<unsigned> result = {split};
    llvm::append_range(result, dims);
    return result;
  };
  SmallVector<IteratorType> overSplits(rowRank, kParallel);
  overSplits.push_back(kReduction);

  // M = max_p m_p.
  unsigned split = rowRank;
  Value maxAll = ops.generic(
      {maxParts}, ops.filled(rowSizes, ops.minusInfinity()),
      {ops.map(rowRank + 1, withSplit(split, rows)),
       ops.map(rowRank + 1, rows)},
      overSplits, [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::MaximumFOp::create(nb, nloc, args[1], args[0])
            .getResult();
      });

  // Σ_p w_p·x_p with w_p = buildPartWeight(m_p, M).
  SoftmaxConstants constants;
  constants.log2Scale =
      ops.f32Constant(getLog2Scale(modifiedScores ? 1.0 : scale));
  constants.zero = ops.f32Constant(0.0);
  constants.minusInfinity = ops.minusInfinity();
  Value zeroF = constants.zero;
  auto weighted = [&](OpBuilder &nb, Location nloc, ValueRange args) {
    Value w = buildPartWeight(nb, nloc, constants, args[1], args[2]);
    return buildMultiplyAdd(nb, nloc, args[0], w, args[3]);
  };

  // l = Σ_p w_p·l_p.
  Value sum =
      ops.generic({sumParts, maxParts, maxAll}, ops.filled(rowSizes, zeroF),
                  {ops.map(rowRank + 1, withSplit(split, rows)),
                   ops.map(rowRank + 1, withSplit(split, rows)),
                   ops.map(rowRank + 1, rows), ops.map(rowRank + 1, rows)},
                  overSplits, weighted);

  // acc = Σ_p w_p·acc_p over (rows, value column n, split).
  unsigned column = rowRank, lastSplit = rowRank + 1;
  SmallVector<unsigned> rowsAndColumn = rows;
  rowsAndColumn.push_back(column);
  SmallVector<IteratorType> overColumnsAndSplits(rowRank + 1, kParallel);
  overColumnsAndSplits.push_back(kReduction);
  Value acc = ops.generic(
      {accParts, maxParts, maxAll}, ops.fill(zeroF, init),
      {ops.map(rowRank + 2, withSplit(lastSplit, rowsAndColumn)),
       ops.map(rowRank + 2, withSplit(lastSplit, rows)),
       ops.map(rowRank + 2, rows), ops.map(rowRank + 2, rowsAndColumn)},
      overColumnsAndSplits, weighted);

  // A sink joins the merged denominator once, at the largest maximum; the
  // rows are [B, H, T], the sink the head's.
  if (sinks)
    sum = addSinkWeights(builder, loc, maxAll, sum, sinks,
                         ops.map(rowRank, {1}), scale, modifiedScores);
  return buildNormalizedRows(builder, loc, sum, acc);
}
