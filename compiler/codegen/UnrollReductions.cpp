//===- UnrollReductions.cpp - Several reduction steps per iteration -------===//
//
// Each reduction loop of a register block (an innermost loop that carries
// only its accumulators, in vectors, and contracts into them; mha-vectorize
// then mha-hoist-accumulators make it) does `unroll` steps per iteration,
// through upstream's `loopUnrollByFactor`. One step is a block of FMAs that
// wait on one row of the right operand: with one step per iteration, the
// loop's increments, compare and branch and the next row's loads sit
// between every two such blocks, and LLVM does not unroll a loop of this
// size by itself. Each accumulator sums in the same order: the results do
// not change. A trip count that `unroll` does not divide leaves its last
// steps to a loop of their own.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAUNROLLREDUCTIONS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Whether `loop` is the reduction loop of a register block: innermost,
/// contracting, carrying vectors and otherwise only values it yields
/// unchanged, with at least `unroll` iterations known.
bool isRegisterBlockReduction(scf::ForOp loop, int64_t unroll) {
  Block *body = loop.getBody();
  bool contracts = false, nested = false;
  for (Operation &op : *body) {
    contracts |= isa<vector::ContractionOp>(op);
    nested |= op.getNumRegions() > 0;
  }
  // Before canonicalization the loop still carries the tensor whose block
  // it accumulates, unchanged.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  bool vectorsOnly =
      llvm::any_of(
          loop.getRegionIterArgs(),
          [](BlockArgument arg) { return isa<VectorType>(arg.getType()); }) &&
      llvm::all_of(loop.getRegionIterArgs(), [&](BlockArgument arg) {
        return isa<VectorType>(arg.getType()) ||
               yield.getOperand(arg.getArgNumber() -
                                loop.getNumInductionVars()) == arg;
      });
  std::optional<APInt> trips = loop.getStaticTripCount();
  return contracts && !nested && vectorsOnly && trips &&
         trips->getSExtValue() >= unroll;
}

struct MhaUnrollReductionsPass
    : mha::impl::MhaUnrollReductionsBase<MhaUnrollReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The function's mha.codegen (mha-strategy), else the option.
    int64_t steps = unroll;
    if (CodegenSizesAttr sizes = getRecordedCodegenSizes(func))
      steps = sizes.getRegisterUnroll();
    if (steps < 1) {
      func.emitError() << "mha-unroll-reductions expects unroll >= 1, got "
                       << steps;
      return signalPassFailure();
    }
    if (steps == 1)
      return;
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) {
      if (isRegisterBlockReduction(loop, steps))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      (void)loopUnrollByFactor(loop, steps);
  }
};
} // namespace
