//===- LowerToLinalg.cpp - The steps of the layer to linalg on tensors ----===//
//
// Each mha op becomes linalg named ops where one exists (matmul, transpose,
// broadcast, fill) and `linalg.generic` contractions where the data layout
// needs its own indexing maps: per-head weights, the output projection of
// the heads, and the two contractions of attention, whose key/value operand
// reads head `h floordiv (H / Hkv)` so that grouped-query attention never
// copies keys or values. This file holds the projections, the heads, the
// cache appends and the pass (the int8 caches are LowerQuantizedCache.cpp's);
// attention is LowerSdpa.cpp's.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"
#include "compiler/Passes.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/Sequence.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHALOWERTOLINALG
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

Type mlir::mha::findNonF32ElementType(Operation *op) {
  // An append moves rows: a bf16 cache (mha-widen-bf16 leaves the op bf16,
  // so that the cache is updated in place) is lowered as it is.
  if (isa<CacheAppendOp, PagedCacheAppendOp, PagedViewOp>(op) &&
      getElementTypeOrSelf(op->getResult(0).getType()).isBF16())
    return {};
  auto check = [](Type type) -> Type {
    Type element = getElementTypeOrSelf(type);
    return isa<FloatType>(element) && !element.isF32() ? element : Type();
  };
  for (Type type : op->getOperandTypes())
    if (Type bad = check(type))
      return bad;
  for (Type type : op->getResultTypes())
    if (Type bad = check(type))
      return bad;
  return {};
}

namespace {
//===----------------------------------------------------------------------===//
// mha.project
//===----------------------------------------------------------------------===//

struct LowerProject : F32Pattern<ProjectOp> {
  using F32Pattern::F32Pattern;

  Value lower(ProjectOp op, OpAdaptor adaptor,
              GenericBuilder &b) const override {
    if (op.isPerHead())
      return lowerPerHead(adaptor, b);
    if (std::optional<int64_t> heads = op.getNumHeads())
      return lowerWritingHeads(adaptor, *heads, b);
    return b.rowsTimesWeight(adaptor.getInput(), adaptor.getWeight(),
                             adaptor.getBias());
  }

private:
  /// The accumulator of a projection into heads `[B, H, T, d]`: the bias
  /// (laid out head after head) viewed as `[H, d]` and repeated over batch
  /// and tokens, or zeros.
  static Value headsInit(Value bias, ArrayRef<OpFoldResult> sizes,
                         GenericBuilder &b) {
    if (bias)
      bias = b.expand(bias, {{0, 1}}, {sizes[1], sizes[3]});
    return b.biasOrZeros(bias, sizes, {0, 2});
  }

  /// `[B, H, T, w] · [H, w, d]`, or `[B, T, H·w]` read as `[B, T, H, w]`:
  /// head h multiplies its own slice by its own matrix.
  static Value lowerPerHead(OpAdaptor adaptor, GenericBuilder &b) {
    Value input = adaptor.getInput();
    Value weight = adaptor.getWeight();
    ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape();
    int64_t heads = w[0], sliceWidth = w[1], outWidth = w[2];
    // (batch, head, token, column, row of the slice)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    AffineMap inputMap = b.affineMap(5, {d0, d1, d2, d4});
    OpFoldResult tokens = b.dim(input, 2);
    if (cast<RankedTensorType>(input.getType()).getRank() == 3) {
      // Reading the slices in place is what saves split_heads' copy.
      tokens = b.dim(input, 1);
      input = b.expand(
          input, {{0}, {1}, {2, 3}},
          {b.dim(input, 0), tokens, b.index(heads), b.index(sliceWidth)});
      inputMap = b.affineMap(5, {d0, d2, d1, d4});
    }
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.index(heads), tokens,
                                       b.index(outWidth)};
    Value init = headsInit(adaptor.getBias(), sizes, b);
    return b.markProjection(b.contraction(
        input, weight, init,
        {inputMap, b.affineMap(5, {d1, d4, d3}),
         b.affineMap(5, {d0, d1, d2, d3})},
        {kParallel, kParallel, kParallel, kParallel, kReduction}));
  }

  /// `[B, T, D] · [D, H·d]` written as heads `[B, H, T, d]`: the weight is
  /// read as `[D, H, d]`, so each head's columns land in place and no
  /// transposed copy is made.
  static Value lowerWritingHeads(OpAdaptor adaptor, int64_t heads,
                                 GenericBuilder &b) {
    Value input = adaptor.getInput();
    auto weightType = cast<RankedTensorType>(adaptor.getWeight().getType());
    int64_t inWidth = weightType.getDimSize(0);
    int64_t headDim = weightType.getDimSize(1) / heads;
    Value weight =
        b.expand(adaptor.getWeight(), {{0}, {1, 2}},
                 {b.index(inWidth), b.index(heads), b.index(headDim)});
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.index(heads),
                                       b.dim(input, 1), b.index(headDim)};
    Value init = headsInit(adaptor.getBias(), sizes, b);
    // (batch, head, token, column, input column)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    return b.markProjection(b.contraction(
        input, weight, init,
        {b.affineMap(5, {d0, d2, d4}), b.affineMap(5, {d4, d1, d3}),
         b.affineMap(5, {d0, d1, d2, d3})},
        {kParallel, kParallel, kParallel, kParallel, kReduction}));
  }
};

//===----------------------------------------------------------------------===//
// mha.split_heads and mha.concat_heads
//===----------------------------------------------------------------------===//

struct LowerSplitHeads : F32Pattern<SplitHeadsOp> {
  using F32Pattern::F32Pattern;

  Value lower(SplitHeadsOp op, OpAdaptor adaptor,
              GenericBuilder &b) const override {
    // [B, T, H·d] -> [B, T, H, d] -> [B, H, T, d].
    Value input = adaptor.getInput();
    int64_t heads = op.getNumHeads();
    int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(2);
    Value split = b.expand(input, {{0}, {1}, {2, 3}},
                           {b.dim(input, 0), b.dim(input, 1), b.index(heads),
                            b.index(width / heads)});
    return b.transpose(split, {0, 2, 1, 3});
  }
};

//===----------------------------------------------------------------------===//
// mha.cache_append
//===----------------------------------------------------------------------===//

/// The loop over the sequences that every cache append shares
/// (buildCacheAppendLoop); the tools check the lengths before a call and
/// say so where a sequence has no room.
struct LowerCacheAppend : F32Pattern<CacheAppendOp> {
  using F32Pattern::F32Pattern;

  Value lower(CacheAppendOp op, OpAdaptor adaptor,
              GenericBuilder &b) const override {
    return buildCacheAppendLoop(b.builder, b.loc, adaptor.getLengths(),
                                adaptor.getUpdate(), adaptor.getCache())
        .front();
  }
};

struct LowerConcatHeads : F32Pattern<ConcatHeadsOp> {
  using F32Pattern::F32Pattern;

  Value lower(ConcatHeadsOp op, OpAdaptor adaptor,
              GenericBuilder &b) const override {
    // [B, H, T, d] -> [B, T, H, d] -> [B, T, H·d].
    Value tokensFirst = b.transpose(adaptor.getInput(), {0, 2, 1, 3});
    return b.collapse(tokensFirst, {{0}, {1}, {2, 3}});
  }
};

//===----------------------------------------------------------------------===//
// mha.output_project
//===----------------------------------------------------------------------===//

struct LowerOutputProject : F32Pattern<OutputProjectOp> {
  using F32Pattern::F32Pattern;

  Value lower(OutputProjectOp op, OpAdaptor adaptor,
              GenericBuilder &b) const override {
    if (!op.readsHeads())
      return b.rowsTimesWeight(adaptor.getInput(), adaptor.getWeight(),
                               adaptor.getBias());

    // [B, H, T, dv] · [H·dv, D_out]: contract over head and value dimension
    // at once, reading W as [H, dv, D_out], so no concatenated copy is made.
    Value input = adaptor.getInput();
    ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
    int64_t heads = in[1], valueDim = in[3];
    int64_t outWidth =
        cast<RankedTensorType>(adaptor.getWeight().getType()).getDimSize(1);
    Value weight =
        b.expand(adaptor.getWeight(), {{0, 1}, {2}},
                 {b.index(heads), b.index(valueDim), b.index(outWidth)});
    Value init = b.biasOrZeros(
        adaptor.getBias(),
        {b.dim(input, 0), b.dim(input, 2), b.index(outWidth)}, {0, 1});
    // (batch, token, output column, head, value column)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    return b.markProjection(b.contraction(
        input, weight, init,
        {b.affineMap(5, {d0, d3, d1, d4}), b.affineMap(5, {d3, d4, d2}),
         b.affineMap(5, {d0, d1, d2})},
        {kParallel, kParallel, kParallel, kReduction, kReduction}));
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct MhaLowerToLinalgPass
    : mha::impl::MhaLowerToLinalgBase<MhaLowerToLinalgPass> {
  void runOnOperation() override {
    // Say why an op cannot be lowered before the conversion does, which
    // would only report that it failed to legalize.
    bool unsupported = false;
    getOperation().walk([&](Operation *op) {
      if (!isa<MhaDialect>(op->getDialect()))
        return;
      if (isa<AttentionOp>(op)) {
        op->emitOpError("must be expanded before lowering to linalg (run "
                        "mha-expand first)");
        unsupported = true;
      } else if (Type bad = findNonF32ElementType(op)) {
        op->emitOpError() << "expects f32 elements to lower to linalg, got "
                          << bad;
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<MhaDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateMhaToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateMhaToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerProject, LowerSplitHeads, LowerConcatHeads,
               LowerOutputProject, LowerCacheAppend>(patterns.getContext());
  populateSdpaToLinalgPatterns(patterns);
  populateRopeAndNormToLinalgPatterns(patterns);
  populateAttentionWeightsToLinalgPatterns(patterns);
  populateQuantizedCacheToLinalgPatterns(patterns);
  populatePagedCacheToLinalgPatterns(patterns);
}
