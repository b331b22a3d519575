//===- ExtractAttentionWeights.cpp - A function returning the weights -----===//
//
// Attention maps are for people, not for the layer: making the layer return
// its softmax as well would keep the [B, H, T, S] matrix alive on the fast
// path (and rule out the fused one, which never builds it). Instead this pass
// adds a second function that computes only the weights, which a tool calls
// when it is asked to show them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAEXTRACTATTENTIONWEIGHTS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Rewrites `weights`, a clone of a layer, to return the weights of its one
/// attention. Errors are reported on `source`, the function the user wrote.
LogicalResult returnAttentionWeights(func::FuncOp weights,
                                     func::FuncOp source) {
  // The five-step form has the sdpa whose query and key the weights need,
  // whether the layer was written as one op or step by step.
  RewritePatternSet patterns(weights.getContext());
  populateExpandAttentionPatterns(patterns);
  if (failed(applyPatternsGreedily(weights, std::move(patterns))))
    return source.emitOpError("could not expand its attention");

  SmallVector<SdpaOp> attentions;
  weights.walk([&](SdpaOp op) { attentions.push_back(op); });
  if (attentions.size() != 1)
    return source.emitOpError()
           << "expects exactly one attention to extract the weights of, "
              "found "
           << attentions.size();
  if (!weights.getBody().hasOneBlock() ||
      attentions.front()->getParentOp() != weights)
    return source.emitOpError(
        "expects its attention at the top level of a single-block body");

  SdpaOp sdpa = attentions.front();
  OpBuilder builder(sdpa);
  auto probabilities = AttentionWeightsOp::create(builder, sdpa.getLoc(), sdpa);
  Block &body = weights.getBody().front();
  body.getTerminator()->setOperands(probabilities.getResult());
  weights.setFunctionType(FunctionType::get(weights.getContext(),
                                            weights.getArgumentTypes(),
                                            {probabilities.getType()}));
  weights.removeResAttrsAttr();

  // Users come after their operands, so one backward sweep erases whole
  // chains: the values, the sdpa, the output projection.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

struct MhaExtractAttentionWeightsPass
    : mha::impl::MhaExtractAttentionWeightsBase<
          MhaExtractAttentionWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> sources;
    if (!function.empty()) {
      auto source = module.lookupSymbol<func::FuncOp>(function);
      if (!source || source.isExternal()) {
        module.emitError() << "no function @" << function
                           << " to extract the attention weights of";
        return signalPassFailure();
      }
      sources.push_back(source);
    } else {
      for (auto source : module.getOps<func::FuncOp>())
        if (source.isPublic() && !source.isExternal())
          sources.push_back(source);
    }

    SymbolTable symbols(module);
    for (func::FuncOp source : sources) {
      std::string name = getAttentionWeightsFunctionName(source.getSymName());
      if (symbols.lookup(name)) {
        source.emitOpError() << "cannot add @" << name
                             << " for its attention weights: the name is "
                                "taken";
        return signalPassFailure();
      }
      auto weights = cast<func::FuncOp>(source->clone());
      weights.setSymName(name);
      symbols.insert(weights, std::next(source->getIterator()));
      if (failed(returnAttentionWeights(weights, source)))
        return signalPassFailure();
    }
  }
};
} // namespace

std::string mlir::mha::getAttentionWeightsFunctionName(StringRef function) {
  return (function + "_attention_weights").str();
}
