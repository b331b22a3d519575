//===- MaskBytes.cpp - Boolean masks read as bytes ------------------------===//
//
// A boolean mask arrives as a buffer of one byte per element (NumPy's bool,
// C's uint8_t), typed tensor<... x i1>. Vectors of i1 are bit-packed in LLVM,
// so a vector load from that buffer would read bits, not bytes: the
// vectorizer leaves every op that reads an i1 tensor scalar
// (mha-vectorize's hasBooleanTensors), and masked attention ran its scores
// one element at a time. This pass retypes such an argument to i8 (the same
// bytes: the function's ABI does not change) up to the linalg ops that read
// it, each of which compares its byte with zero in its body. Their vector
// code then loads bytes and widens them to a predicate in registers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAMASKBYTES
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
bool isBooleanTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isInteger(1);
}

/// Whether every use of `value`, through slices, is an input of a
/// linalg.generic: then the bytes can go all the way to the ops' bodies.
/// Any other reader (a copy, a call, a named op) keeps the mask i1.
bool readOnlyByGenerics(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      if (!readOnlyByGenerics(slice.getResult()))
        return false;
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || !generic.isDpsInput(&use))
      return false;
  }
  return true;
}

RankedTensorType toBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(IntegerType::get(type.getContext(), 8));
}

/// Gives `value` (an i1 tensor that readOnlyByGenerics accepted) i8
/// elements, and its slices too; each generic that reads it gets a byte
/// and compares it with 0 before its body's first use.
void retypeToBytes(Value value) {
  value.setType(toBytes(value.getType()));
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    Operation *user = use.getOwner();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      retypeToBytes(slice.getResult());
      continue;
    }
    auto generic = cast<linalg::GenericOp>(user);
    BlockArgument byte = generic.getMatchingBlockArgument(&use);
    byte.setType(IntegerType::get(value.getContext(), 8));
    OpBuilder b = OpBuilder::atBlockBegin(byte.getOwner());
    Location loc = generic.getLoc();
    Value zero = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
    Value allowed =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, byte, zero);
    byte.replaceAllUsesExcept(allowed, allowed.getDefiningOp());
  }
}

struct MhaMaskBytesPass : mha::impl::MhaMaskBytesBase<MhaMaskBytesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      // A function called in the module keeps its signature: its callers
      // pass i1 tensors.
      if (func.isExternal() || !func.getBody().hasOneBlock() ||
          !SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      Block &entry = func.getBody().front();
      bool changed = false;
      for (BlockArgument argument : entry.getArguments()) {
        if (!isBooleanTensor(argument.getType()) ||
            !readOnlyByGenerics(argument))
          continue;
        retypeToBytes(argument);
        changed = true;
      }
      if (changed)
        func.setFunctionType(
            FunctionType::get(&getContext(), entry.getArgumentTypes(),
                              func.getFunctionType().getResults()));
    }
  }
};
} // namespace
