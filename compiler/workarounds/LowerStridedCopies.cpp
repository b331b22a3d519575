//===- LowerStridedCopies.cpp - Strided copies as loops -------------------===//
//
// finalize-memref-to-llvm lowers a memref.copy between buffers that are not
// both contiguous to a call of `memrefCopy` from MLIR's C runner utilities,
// a library neither mha-run's JIT nor mha-compile's shared libraries link.
// Such copies (bufferization makes them for strided tiles) become
// linalg.copy, which convert-linalg-to-loops turns into plain loops.
//
// Retired by: finalize-memref-to-llvm lowering a copy between buffers that
// are not both contiguous to code of its own, not to a call of `memrefCopy`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHALOWERSTRIDEDCOPIES
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Whether `type` is laid out as one contiguous row-major block (the copy
/// then lowers to a memcpy intrinsic, no runtime call).
bool isContiguous(MemRefType type) {
  // finalize-memref-to-llvm takes the memcpy path for a non-identity layout
  // only when it holds elements.
  return type.getLayout().isIdentity() ||
         (memref::isStaticShapeAndContiguousRowMajor(type) &&
          type.getNumElements() > 0);
}

struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target)
      return rewriter.notifyMatchFailure(copy, "unranked (linalg.copy is not)");
    if (isContiguous(source) && isContiguous(target))
      return rewriter.notifyMatchFailure(copy, "lowers to a memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }
};

struct MhaLowerStridedCopiesPass
    : mha::impl::MhaLowerStridedCopiesBase<MhaLowerStridedCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerStridedCopiesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateLowerStridedCopiesPatterns(
    RewritePatternSet &patterns) {
  patterns.add<StridedCopyToLinalg>(patterns.getContext());
}
