//===- ExpApproximation.cpp - math.exp for AVX-512 ------------------------===//

#include "compiler/codegen/ExpApproximation.h"
#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <type_traits>

namespace mlir::mha {
#define GEN_PASS_DEF_MHAAPPROXIMATEEXP
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// e^r on [-ln2/2, ln2/2], lowest degree first: a fit that minimizes the
/// relative error (1.9e-9 in exact arithmetic), rounded to f32.
constexpr float kExpCoefficients[] = {
    1.0f,           1.0f,           0x1.fffffap-2f, 0x1.55540ap-3f,
    0x1.55589ap-5f, 0x1.126d0cp-7f, 0x1.6ab978p-10f};

/// 2^r on [-1/2, 1/2], lowest degree first: a fit that minimizes the
/// relative error (1.9e-9 in exact arithmetic, 1.6e-8 with the
/// coefficients rounded to f32).
constexpr float kExp2Coefficients[] = {
    1.0f,           0x1.62e43p-1f,   0x1.ebfbdap-3f, 0x1.c6aed4p-5f,
    0x1.3b2dbep-7f, 0x1.5f4568p-10f, 0x1.41d1aep-13f};

/// ln(2) as a high part with few bits (n · high is exact for |n| < 2^15)
/// and the rest (Cody and Waite).
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
constexpr float kLog2E = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;

/// Below -105, e^x rounds to 0 in f32 (as 2^-151.5 does); above 89 it is
/// +inf. Clamping there keeps n within what the scaling needs, and r small.
constexpr float kMinArgument = -105.0f;
constexpr float kMaxArgument = 89.0f;
/// The same bounds for 2^x: below -152 it rounds to 0 (2^-150 is half the
/// least subnormal, a tie that goes to 0), above 129 it is +inf.
constexpr float kMinExp2Argument = -152.0f;
constexpr float kMaxExp2Argument = 129.0f;
/// Below the least n of a clamped argument (-151 for e^x, -152 for 2^x).
constexpr float kBelowLeastExponent = -153.0f;

/// VSCALEFPS on one 512-bit register: a · 2^floor(b), unmasked, in the
/// current rounding mode.
constexpr StringLiteral kScalefIntrinsic = "llvm.x86.avx512.mask.scalef.ps.512";
constexpr int64_t kScalefLanes = 16;
constexpr int32_t kCurrentRounding = 4;

/// What the exp and exp2 patterns share: the f32 vector of `op`'s result,
/// flattened (LLVM's vectors are 1-D), and the arithmetic on it.
class ExpBuilder {
public:
  ExpBuilder(ImplicitLocOpBuilder &b, VectorType type)
      : b(b), type(type),
        flat(VectorType::get({type.getNumElements()}, b.getF32Type())) {}

  Value flatten(Value x) {
    return type.getRank() == 1 ? x : vector::ShapeCastOp::create(b, flat, x);
  }
  Value unflatten(Value x) {
    return type.getRank() == 1 ? x : vector::ShapeCastOp::create(b, type, x);
  }

  Value splat(float value) {
    return arith::ConstantOp::create(
        b, flat, DenseElementsAttr::get(flat, b.getF32FloatAttr(value)));
  }

  /// [low, high], compare-and-select: NaN fails both compares and stays.
  Value clamp(Value x, float low, float high) {
    auto bound = [&](Value value, float limit, arith::CmpFPredicate beyond) {
      Value splatLimit = splat(limit);
      Value out = arith::CmpFOp::create(b, beyond, value, splatLimit);
      return arith::SelectOp::create(b, out, splatLimit, value).getResult();
    };
    return bound(bound(x, low, arith::CmpFPredicate::OLT), high,
                 arith::CmpFPredicate::OGT);
  }

  /// The polynomial with `coefficients` (lowest degree first) at r, Horner.
  Value polynomial(ArrayRef<float> coefficients, Value r) {
    Value p = splat(coefficients.back());
    for (float coefficient : llvm::reverse(coefficients.drop_back()))
      p = math::FmaOp::create(b, p, r, splat(coefficient));
    return p;
  }

  /// p · 2^n for an integral n (as f32) within [-153, 129]. Where the
  /// vector is whole registers, VSCALEFPS takes n as it is, one per
  /// register; it saturates to 0 and +inf, rounds to subnormals and keeps
  /// NaN. Elsewhere `llvm.ldexp` (which LLVM also makes VSCALEFPS, after
  /// converting n to integers and back): n is first made a number, since
  /// fptosi of NaN is poison (p is NaN there already).
  Value scaleByPowerOf2(Value p, Value n) {
    int64_t length = flat.getNumElements();
    if (length % kScalefLanes == 0) {
      auto registerType = VectorType::get({kScalefLanes}, b.getF32Type());
      Value allLanes =
          arith::ConstantOp::create(b, b.getI16Type(), b.getI16IntegerAttr(-1));
      Value rounding = arith::ConstantOp::create(
          b, b.getI32Type(), b.getI32IntegerAttr(kCurrentRounding));
      Value result = splat(0.0f);
      for (int64_t offset = 0; offset < length; offset += kScalefLanes) {
        auto part = [&](Value vector) -> Value {
          return vector::ExtractStridedSliceOp::create(
              b, vector, ArrayRef<int64_t>{offset},
              ArrayRef<int64_t>{kScalefLanes}, ArrayRef<int64_t>{1});
        };
        Value pPart = part(p);
        Value scaled =
            LLVM::CallIntrinsicOp::create(
                b, registerType, b.getStringAttr(kScalefIntrinsic),
                ValueRange{pPart, part(n), pPart, allLanes, rounding})
                .getResult(0);
        result = vector::InsertStridedSliceOp::create(
            b, scaled, result, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{1});
      }
      return result;
    }
    auto indices = VectorType::get({length}, b.getI32Type());
    Value exponent = arith::FPToSIOp::create(
        b, indices, arith::MaxNumFOp::create(b, n, splat(kBelowLeastExponent)));
    // The intrinsic by name: the llvm.intr.ldexp op takes a scalar
    // exponent only.
    return LLVM::CallIntrinsicOp::create(b, flat, b.getStringAttr("llvm.ldexp"),
                                         ValueRange{p, exponent})
        .getResult(0);
  }

private:
  ImplicitLocOpBuilder &b;
  VectorType type, flat;
};

/// The f32 vector type of `op`'s result, or null.
VectorType f32VectorType(Operation *op) {
  auto type = dyn_cast<VectorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isF32() || type.isScalable() ||
      type.getRank() == 0)
    return {};
  return type;
}

/// `math.exp` or `math.exp2` of an f32 vector as p(r) · 2^n.
template <typename ExpOp> struct ExpWithScalef : OpRewritePattern<ExpOp> {
  using OpRewritePattern<ExpOp>::OpRewritePattern;
  static constexpr bool kBase2 = std::is_same_v<ExpOp, math::Exp2Op>;

  LogicalResult matchAndRewrite(ExpOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = f32VectorType(op);
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a vector of f32");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    ExpBuilder e(b, type);
    Value x = e.flatten(op.getOperand()), n, r;
    if constexpr (kBase2) {
      x = e.clamp(x, kMinExp2Argument, kMaxExp2Argument);
      // r = x - n is exact (Sterbenz): no Cody-Waite, no multiply.
      n = math::RoundEvenOp::create(b, x);
      r = arith::SubFOp::create(b, x, n);
    } else {
      x = e.clamp(x, kMinArgument, kMaxArgument);
      n = math::RoundEvenOp::create(
          b, arith::MulFOp::create(b, x, e.splat(kLog2E)));
      r = math::FmaOp::create(b, n, e.splat(-kLn2High), x);
      r = math::FmaOp::create(b, n, e.splat(-kLn2Low), r);
    }
    Value p = e.polynomial(kBase2 ? ArrayRef<float>(kExp2Coefficients)
                                  : ArrayRef<float>(kExpCoefficients),
                           r);
    rewriter.replaceOp(op, e.unflatten(e.scaleByPowerOf2(p, n)));
    return success();
  }
};

/// exp2(x) = exp(x · ln 2) for what the AVX-512 form does not take
/// (scalars, targets without AVX-512), so that upstream's approximation of
/// exp computes it: upstream has none for exp2.
struct Exp2AsExp : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Value scaled = arith::MulFOp::create(
        rewriter, loc, op.getOperand(),
        createScalarOrSplatConstant(rewriter, loc, type, APFloat(kLn2)));
    rewriter.replaceOpWithNewOp<math::ExpOp>(op, scaled);
    return success();
  }
};

struct MhaApproximateExpPass
    : mha::impl::MhaApproximateExpBase<MhaApproximateExpPass> {
  using MhaApproximateExpBase::MhaApproximateExpBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    int64_t vectorLanes = lanes;
    if (mha::CodegenSizesAttr sizes = mha::getRecordedCodegenSizes(func))
      vectorLanes = sizes.getLanes();
    RewritePatternSet patterns(&getContext());
    // 16 f32 lanes: AVX-512, which has VSCALEFPS. Upstream's form takes
    // what those patterns leave (scalars; every exp elsewhere), exp2 as
    // exp(x · ln 2).
    if (vectorLanes >= 16)
      mha::populateScalefExpPatterns(patterns, /*benefit=*/2);
    patterns.add<Exp2AsExp>(&getContext());
    // And softcap's tanh: LLVM lowers a vector llvm.intr.tanh to one libm
    // call per lane, upstream's rational approximation stays in vectors.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "math.exp" || name == "math.tanh";
    });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateScalefExpPatterns(RewritePatternSet &patterns,
                                          PatternBenefit benefit) {
  patterns.add<ExpWithScalef<math::ExpOp>, ExpWithScalef<math::Exp2Op>>(
      patterns.getContext(), benefit);
}
