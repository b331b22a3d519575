//===- LowerRopeAndNorm.cpp - mha.rms_norm and mha.rope to linalg ---------===//
//
// The QK-norm and the rotary embedding of the heads' queries and keys as
// `linalg.generic`s on tensors. RMSNorm works on the rows of the heads
// flattened to `[B·H·T, d]`, 2-D generics that mha-vectorize can take. The
// rotary embedding computes its cosines and sines once per position and
// frequency (a table of `[T, R/2]`, or `[B, T, R/2]` with offsets), not per
// head, and rotates every pair in one generic that reads each feature and
// its partner through affine indexing maps.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LinalgBuilder.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mha;

namespace {
//===----------------------------------------------------------------------===//
// mha.rms_norm
//===----------------------------------------------------------------------===//

struct LowerRmsNorm : F32Pattern<RmsNormOp> {
  using F32Pattern::F32Pattern;

  Value lower(RmsNormOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    Value input = adaptor.getInput();
    int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(3);
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.dim(input, 1),
                                       b.dim(input, 2), b.index(width)};
    Value rows = b.collapse(input, {{0, 1, 2}, {3}});
    OpFoldResult numRows = b.dim(rows, 0);

    // Σ_k x[r, k]², then 1 / sqrt(Σ / d + eps) per row.
    Value sums =
        b.generic(rows, b.zeros({numRows}), {b.map(2, {0, 1}), b.map(2, {0})},
                  {kParallel, kReduction},
                  [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    Value square =
                        arith::MulFOp::create(nb, nloc, args[0], args[0]);
                    return arith::AddFOp::create(nb, nloc, args[1], square);
                  });
    double eps = op.getEps().convertToDouble();
    Value inverseRms = b.generic(
        sums, b.empty({numRows}), {b.map(1, {0}), b.map(1, {0})}, {kParallel},
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          GenericBuilder inner(nb, nloc);
          Value mean = arith::DivFOp::create(nb, nloc, args[0],
                                             inner.f32Constant(double(width)));
          Value shifted =
              arith::AddFOp::create(nb, nloc, mean, inner.f32Constant(eps));
          return math::RsqrtOp::create(nb, nloc, shifted).getResult();
        });
    Value normalized = b.generic(
        ValueRange{rows, inverseRms, adaptor.getWeight()},
        b.empty({numRows, b.index(width)}),
        {b.map(2, {0, 1}), b.map(2, {0}), b.map(2, {1}), b.map(2, {0, 1})},
        {kParallel, kParallel},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value scaled = arith::MulFOp::create(nb, nloc, args[0], args[1]);
          return arith::MulFOp::create(nb, nloc, scaled, args[2]);
        });
    return b.expand(normalized, {{0, 1, 2}, {3}}, sizes);
  }
};

//===----------------------------------------------------------------------===//
// mha.rope
//===----------------------------------------------------------------------===//

struct LowerRope : F32Pattern<RopeOp> {
  using F32Pattern::F32Pattern;

  Value lower(RopeOp op, OpAdaptor adaptor, LinalgBuilder &b) const override {
    OpBuilder &builder = b.builder;
    Location loc = b.loc;
    Value input = adaptor.getInput();
    Value offsets = adaptor.getOffsets();
    int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(3);
    int64_t rotary = op.getRotaryDim();
    int64_t pairs = rotary / 2;
    double scale = op.getScale().convertToDouble();
    double mscale = op.getMscale().convertToDouble();
    bool interleaved = op.isInterleaved();

    // The frequencies: the operand's, or base^(−2i / R), which depend on
    // the attributes alone and are folded here, in f64.
    Value frequencies = adaptor.getInvFreq();
    if (!frequencies) {
      double base = op.getBase().convertToDouble();
      SmallVector<double> values;
      for (int64_t i = 0; i < pairs; ++i)
        values.push_back(std::pow(base, -2.0 * double(i) / double(rotary)));
      auto type = RankedTensorType::get({pairs}, builder.getF64Type());
      frequencies = arith::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(type, ArrayRef(values)));
    }

    // cos θ · mscale and sin θ · mscale of each position and pair, with
    // θ = (p / scale) · frequency computed in f64: positions reach the
    // hundreds of thousands, where an f32 angle would be off by more than
    // the tolerance. Loops (t, i), or (b, t, i) with offsets.
    SmallVector<OpFoldResult> tableSizes;
    if (offsets)
      tableSizes.push_back(b.dim(input, 0));
    tableSizes.append({b.dim(input, 2), b.index(pairs)});
    unsigned tableLoops = tableSizes.size();
    unsigned tokenLoop = tableLoops - 2, pairLoop = tableLoops - 1;
    SmallVector<Value> tableInputs = {frequencies};
    SmallVector<AffineMap> tableMaps = {b.map(tableLoops, {pairLoop})};
    if (offsets) {
      tableInputs.push_back(offsets);
      tableMaps.push_back(b.map(tableLoops, {0}));
    }
    tableMaps.push_back(b.affineMap(
        tableLoops, llvm::map_to_vector(llvm::seq<unsigned>(0, tableLoops),
                                        [&](unsigned i) { return b.d(i); })));
    SmallVector<utils::IteratorType> tableIterators(tableLoops, kParallel);
    auto table = [&](bool sine) {
      return b.generic(
          tableInputs, b.empty(tableSizes), tableMaps, tableIterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
            Type f64 = nb.getF64Type();
            Value frequency = args[0];
            if (!frequency.getType().isF64())
              frequency = arith::ExtFOp::create(nb, nloc, f64, frequency);
            Value position = arith::IndexCastOp::create(
                nb, nloc, nb.getI64Type(),
                linalg::IndexOp::create(nb, nloc, tokenLoop));
            if (offsets)
              position = arith::AddIOp::create(nb, nloc, position, args[1]);
            Value angle = arith::MulFOp::create(
                nb, nloc, arith::SIToFPOp::create(nb, nloc, f64, position),
                arith::ConstantOp::create(nb, nloc,
                                          nb.getF64FloatAttr(1.0 / scale)));
            angle = arith::MulFOp::create(nb, nloc, angle, frequency);
            Value wave = sine
                             ? math::SinOp::create(nb, nloc, angle).getResult()
                             : math::CosOp::create(nb, nloc, angle).getResult();
            wave = arith::MulFOp::create(
                nb, nloc, wave,
                arith::ConstantOp::create(nb, nloc,
                                          nb.getF64FloatAttr(mscale)));
            return arith::TruncFOp::create(nb, nloc, nb.getF32Type(), wave);
          });
    };
    Value cosines = table(/*sine=*/false);
    Value sines = table(/*sine=*/true);

    // The rotated features as [B, H, T, 2, R/2] (half: member c of pair i
    // is feature c·R/2 + i) or [B, H, T, R/2, 2] (interleaved: feature
    // 2i + c). Loops (b, h, t, c, i) or (b, h, t, i, c); the partner is
    // member 1 − c. Member 0 gets a·cos − b·sin, member 1 b·cos + a·sin.
    unsigned memberLoop = interleaved ? 4 : 3;
    unsigned pairIndexLoop = interleaved ? 3 : 4;
    AffineExpr member = b.d(memberLoop), pair = b.d(pairIndexLoop);
    AffineExpr partner = b.constantExpr(1) - member;
    auto feature = [&](AffineExpr c) {
      return interleaved ? pair * 2 + c : c * pairs + pair;
    };
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2);
    SmallVector<AffineExpr> tableIndex = {d2, pair};
    if (offsets)
      tableIndex.insert(tableIndex.begin(), d0);
    SmallVector<OpFoldResult> rotatedSizes = {b.dim(input, 0), b.dim(input, 1),
                                              b.dim(input, 2)};
    if (interleaved)
      rotatedSizes.append({b.index(pairs), b.index(2)});
    else
      rotatedSizes.append({b.index(2), b.index(pairs)});
    Value rotated = b.generic(
        ValueRange{input, input, cosines, sines}, b.empty(rotatedSizes),
        {b.affineMap(5, {d0, d1, d2, feature(member)}),
         b.affineMap(5, {d0, d1, d2, feature(partner)}),
         b.affineMap(5, tableIndex), b.affineMap(5, tableIndex),
         b.map(5, {0, 1, 2, 3, 4})},
        SmallVector<utils::IteratorType>(5, kParallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value isFirst = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::eq,
              linalg::IndexOp::create(nb, nloc, memberLoop),
              arith::ConstantIndexOp::create(nb, nloc, 0));
          Value negated = arith::NegFOp::create(nb, nloc, args[1]);
          Value other =
              arith::SelectOp::create(nb, nloc, isFirst, negated, args[1]);
          Value along = arith::MulFOp::create(nb, nloc, args[0], args[2]);
          Value across = arith::MulFOp::create(nb, nloc, other, args[3]);
          return arith::AddFOp::create(nb, nloc, along, across);
        });
    Value features = b.collapse(rotated, {{0}, {1}, {2}, {3, 4}});
    if (rotary == width)
      return features;
    // Features R … d − 1 are the input's, copied into a new tensor: written
    // into the input, the result would take the input's buffer, which may
    // be the caller's.
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.dim(input, 1),
                                       b.dim(input, 2), b.index(width)};
    SmallVector<OpFoldResult> ones(4, b.index(1));
    SmallVector<OpFoldResult> passOffsets(4, b.index(0));
    passOffsets[3] = b.index(rotary);
    SmallVector<OpFoldResult> passSizes = sizes;
    passSizes[3] = b.index(width - rotary);
    Value passed = tensor::ExtractSliceOp::create(builder, loc, input,
                                                  passOffsets, passSizes, ones);
    Value result = tensor::InsertSliceOp::create(
        builder, loc, passed, b.empty(sizes), passOffsets, passSizes, ones);
    SmallVector<OpFoldResult> zeros(4, b.index(0)), featureSizes = sizes;
    featureSizes[3] = b.index(rotary);
    return tensor::InsertSliceOp::create(builder, loc, features, result, zeros,
                                         featureSizes, ones);
  }
};
} // namespace

void mlir::mha::populateRopeAndNormToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerRmsNorm, LowerRope>(patterns.getContext());
}
