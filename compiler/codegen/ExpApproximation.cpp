//===- ExpApproximation.cpp - math.exp for AVX-512 ------------------------===//

#include "compiler/codegen/ExpApproximation.h"
#include "compiler/Passes.h"
#include "compiler/codegen/Strategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

/// ln(2) as a high part with few bits (n · high is exact for |n| < 2^15)
/// and the rest (Cody and Waite).
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
constexpr float kLog2E = 1.44269504088896341f;

/// Below -105, e^x rounds to 0 in f32 (as 2^-151.5 does); above 89 it is
/// +inf. Clamping there keeps n within what ldexp needs, and r small.
constexpr float kMinArgument = -105.0f;
constexpr float kMaxArgument = 89.0f;
/// Below the least n of a clamped argument, round(-105 · log2(e)) = -151.
constexpr float kBelowLeastExponent = -152.0f;

struct ExpWithScalef : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32() || type.isScalable() ||
        type.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "not a vector of f32");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    // llvm.ldexp takes LLVM's (1-D) vectors.
    auto flat = VectorType::get({type.getNumElements()}, b.getF32Type());
    auto flatIndices = VectorType::get({type.getNumElements()}, b.getI32Type());
    auto splat = [&](float value) -> Value {
      return arith::ConstantOp::create(
          b, flat, DenseElementsAttr::get(flat, b.getF32FloatAttr(value)));
    };
    Value x = op.getOperand();
    if (type.getRank() != 1)
      x = vector::ShapeCastOp::create(b, flat, x);

    // compare-and-select clamps: NaN fails both compares and stays.
    auto clamp = [&](Value value, float bound, arith::CmpFPredicate beyond) {
      Value limit = splat(bound);
      Value out = arith::CmpFOp::create(b, beyond, value, limit);
      return arith::SelectOp::create(b, out, limit, value).getResult();
    };
    x = clamp(x, kMinArgument, arith::CmpFPredicate::OLT);
    x = clamp(x, kMaxArgument, arith::CmpFPredicate::OGT);

    Value n = math::RoundEvenOp::create(
        b, arith::MulFOp::create(b, x, splat(kLog2E)));
    Value r = math::FmaOp::create(b, n, splat(-kLn2High), x);
    r = math::FmaOp::create(b, n, splat(-kLn2Low), r);
    Value p = splat(kExpCoefficients[std::size(kExpCoefficients) - 1]);
    for (size_t i = std::size(kExpCoefficients) - 1; i-- > 0;)
      p = math::FmaOp::create(b, p, r, splat(kExpCoefficients[i]));

    // n is NaN only where x is, and p is NaN there already: maxnumf gives
    // fptosi a number (its result for NaN would be poison).
    Value exponent = arith::FPToSIOp::create(
        b, flatIndices,
        arith::MaxNumFOp::create(b, n, splat(kBelowLeastExponent)));
    // The intrinsic by name: the llvm.intr.ldexp op takes a scalar
    // exponent only.
    Value result =
        LLVM::CallIntrinsicOp::create(b, flat, b.getStringAttr("llvm.ldexp"),
                                      ValueRange{p, exponent})
            .getResult(0);
    if (type.getRank() != 1)
      result = vector::ShapeCastOp::create(b, type, result);
    rewriter.replaceOp(op, result);
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
    // what the other pattern leaves (scalars; every exp elsewhere).
    if (vectorLanes >= 16)
      mha::populateScalefExpPatterns(patterns, /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == "math.exp"; });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateScalefExpPatterns(RewritePatternSet &patterns,
                                          PatternBenefit benefit) {
  patterns.add<ExpWithScalef>(patterns.getContext(), benefit);
}
