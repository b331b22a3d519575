//===- LowerScalarTransfers.cpp - One-element transfers as loads/stores ---===//
//
// LLVM 22's convert-vector-to-llvm turns a vector.transfer_read that
// broadcasts one element into a 0-d read plus a broadcast, and cannot lower
// that 0-d read from a memref whose last dimension is not unit-stride (a
// one-element strided view, e.g. a row's maximum); the cast it leaves behind
// fails translation. This pass reads such elements with memref.load first,
// together with upstream's rewrite of one-element transfers
// (vector::populateScalarVectorTransferLoweringPatterns, which no upstream
// pass applies).
//
// Retired by: convert-vector-to-llvm lowering a one-element read from a
// memref whose last dimension is strided.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHALOWERSCALARTRANSFERS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// `vector.transfer_read %m[%i...]` whose permutation map only broadcasts
/// (every result is 0): no dimension is transferred, so exactly the element
/// at the indices is read, which is `memref.load` then `vector.broadcast`.
struct BroadcastReadAsLoad : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    if (read.getMask() || !isa<MemRefType>(read.getBase().getType()))
      return rewriter.notifyMatchFailure(read, "masked, or not of a memref");
    if (!llvm::all_of(read.getPermutationMap().getResults(),
                      [](AffineExpr result) {
                        auto constant = dyn_cast<AffineConstantExpr>(result);
                        return constant && constant.getValue() == 0;
                      }))
      return rewriter.notifyMatchFailure(read, "transfers a dimension");
    Value element = memref::LoadOp::create(rewriter, read.getLoc(),
                                           read.getBase(), read.getIndices());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, read.getVectorType(),
                                                     element);
    return success();
  }
};

struct MhaLowerScalarTransfersPass
    : mha::impl::MhaLowerScalarTransfersBase<MhaLowerScalarTransfersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<BroadcastReadAsLoad>(&getContext());
    vector::populateScalarVectorTransferLoweringPatterns(
        patterns, /*benefit=*/1, /*allowMultipleUses=*/true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
