//===- OutlineRegisterBlocks.cpp - `?` layers' register blocks as calls ---===//
//
// A register block's reduction loop (mha-vectorize, mha-hoist-accumulators,
// mha-unroll-reductions: the accumulators in vector registers, per step a
// row of the right operand and a broadcast per row) is the layer's hot
// code. Inlined in a layer with `?` sizes, it is compiled in a parallel
// region where many more values (sizes, strides, bounds) are live, and
// LLVM 22's loop strength reduction then addresses the right operand from
// the loop counter, `(k << 8)` and `((k | 1) << 8)`, with a second counter
// for the exit test, where in a static layer it steps a pointer: five
// scalar instructions more per 48 FMAs, which compete with them for ports.
// The same graph ran 4 to 8 % slower with `?` batch and sequence than with
// static ones at (4,256,768,12) and (1,512,512,8), in the same process
// (docs/performance.md). In a function of its own (internal, never
// inlined), each loop is compiled with only its own operands live and gets
// the static layer's code, as a BLIS micro-kernel is one call per block of
// rows x columns x the whole reduction.
//
// Outlined: in functions with a `?` size, the outermost scf.for of a
// register block's reduction (its results are vectors, its body runs at
// least `min-steps` (mha.codegen's outline_steps) vector.contract ops per
// call: the projections', not
// attention's blocks of 64 or 128 steps), after bufferization (its operands
// are buffers and indices), together with the read that starts its
// accumulators and the write of its result. Upstream's
// scf::outlineSingleBlockRegion does the outlining; the constants the loop
// uses are cloned into it first, so that the function sees them (a padding
// value, a bound) and takes only what varies.
//
// Retired by: LLVM's loop strength reduction giving a register block's loop
// in a `?` layer's parallel region the code it gives it in a static layer.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAOUTLINEREGISTERBLOCKS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// Whether `loop`'s results are all vectors: a register block's
/// accumulators, carried through its reduction.
bool carriesVectors(Operation *op) {
  auto loop = dyn_cast_or_null<scf::ForOp>(op);
  return loop && loop.getNumResults() > 0 &&
         llvm::all_of(loop.getResultTypes(), llvm::IsaPred<VectorType>);
}

/// The vector.contract ops that one call of `loop` runs, counting the trip
/// counts of the loops from it down to each; 0 where one of them is not
/// static.
int64_t contractionSteps(scf::ForOp loop) {
  int64_t steps = 0;
  loop->walk([&](vector::ContractionOp contract) {
    int64_t count = 1;
    for (Operation *op = contract->getParentOp(); count && op;
         op = op->getParentOp()) {
      if (auto inner = dyn_cast<scf::ForOp>(op)) {
        std::optional<APInt> trips = inner.getStaticTripCount();
        count = trips ? count * trips->getSExtValue() : 0;
      }
      if (op == loop.getOperation())
        break;
    }
    steps += count;
  });
  return steps;
}

/// A register block's whole reduction: the outermost loop that carries
/// vectors and runs contractions (the loop over heads of the output
/// projection holds the loop over each head's columns), where one call
/// runs at least `minSteps` of them (mha.codegen's outline_steps, 256 by
/// default). Attention's blocks (64 or 128 steps) stay inline: a call and
/// the accumulators through memory would cost more there than the loop
/// code saves.
bool isRegisterBlockLoop(scf::ForOp loop, int64_t minSteps) {
  if (!carriesVectors(loop) || carriesVectors(loop->getParentOp()))
    return false;
  bool onlyLoops = true;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<LoopLikeOpInterface>(op) && !isa<scf::ForOp>(op))
      onlyLoops = false;
  });
  return onlyLoops && contractionSteps(loop) >= minSteps;
}

/// Clones into `region`'s block, at its start, the constants defined above
/// it that its ops use.
void cloneConstantsInto(RewriterBase &rewriter, Region &region) {
  Block &block = region.front();
  DenseMap<Operation *, Operation *> clones;
  region.walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>() ||
          region.isAncestor(def->getParentRegion()))
        continue;
      Operation *&clone = clones[def];
      if (!clone) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(&block);
        clone = rewriter.clone(*def);
      }
      rewriter.modifyOpInPlace(op, [&] {
        use.set(clone->getResult(cast<OpResult>(use.get()).getResultNumber()));
      });
    }
  });
}

/// Whether `function` takes or returns a buffer with a `?` size. Only
/// there do the loops lose their code in the layer: a static layer's have
/// it inline (outlined, they ran as fast), and stay there.
bool hasDynamicSizes(func::FuncOp function) {
  auto dynamic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && !shaped.hasStaticShape();
  };
  FunctionType type = function.getFunctionType();
  return llvm::any_of(type.getInputs(), dynamic) ||
         llvm::any_of(type.getResults(), dynamic);
}

/// Whether the ops strictly between `first` and `last` (one block, first
/// before last) write no memory: a read may move down past them, a write
/// up.
bool noWritesBetween(Operation *first, Operation *last) {
  for (Operation *op = first->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return false;
  return true;
}

/// The ops that go into the outlined function with `loop`: the reads that
/// give its accumulators their start (the bias, or the block's partial sums)
/// and the writes of its results, where each has the loop as its only user
/// (or is the only user of a result), in the loop's block with nothing that
/// writes memory in between. Inside the function, the accumulators then go
/// from memory to registers and back once; passed as arguments and results,
/// a block of 24 registers would be copied through the stack on each call
/// (SysV passes 8 vector registers).
std::pair<SmallVector<Operation *>, SmallVector<Operation *>>
accumulatorTransfers(scf::ForOp loop) {
  SmallVector<Operation *> reads, writes;
  for (Value init : loop.getInitArgs()) {
    auto read = init.getDefiningOp<vector::TransferReadOp>();
    if (read && read->getBlock() == loop->getBlock() && read->hasOneUse() &&
        noWritesBetween(read, loop) && !llvm::is_contained(reads, read))
      reads.push_back(read);
  }
  for (Value result : loop.getResults()) {
    if (!result.hasOneUse())
      continue;
    auto write = dyn_cast<vector::TransferWriteOp>(*result.getUsers().begin());
    if (write && write.getValueToStore() == result &&
        write->getBlock() == loop->getBlock() && noWritesBetween(loop, write) &&
        llvm::all_of(write->getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return operand == result || !def ||
                 def->getBlock() != loop->getBlock() ||
                 def->isBeforeInBlock(loop);
        }))
      writes.push_back(write);
  }
  return {reads, writes};
}

struct MhaOutlineRegisterBlocksPass
    : mha::impl::MhaOutlineRegisterBlocksBase<MhaOutlineRegisterBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ForOp> loops;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (!hasDynamicSizes(function))
        continue;
      // The option where set, else the record (mha-strategy), else 256.
      int64_t steps = minSteps;
      if (steps <= 0) {
        mha::CodegenSizesAttr sizes = mha::getRecordedCodegenSizes(function);
        steps = sizes && sizes.getOutlineSteps() > 0 ? sizes.getOutlineSteps()
                                                     : 256;
      }
      function.walk([&](scf::ForOp loop) {
        if (isRegisterBlockLoop(loop, steps))
          loops.push_back(loop);
      });
    }
    IRRewriter rewriter(&getContext());
    MLIRContext *context = &getContext();
    unsigned count = 0;
    for (scf::ForOp loop : loops) {
      auto parent = loop->getParentOfType<func::FuncOp>();
      std::string name =
          (parent.getSymName() + "_register_block" + Twine(count++)).str();
      auto [reads, writes] = accumulatorTransfers(loop);
      // The loop's results that leave the function: those not written in
      // it.
      SmallVector<Value> escaping;
      for (Value result : loop.getResults())
        if (llvm::none_of(writes, [&](Operation *write) {
              return write->getOperand(0) == result;
            }))
          escaping.push_back(result);

      // The reads, the loop and the writes in a one-block region whose
      // yield gives the other results: the form outlineSingleBlockRegion
      // takes.
      rewriter.setInsertionPoint(loop);
      auto wrapper = scf::ExecuteRegionOp::create(
          rewriter, loop.getLoc(), ValueRange(escaping).getTypes());
      Block *block = rewriter.createBlock(&wrapper.getRegion());
      for (auto [result, replacement] :
           llvm::zip(escaping, wrapper.getResults()))
        rewriter.replaceAllUsesWith(result, replacement);
      for (Operation *read : reads)
        rewriter.moveOpBefore(read, block, block->end());
      rewriter.moveOpBefore(loop, block, block->end());
      for (Operation *write : writes)
        rewriter.moveOpBefore(write, block, block->end());
      rewriter.setInsertionPointToEnd(block);
      scf::YieldOp::create(rewriter, loop.getLoc(), escaping);
      cloneConstantsInto(rewriter, wrapper.getRegion());

      func::CallOp call;
      FailureOr<func::FuncOp> outlined = outlineSingleBlockRegion(
          rewriter, loop.getLoc(), wrapper.getRegion(), name, &call);
      if (failed(outlined)) {
        parent.emitError("could not outline a register block's loop");
        return signalPassFailure();
      }
      // Internal, so that libraries of several layers do not clash, and
      // never inlined back, which is the point.
      outlined->setPrivate();
      (*outlined)->setAttr(
          "llvm.linkage",
          LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
      (*outlined)->setAttr(
          "passthrough",
          rewriter.getArrayAttr({rewriter.getStringAttr("noinline")}));
      // The wrapper now holds the call: put the call in its place.
      rewriter.setInsertionPoint(wrapper);
      Operation *moved = rewriter.clone(*call);
      rewriter.replaceOp(wrapper, moved->getResults());
    }
  }
};
} // namespace
