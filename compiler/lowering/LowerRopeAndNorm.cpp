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

#include "compiler/lowering/LowerToLinalg.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
              GenericBuilder &b) const override {
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

/// The frequencies of a rotation of `rotary` features: the operand's, or
/// base^(−2i / R), which depend on the attributes alone and are folded
/// here, in f64.
Value rotaryFrequencies(RopeOp op, Value given, OpBuilder &builder,
                        Location loc) {
  if (given)
    return given;
  int64_t rotary = op.getRotaryDim(), pairs = rotary / 2;
  double base = op.getBase().convertToDouble();
  SmallVector<double> values;
  for (int64_t i = 0; i < pairs; ++i)
    values.push_back(std::pow(base, -2.0 * double(i) / double(rotary)));
  auto type = RankedTensorType::get({pairs}, builder.getF64Type());
  return arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(type, ArrayRef(values)));
}

/// The body of the tables' generic: cos θ · mscale and sin θ · mscale of
/// θ = (p / scale) · frequency, p the index of loop `tokenLoop` (plus the
/// sequence's offset, args[1], where given) and the frequency args[0]. The
/// angle is reduced in f64 to r = θ − k·π/2 in [−π/4, π/4] (Cody–Waite:
/// π/2 in two parts, the first exact in 33 bits), whose sine and cosine
/// are their Taylor polynomials to r¹³ and r¹⁴ (error below 1e-13, where an
/// f32 result needs 6e-8); the quadrant k mod 4 swaps and negates them.
/// Vector f64 arithmetic throughout, where math.sin and math.cos of f64
/// would be a libm call per element.
void yieldRotaryWaves(OpBuilder &nb, Location nloc, ValueRange args,
                      unsigned tokenLoop, bool offsets, double scale,
                      double mscale) {
  Type f64 = nb.getF64Type(), i64 = nb.getI64Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(nb, nloc, nb.getF64FloatAttr(value));
  };
  auto integer = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(nb, nloc, nb.getI64IntegerAttr(value));
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(nb, nloc, x, y);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(nb, nloc, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubFOp::create(nb, nloc, x, y);
  };
  Value frequency = args[0];
  if (!frequency.getType().isF64())
    frequency = arith::ExtFOp::create(nb, nloc, f64, frequency);
  Value position = arith::IndexCastOp::create(
      nb, nloc, i64, linalg::IndexOp::create(nb, nloc, tokenLoop));
  if (offsets)
    position = arith::AddIOp::create(nb, nloc, position, args[1]);
  Value angle = mul(mul(arith::SIToFPOp::create(nb, nloc, f64, position),
                        constant(1.0 / scale)),
                    frequency);
  Value quadrant = math::FloorOp::create(
      nb, nloc, add(mul(angle, constant(2.0 / M_PI)), constant(0.5)));
  Value r = sub(sub(angle, mul(quadrant, constant(1.57079632673412561417e+00))),
                mul(quadrant, constant(6.07710050650619224932e-11)));
  Value r2 = mul(r, r);
  // Horner in r² of the coefficients from the highest.
  auto horner = [&](ArrayRef<double> coefficients) {
    Value sum = constant(coefficients.front());
    for (double coefficient : coefficients.drop_front())
      sum = add(mul(sum, r2), constant(coefficient));
    return sum;
  };
  Value sinR =
      mul(r, horner({1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                     -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0}));
  Value cosR =
      horner({-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0,
              1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0});
  Value k = arith::FPToSIOp::create(nb, nloc, i64, quadrant);
  auto bit = [&](Value value, int64_t mask) -> Value {
    return arith::CmpIOp::create(
        nb, nloc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(nb, nloc, value, integer(mask)), integer(0));
  };
  // θ = r + kπ/2: k odd swaps sine and cosine; the sine is
  // negated for k mod 4 in {2, 3}, the cosine for {1, 2}.
  Value swap = bit(k, 1);
  Value sinBase = arith::SelectOp::create(nb, nloc, swap, cosR, sinR);
  Value cosBase = arith::SelectOp::create(nb, nloc, swap, sinR, cosR);
  auto negatedIf = [&](Value condition, Value value) -> Value {
    return arith::SelectOp::create(
        nb, nloc, condition, arith::NegFOp::create(nb, nloc, value), value);
  };
  Value sinValue = negatedIf(bit(k, 2), sinBase);
  Value cosValue = negatedIf(
      bit(arith::AddIOp::create(nb, nloc, k, integer(1)), 2), cosBase);
  auto result = [&](Value wave) -> Value {
    return arith::TruncFOp::create(nb, nloc, nb.getF32Type(),
                                   mul(wave, constant(mscale)));
  };
  linalg::YieldOp::create(nb, nloc,
                          ValueRange{result(cosValue), result(sinValue)});
}

/// The cos and sin tables [T, R/2] (or [B, T, R/2] with offsets) of `op`,
/// in one generic. θ is computed in f64: positions reach the hundreds of
/// thousands, where an f32 angle would be off by more than the tolerance.
std::pair<Value, Value> buildRotaryTables(RopeOp op, Value input,
                                          Value frequencies, Value offsets,
                                          GenericBuilder &b) {
  int64_t pairs = op.getRotaryDim() / 2;
  double scale = op.getScale().convertToDouble();
  double mscale = op.getMscale().convertToDouble();
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
  tableMaps.push_back(tableMaps.back());
  Value cosInit = b.empty(tableSizes), sinInit = b.empty(tableSizes);
  auto tables = linalg::GenericOp::create(
      b.builder, b.loc, TypeRange{cosInit.getType(), sinInit.getType()},
      tableInputs, ValueRange{cosInit, sinInit}, tableMaps, tableIterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        yieldRotaryWaves(nb, nloc, args, tokenLoop, bool(offsets), scale,
                         mscale);
      });
  return {tables.getResult(0), tables.getResult(1)};
}

/// `input` [B, H, T, d] rotated by the tables (Q or K with their rotary
/// features turned, the rest copied).
Value rotateHeads(RopeOp op, Value input, Value cosines, Value sines,
                  Value offsets, GenericBuilder &b) {
  OpBuilder &builder = b.builder;
  Location loc = b.loc;
  int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(3);
  int64_t rotary = op.getRotaryDim();
  int64_t pairs = rotary / 2;
  bool interleaved = op.isInterleaved();
  // The rotation, one `scf.forall` iteration per head of each sequence
  // (rows of the input as [B·H, T, d]), each a 2-D generic over
  // [T, R/2] that mha-vectorize takes whole rows of: member 0 of each
  // pair (feature i, half, or 2i, interleaved) and member 1 (feature
  // R/2 + i, or 2i + 1) are read and written through slices of the
  // head's [T, d] (unit stride for half, stride 2 for interleaved), and
  // the generic writes both, a·cos − b·sin and b·cos + a·sin. Features
  // R … d − 1 are copied from the input (written into the input, the
  // result would take its buffer, which may be the caller's).
  int64_t heads = cast<RankedTensorType>(input.getType()).getDimSize(1);
  Value rows = b.collapse(input, {{0, 1}, {2}, {3}});
  OpFoldResult numRows = b.dim(rows, 0), tokens = b.dim(rows, 1);
  SmallVector<OpFoldResult> rowsSizes = {numRows, tokens, b.index(width)};
  auto forall = scf::ForallOp::create(builder, loc, ArrayRef{numRows},
                                      ValueRange{b.empty(rowsSizes)},
                                      /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(forall.getBody());
    Value row = forall.getInductionVar(0);
    Value acc = forall.getRegionIterArgs()[0];
    OpFoldResult zero = b.index(0), one = b.index(1);
    int64_t staticTokens =
        getConstantIntValue(tokens).value_or(ShapedType::kDynamic);
    auto headOf = [&](Value tensor) -> Value {
      auto type =
          RankedTensorType::get({staticTokens, width}, builder.getF32Type());
      return tensor::ExtractSliceOp::create(
          builder, loc, type, tensor, ArrayRef<OpFoldResult>{row, zero, zero},
          ArrayRef<OpFoldResult>{one, tokens, b.index(width)},
          ArrayRef<OpFoldResult>{one, one, one});
    };
    OpFoldResult stride = b.index(interleaved ? 2 : 1);
    auto member = [&](Value head, int64_t c) -> Value {
      OpFoldResult first = b.index(interleaved ? c : c * pairs);
      return tensor::ExtractSliceOp::create(
          builder, loc, head, ArrayRef<OpFoldResult>{zero, first},
          ArrayRef<OpFoldResult>{tokens, b.index(pairs)},
          ArrayRef<OpFoldResult>{one, stride});
    };
    auto insertMember = [&](Value part, Value head, int64_t c) -> Value {
      OpFoldResult first = b.index(interleaved ? c : c * pairs);
      return tensor::InsertSliceOp::create(
          builder, loc, part, head, ArrayRef<OpFoldResult>{zero, first},
          ArrayRef<OpFoldResult>{tokens, b.index(pairs)},
          ArrayRef<OpFoldResult>{one, stride});
    };
    Value source = headOf(rows);
    Value target = headOf(acc);
    Value cosine = cosines, sine = sines;
    if (offsets) {
      // The tables' [T, R/2] of this row's sequence.
      Value sequence = arith::DivUIOp::create(
          builder, loc, row,
          arith::ConstantIndexOp::create(builder, loc, heads));
      auto slice = [&](Value table) -> Value {
        auto type =
            RankedTensorType::get({staticTokens, pairs}, builder.getF32Type());
        return tensor::ExtractSliceOp::create(
            builder, loc, type, table,
            ArrayRef<OpFoldResult>{sequence, zero, zero},
            ArrayRef<OpFoldResult>{one, tokens, b.index(pairs)},
            ArrayRef<OpFoldResult>{one, one, one});
      };
      cosine = slice(cosines);
      sine = slice(sines);
    }
    AffineMap identity = b.map(2, {0, 1});
    Value into0 = member(target, 0), into1 = member(target, 1);
    auto rotation = linalg::GenericOp::create(
        builder, loc, TypeRange{into0.getType(), into1.getType()},
        ValueRange{member(source, 0), member(source, 1), cosine, sine},
        ValueRange{into0, into1}, SmallVector<AffineMap>(6, identity),
        SmallVector<utils::IteratorType>(2, kParallel),
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          Value a = args[0], bb = args[1], c = args[2], s = args[3];
          Value first = arith::SubFOp::create(
              nb, nloc, arith::MulFOp::create(nb, nloc, a, c),
              arith::MulFOp::create(nb, nloc, bb, s));
          Value second = arith::AddFOp::create(
              nb, nloc, arith::MulFOp::create(nb, nloc, bb, c),
              arith::MulFOp::create(nb, nloc, a, s));
          linalg::YieldOp::create(nb, nloc, ValueRange{first, second});
        });
    Value head = insertMember(rotation.getResult(0), target, 0);
    head = insertMember(rotation.getResult(1), head, 1);
    if (rotary < width) {
      SmallVector<OpFoldResult> passOffsets = {zero, b.index(rotary)};
      SmallVector<OpFoldResult> passSizes = {tokens, b.index(width - rotary)};
      SmallVector<OpFoldResult> ones = {one, one};
      Value passed = tensor::ExtractSliceOp::create(
          builder, loc, source, passOffsets, passSizes, ones);
      head = tensor::InsertSliceOp::create(builder, loc, passed, head,
                                           passOffsets, passSizes, ones);
    }
    builder.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        builder, loc, head, acc, ArrayRef<OpFoldResult>{row, zero, zero},
        ArrayRef<OpFoldResult>{one, tokens, b.index(width)},
        ArrayRef<OpFoldResult>{one, one, one});
  }
  SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.dim(input, 1),
                                     b.dim(input, 2), b.index(width)};
  return b.expand(forall.getResult(0), {{0, 1}, {2}, {3}}, sizes);
}

struct LowerRope : F32Pattern<RopeOp> {
  using F32Pattern::F32Pattern;

  Value lower(RopeOp op, OpAdaptor adaptor, GenericBuilder &b) const override {
    Value frequencies =
        rotaryFrequencies(op, adaptor.getInvFreq(), b.builder, b.loc);
    auto [cosines, sines] = buildRotaryTables(
        op, adaptor.getInput(), frequencies, adaptor.getOffsets(), b);
    return rotateHeads(op, adaptor.getInput(), cosines, sines,
                       adaptor.getOffsets(), b);
  }
};
} // namespace

void mlir::mha::populateRopeAndNormToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerRmsNorm, LowerRope>(patterns.getContext());
}
