//===- DropArgumentResults.cpp - Results updated in place -----------------===//
//
// A graph that appends to key/value caches returns the caches it was given,
// updated in place (mha.cache_append is destination-style on them). After
// bufferization such a result is the argument's buffer itself. Upstream's
// drop-equivalent-buffer-results removes these results only from private
// functions (a public function's signature is its ABI); the graphs' entry
// points are public, and their callers (the runtime, the libraries of
// mha-compile) expect exactly this ABI: the caches are arguments that the
// call updates, and only the other results are returned.
//
// Retired by: an option of upstream's drop-equivalent-buffer-results that
// includes public functions.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHADROPARGUMENTRESULTS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
struct MhaDropArgumentResultsPass
    : mha::impl::MhaDropArgumentResultsBase<MhaDropArgumentResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (!ret)
      return;
    llvm::BitVector drop(ret.getNumOperands());
    for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
      Value value = operand;
      while (auto cast = value.getDefiningOp<memref::CastOp>())
        value = cast.getSource();
      auto argument = dyn_cast<BlockArgument>(value);
      if (argument && argument.getOwner() == &func.getBody().front() &&
          isa<BaseMemRefType>(argument.getType()) &&
          argument.getType() == operand.getType())
        drop.set(index);
    }
    if (drop.none())
      return;
    ret->eraseOperands(drop);
    if (failed(func.eraseResults(drop)))
      return signalPassFailure();
  }
};
} // namespace
