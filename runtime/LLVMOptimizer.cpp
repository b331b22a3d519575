//===- LLVMOptimizer.cpp - The LLVM IR optimization of compiled layers ----===//

#include "runtime/LLVMOptimizer.h"

#include "mlir/ExecutionEngine/OptUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace {
/// How many leading lanes `mask` sets when it is a constant that sets a
/// prefix of its lanes and clears the rest; nothing otherwise.
std::optional<unsigned> getPrefixLength(Value *mask) {
  auto *constant = dyn_cast<Constant>(mask);
  auto *type = dyn_cast<FixedVectorType>(mask->getType());
  if (!constant || !type)
    return std::nullopt;
  unsigned lanes = type->getNumElements();
  unsigned prefix = 0;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    auto *bit =
        dyn_cast_or_null<ConstantInt>(constant->getAggregateElement(lane));
    if (!bit)
      return std::nullopt;
    if (bit->isOne()) {
      if (prefix != lane)
        return std::nullopt;
      ++prefix;
    }
  }
  return prefix;
}
} // namespace

unsigned mha::runtime::narrowConstantMaskStores(Module &module) {
  SmallVector<std::pair<IntrinsicInst *, unsigned>> stores;
  for (Function &function : module)
    for (Instruction &instruction : instructions(function))
      if (auto *call = dyn_cast<IntrinsicInst>(&instruction);
          call && call->getIntrinsicID() == Intrinsic::masked_store)
        if (std::optional<unsigned> prefix =
                getPrefixLength(call->getArgOperand(2)))
          stores.push_back({call, *prefix});
  for (auto [call, prefix] : stores) {
    Value *value = call->getArgOperand(0);
    Value *pointer = call->getArgOperand(1);
    Align alignment = call->getParamAlign(1).valueOrOne();
    unsigned lanes = cast<FixedVectorType>(value->getType())->getNumElements();
    if (prefix > 0) {
      IRBuilder<> builder(call);
      Value *stored = value;
      if (prefix == 1)
        stored = builder.CreateExtractElement(value, uint64_t(0));
      else if (prefix < lanes)
        stored = builder.CreateShuffleVector(
            value, llvm::to_vector(llvm::seq<int>(0, int(prefix))));
      builder.CreateAlignedStore(stored, pointer, alignment);
    }
    call->eraseFromParent();
  }
  return stores.size();
}

std::function<Error(Module *)>
mha::runtime::makeLayerOptimizer(TargetMachine *machine) {
  auto optimize = mlir::makeOptimizingTransformer(
      /*optLevel=*/3, /*sizeLevel=*/0, machine);
  return [optimize](Module *module) -> Error {
    if (Error error = optimize(module))
      return error;
    narrowConstantMaskStores(*module);
    return Error::success();
  };
}
