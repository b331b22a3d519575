//===- OrderConstantGlobals.cpp - Constants' globals in program order -----===//
//
// LLVM 22's one-shot bufferization of a module bufferizes the functions that
// call no other in the order of a DenseMap keyed by their addresses
// (getFuncOpsOrderedByCalls), so the `memref.global`s it makes for tensor
// constants, each at the top of the module as it meets it, come out in an
// order that changes from run to run: the same input gave two different
// outputs. This pass makes those globals first, walking the functions in
// the module's order; bufferization then finds each one (getGlobalFor
// reuses a global of the same value and alignment) and makes none.
//
// Retired by: OneShotModuleBufferize ordering the functions
// deterministically (in the module's order where calls do not decide).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAORDERCONSTANTGLOBALS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
struct MhaOrderConstantGlobalsPass
    : mha::impl::MhaOrderConstantGlobalsBase<MhaOrderConstantGlobalsPass> {
  using MhaOrderConstantGlobalsBase::MhaOrderConstantGlobalsBase;

  void runOnOperation() override {
    SmallVector<arith::ConstantOp> constants;
    getOperation().walk([&](arith::ConstantOp constant) {
      if (isa<RankedTensorType>(constant.getType()))
        constants.push_back(constant);
    });
    SymbolTableCollection symbolTables;
    for (arith::ConstantOp constant : constants)
      if (failed(
              bufferization::getGlobalFor(constant, symbolTables, alignment))) {
        constant.emitOpError("has no global for its value");
        return signalPassFailure();
      }
  }
};
} // namespace
