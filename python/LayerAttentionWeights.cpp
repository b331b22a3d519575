//===- LayerAttentionWeights.cpp - The attention weights of a Layer -------===//
//
// The attention weights come from a second function compiled on demand, as
// for mha-run --dump-attention.
//
//===----------------------------------------------------------------------===//

#include "python/ErrorMessages.h"
#include "python/Layer.h"

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"

#ifndef MHA_LIBOMP_PATH
#error "MHA_LIBOMP_PATH: the compiled code's libomp (python/CMakeLists.txt)"
#endif

using namespace ::mha::runtime;

namespace mha::python {

void Layer::extractWeights() {
  if (weightsModule)
    return;
  size_t logged = diagnostics.size();
  std::string entryName = graph.entry.getSymName().str();
  mlir::OwningOpRef<mlir::ModuleOp> extracted = graph.module->clone();
  mlir::PassManager extract(context.get());
  extract.addPass(mlir::mha::createMhaExtractAttentionWeights({entryName}));
  if (failed(extract.run(*extracted)))
    throw py::value_error(
        withDiagnostics("cannot compute the attention weights of @" + entryName,
                        diagnostics, logged));
  // Only the weights are compiled from it; the layer is compiled already.
  if (auto layerFunction =
          extracted->lookupSymbol<mlir::func::FuncOp>(entryName))
    layerFunction.erase();
  weightsEntry = extracted->lookupSymbol<mlir::func::FuncOp>(
      mlir::mha::getAttentionWeightsFunctionName(entryName));
  weightsModule = std::move(extracted);
}

void Layer::compileWeights() {
  if (weights.function)
    return;
  extractWeights();
  size_t logged = diagnostics.size();
  mlir::OwningOpRef<mlir::ModuleOp> lowered = weightsModule->clone();
  mlir::PassManager pm(context.get());
  mlir::mha::buildMhaToLLVMPipeline(pm, pipelineOptions);
  if (failed(pm.run(*lowered)))
    throw std::runtime_error(withDiagnostics(
        "lowering the attention weights failed", diagnostics, logged));
  llvm::StringRef libomp = MHA_LIBOMP_PATH;
  auto compiled = CompiledFunction::create(*lowered, weightsEntry.getSymName(),
                                           /*rank=*/4, {libomp});
  if (!compiled)
    throw std::runtime_error("JIT compilation failed: " +
                             message(compiled.takeError()));
  weights.function = std::move(*compiled);
}

std::vector<int64_t>
Layer::weightsShape(const std::vector<std::vector<int64_t>> &shapes) {
  mlir::OwningOpRef<mlir::func::FuncOp> copy = weightsEntry.clone();
  mlir::Block &body = copy->getBody().front();
  for (auto [argument, shape] : llvm::zip(body.getArguments(), shapes))
    argument.setType(
        mlir::cast<mlir::RankedTensorType>(argument.getType()).clone(shape));
  mlir::Value result;
  for (mlir::Operation &op : body) {
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      result = ret.getOperand(0);
      break;
    }
    mlir::RankedTensorType refined =
        llvm::TypeSwitch<mlir::Operation *, mlir::RankedTensorType>(&op)
            .Case<mlir::mha::ProjectOp, mlir::mha::SplitHeadsOp,
                  mlir::mha::SdpaOp, mlir::mha::ConcatHeadsOp,
                  mlir::mha::OutputProjectOp, mlir::mha::AttentionOp,
                  mlir::mha::AttentionWeightsOp>(
                [](auto op) { return op.inferResultType(); })
            .Default([](mlir::Operation *op) {
              // An elementwise op (a bf16 layer's arith.extf of its
              // inputs) has its operand's shape.
              if (op->hasTrait<mlir::OpTrait::Elementwise>() &&
                  op->getNumOperands() == 1 && op->getNumResults() == 1)
                if (auto from = mlir::dyn_cast<mlir::RankedTensorType>(
                        op->getOperand(0).getType()))
                  return from.clone(
                      mlir::getElementTypeOrSelf(op->getResult(0).getType()));
              return mlir::RankedTensorType();
            });
    if (refined)
      op.getResult(0).setType(refined);
  }
  auto type = mlir::cast<mlir::RankedTensorType>(result.getType());
  if (!type.hasStaticShape())
    throw std::runtime_error("the attention weights have no static shape "
                             "for these inputs");
  return type.getShape().vec();
}

bool Layer::checkOneAttention() {
  int count = 0;
  graph.entry.walk([&](mlir::Operation *op) {
    count += mlir::isa<mlir::mha::AttentionOp, mlir::mha::SdpaOp>(op);
  });
  if (count != 1)
    return false;
  extractWeights();
  return true;
}

} // namespace mha::python
