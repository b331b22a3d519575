//===- ScoreModRegion.cpp - The attention ops' score-modification region --===//
//
// The `score_mod` region of mha.sdpa, mha.attention_weights and
// mha.attention (and of the compiler's mha.online_attention and
// mha.sdpa_split): its verifier and the copy that rewrites make of it from
// one op to the next.
//
//===----------------------------------------------------------------------===//

#include "dialects/MhaOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::mha;

void ScoreSteps::cloneScoreModInto(Region &region) const {
  if (!scoreMod)
    return;
  IRMapping mapping;
  scoreMod->cloneInto(&region, mapping);
}

SmallVector<Type> mlir::mha::getScoreModArgumentTypes(MLIRContext *context) {
  Type index = IndexType::get(context);
  return {Float32Type::get(context), index, index, index, index};
}

Region *mlir::mha::getScoreModRegion(Operation *op) {
  // The region is variadic (none or one), so that graphs written before it
  // existed, in the generic form, still parse.
  if (op->getNumRegions() == 0 || op->getRegion(0).empty())
    return nullptr;
  return &op->getRegion(0);
}

LogicalResult mlir::mha::verifyScoreModRegion(Operation *op,
                                              TypeRange argumentTypes) {
  if (op->getNumRegions() > 1)
    return op->emitOpError("expects at most one score_mod region, got ")
           << op->getNumRegions();
  Region *region = getScoreModRegion(op);
  if (!region)
    return success();
  Block &body = region->front();
  if (body.getArgumentTypes() != argumentTypes) {
    InFlightDiagnostic diag = op->emitOpError(
        "expects the score_mod region's arguments to have the types (");
    llvm::interleaveComma(argumentTypes, diag);
    diag << "), got (";
    llvm::interleaveComma(body.getArgumentTypes(), diag);
    return diag << ")";
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      !yield.getValues()[0].getType().isF32())
    return op->emitOpError("expects the score_mod region to end with "
                           "mha.yield of one f32 (the modified score)");
  // The region runs once per score, in any order and any number of times
  // (each key block of the fused path, the whole matrix of the decomposed
  // one): only ops without side effects give one meaning to every path.
  WalkResult effects = region->walk([&](Operation *nested) {
    if (isMemoryEffectFree(nested) || isa<YieldOp>(nested))
      return WalkResult::advance();
    nested->emitOpError("has side effects, which a score_mod region may not "
                        "hold");
    return WalkResult::interrupt();
  });
  return failure(effects.wasInterrupted());
}

LogicalResult SdpaOp::verifyRegions() {
  return verifyScoreModRegion(*this, getScoreModArgumentTypes(getContext()));
}

LogicalResult AttentionWeightsOp::verifyRegions() {
  return verifyScoreModRegion(*this, getScoreModArgumentTypes(getContext()));
}

LogicalResult AttentionOp::verifyRegions() {
  return verifyScoreModRegion(*this, getScoreModArgumentTypes(getContext()));
}
