//===- StackScratch.cpp - Small scratch buffers of parallel tiles on the stack
//-===//
//
// The fused attention's tiles work in small scratch buffers (the running
// maximum and sum of a query row, a 64x64 block of scores...): tensors that
// bufferize to a memref.alloc and a memref.dealloc inside the parallel
// loop's body, i.e. a malloc and a free per tile and buffer. A decode step
// runs B·H tiles of one query over a few key blocks each, where these calls
// were a visible part of the step. A buffer of static shape whose only
// deallocation is in its own block lives within one iteration of the
// parallel loop: it becomes a memref.alloca at the start of the loop's body.
// convert-scf-to-openmp puts each iteration's body in a memref.alloca_scope
// (stacksave/stackrestore), so every tile gives its stack back; hoisted to
// the body's start, a buffer of an inner loop is one buffer for the tile's
// whole work, not one per inner iteration. (A pipeline that lowered the
// scf.parallel otherwise would need that scope of its own.) Upstream's
// promote-buffers-to-stack turns an alloc into an alloca where it stands:
// inside the key-block loop that would be a new stack slot per iteration,
// never released before the tile ends, which is why this pass hoists.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHASTACKSCRATCH
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// The buffer's size in bytes when it has a static shape and element size.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// The one memref.dealloc of `alloc` when it is in `alloc`'s block: the
/// buffer then lives within one iteration of the enclosing loops.
memref::DeallocOp soleDeallocInBlock(memref::AllocOp alloc) {
  memref::DeallocOp found;
  for (Operation *user : alloc->getUsers()) {
    // A deallocation through the base buffer of a view would free the stack.
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user))
      for (Operation *baseUser : metadata.getBaseBuffer().getUsers())
        if (isa<memref::DeallocOp>(baseUser))
          return {};
    auto dealloc = dyn_cast<memref::DeallocOp>(user);
    if (!dealloc)
      continue;
    if (found || dealloc->getBlock() != alloc->getBlock())
      return {};
    found = dealloc;
  }
  return found;
}

struct MhaStackScratchPass
    : mha::impl::MhaStackScratchBase<MhaStackScratchPass> {
  using MhaStackScratchBase::MhaStackScratchBase;

  /// The bound: the option where set, else the record (mha-strategy).
  int64_t boundBytes = 0;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      // Outermost parallel loops only: they are the threads' tiles.
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    FailureOr<int64_t> bound = mha::getOptionOrRecorded(
        getOperation(), "mha-stack-scratch", std::max<int64_t>(maxBytes, 0),
        "max-bytes",
        [](mha::CodegenSizesAttr sizes) { return sizes.getStackBytes(); });
    if (failed(bound))
      return signalPassFailure();
    boundBytes = *bound;
    for (scf::ParallelOp loop : loops)
      moveToStack(loop);
  }

  void moveToStack(scf::ParallelOp loop) {
    SmallVector<std::pair<memref::AllocOp, memref::DeallocOp>> scratch;
    int64_t total = 0;
    loop.getBody()->walk([&](memref::AllocOp alloc) {
      // A nested parallel loop's iterations each need their own buffer.
      if (alloc->getParentOfType<scf::ParallelOp>() != loop)
        return;
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes || total + *bytes > boundBytes)
        return;
      memref::DeallocOp dealloc = soleDeallocInBlock(alloc);
      if (!dealloc)
        return;
      total += *bytes;
      scratch.push_back({alloc, dealloc});
    });
    if (scratch.empty())
      return;

    OpBuilder builder(loop.getContext());
    builder.setInsertionPointToStart(loop.getBody());
    for (auto [alloc, dealloc] : scratch) {
      auto alloca =
          memref::AllocaOp::create(builder, alloc.getLoc(), alloc.getType(),
                                   ValueRange{}, alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
    }
    // Erased once every alloca is made: the builder inserts before the
    // body's first op, which may be one of these allocs.
    for (auto [alloc, dealloc] : scratch) {
      dealloc.erase();
      alloc.erase();
    }
  }
};
} // namespace
