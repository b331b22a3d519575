//===- BF16PairConversion.cpp - f32 to bf16, two registers at a time ------===//
//
// The bf16 paths round f32 vectors to bf16 wherever they make an operand of
// the bf16 products: the hi and lo parts of attention's P and Q
// (mha-amx-split), of the output projection's input and of the packed keys
// and values. LLVM 22 lowers `fptrunc <32 x float> to <32 x bfloat>` to a
// VCVTNEPS2BF16 per 16 lanes (each half a register) and a VINSERTF64X4 that
// joins them; VCVTNE2PS2BF16 converts two registers into one, which is what
// the target has AVX512_BF16 for. So each whole 32 lanes of such a
// truncation becomes one call of its x86 intrinsic; a vector whose length is
// not a multiple of 32 keeps LLVM's lowering.
//
// Run on buffers, after bufferization, as mha-approximate-exp: the
// `llvm.call_intrinsic` has no declared memory effects, which one-shot
// bufferization refuses.
//
// Retired by: LLVM's X86 back end selecting VCVTNE2PS2BF16 for an `fptrunc`
// of 32 f32 lanes to bf16.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHABF16PAIRCONVERSION
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// VCVTNE2PS2BF16 on 512-bit registers: (a, b) -> 32 bf16, b's 16 values
/// in the low half, a's in the high half, each rounded to nearest even.
constexpr StringLiteral kPairIntrinsic =
    "llvm.x86.avx512bf16.cvtne2ps2bf16.512";
constexpr int64_t kRegisterLanes = 16;

struct TruncateInPairs : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    auto sourceType = dyn_cast<VectorType>(op.getIn().getType());
    if (!type || !sourceType || type.isScalable() ||
        !type.getElementType().isBF16() ||
        !sourceType.getElementType().isF32() ||
        type.getNumElements() % (2 * kRegisterLanes) != 0)
      return rewriter.notifyMatchFailure(op, "not f32 to bf16 in pairs");
    // The instruction rounds to nearest even, arith's default.
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "another rounding mode");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    int64_t length = type.getNumElements();
    auto flatSource = VectorType::get({length}, b.getF32Type());
    auto flatResult = VectorType::get({length}, b.getBF16Type());
    auto pairType = VectorType::get({2 * kRegisterLanes}, b.getBF16Type());
    Value source = vector::ShapeCastOp::create(b, flatSource, op.getIn());
    Value result = arith::ConstantOp::create(
        b, flatResult, DenseElementsAttr::get(flatResult, 0.0f));
    auto slice = [&](int64_t offset) -> Value {
      return vector::ExtractStridedSliceOp::create(
          b, source, ArrayRef<int64_t>{offset},
          ArrayRef<int64_t>{kRegisterLanes}, ArrayRef<int64_t>{1});
    };
    for (int64_t offset = 0; offset < length; offset += 2 * kRegisterLanes) {
      Value pair =
          LLVM::CallIntrinsicOp::create(
              b, pairType, b.getStringAttr(kPairIntrinsic),
              ValueRange{slice(offset + kRegisterLanes), slice(offset)})
              .getResult(0);
      result = vector::InsertStridedSliceOp::create(
          b, pair, result, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{1});
    }
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, type, result);
    return success();
  }
};

struct MhaBF16PairConversionPass
    : mha::impl::MhaBF16PairConversionBase<MhaBF16PairConversionPass> {
  void runOnOperation() override {
    // Only the bf16 dot paths' functions: their target has AVX512_BF16.
    std::optional<mha::BF16Path> path =
        mha::getRecordedBF16Path(getOperation());
    if (path && *path == mha::BF16Path::F32)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncateInPairs>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
