//===- HoistAccumulators.cpp - Register blocks' accumulators in registers -===//
//
// After mha-vectorize, the accumulator block of each contraction is read
// and written at the same place in every step of its reduction loop (a
// vector.transfer_read and transfer_write of one slice of the output). As
// loop-invariant subsets, upstream's `hoistLoopInvariantSubsets` moves them
// out of the loop, which then carries the block as a vector value: the
// block stays in registers for the whole reduction. Innermost loops first,
// so that a hoisted block can move out of the next loop too
// (`moveLoopInvariantCode` first takes out what the subsets' offsets
// depend on). A read of a whole block that does not depend on the loop (a
// projection's bias, broadcast to the rows of each block it starts) stays
// in it: moved out, it would hold its registers through the loop, taking
// them from the blocks inside.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAHOISTACCUMULATORS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Whether `op` reads a block of two or more dimensions of more than one
/// element (`vector<6x64xf32>`): a register block's worth of registers.
bool isRegisterBlockRead(Operation *op) {
  auto read = dyn_cast<vector::TransferReadOp>(op);
  if (!read)
    return false;
  return llvm::count_if(read.getVectorType().getShape(),
                        [](int64_t size) { return size > 1; }) >= 2;
}

struct MhaHoistAccumulatorsPass
    : mha::impl::MhaHoistAccumulatorsBase<MhaHoistAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Post-order: inner loops before the loops around them.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      auto loopLike = cast<LoopLikeOpInterface>(loop.getOperation());
      moveLoopInvariantCode(
          loopLike.getLoopRegions(),
          [&](Value value, Region *) {
            return loopLike.isDefinedOutsideOfLoop(value);
          },
          [&](Operation *op, Region *) {
            return isMemoryEffectFree(op) && isSpeculatable(op) &&
                   !isRegisterBlockRead(op);
          },
          [&](Operation *op, Region *) { loopLike.moveOutOfLoop(op); });
      rewriter.setInsertionPoint(loop);
      (void)hoistLoopInvariantSubsets(rewriter, loopLike);
    }
  }
};
} // namespace
