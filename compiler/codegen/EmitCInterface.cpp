//===- EmitCInterface.cpp - C-callable wrappers of public functions -------===//
//
// The runtime calls a compiled graph through `_mlir_ciface_<name>`, which
// takes memref descriptors by pointer; convert-func-to-llvm emits that
// wrapper only for functions marked `llvm.emit_c_interface`. The pass also
// drops the argument names that mean nothing below the mha level.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAEMITCINTERFACE
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
struct MhaEmitCInterfacePass
    : mha::impl::MhaEmitCInterfaceBase<MhaEmitCInterfacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isPublic() && !func.isExternal())
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
    // Argument names (`mha.name`) only bind inputs before compilation; the
    // LLVM translation would warn about an attribute it does not know.
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.removeArgAttr(i,
                         mlir::mha::MhaDialect::NameAttrHelper::getNameStr());
  }
};
} // namespace
