//===- MhaVariants.cpp - Verifiers of the attention variants -------------===//
//
// mha.rms_norm and mha.rope, and the rules on the score steps that every
// attention op carries (VariantChecks.h).
//
//===----------------------------------------------------------------------===//

#include "dialects/VariantChecks.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mha;

bool ScoreSteps::readsHeads() const {
  if (alibiSlopes || sinks || scoreMod)
    return true;
  return attnBias &&
         cast<RankedTensorType>(attnBias.getType()).getDimSize(1) != 1;
}

/// A size that may broadcast: a static 1, or the full size `expected`.
static LogicalResult broadcastDim(ShapeChecker &check, StringRef what,
                                  int64_t expected, int64_t found) {
  if (found == 1)
    return success();
  return check.dim(what, expected, found);
}

LogicalResult mlir::mha::verifyScoreSteps(Operation *op, ShapeChecker &check,
                                          const ScoreSteps &steps, bool causal,
                                          int64_t batch, int64_t heads,
                                          int64_t queries, int64_t keys) {
  if (Value bias = steps.attnBias) {
    ArrayRef<int64_t> shape = tensorType(bias).getShape();
    if (failed(broadcastDim(check, "bias batch (B or 1)", batch, shape[0])) ||
        failed(check.isStatic(bias, "bias", 1, "head count")) ||
        failed(broadcastDim(check, "bias heads (H or 1)", heads, shape[1])) ||
        failed(broadcastDim(check, "bias query length (T or 1)", queries,
                            shape[2])) ||
        failed(check.dim("bias key length (S)", keys, shape[3])))
      return failure();
  }
  if (steps.alibiSlopes &&
      failed(check.dim("alibi slopes size (H)", heads,
                       tensorType(steps.alibiSlopes).getDimSize(0))))
    return failure();
  if (steps.sinks && failed(check.dim("sinks size (H)", heads,
                                      tensorType(steps.sinks).getDimSize(0))))
    return failure();
  if (steps.window && !causal)
    return op->emitOpError()
           << "expects window only together with causal, got window("
           << steps.window.getInt() << ") without causal";
  if (steps.softcap) {
    double cap = steps.softcap.getValueAsDouble();
    if (!std::isfinite(cap) || cap <= 0)
      return op->emitOpError()
             << "expects softcap to be positive and finite, got " << cap;
  }
  return success();
}

LogicalResult mlir::mha::verifyRope(Operation *op, ShapeChecker &check,
                                    StringRef layout, int64_t rotaryDim,
                                    int64_t headDim, Value invFreq, double base,
                                    double scale, double mscale) {
  if (layout != "half" && layout != "interleaved")
    return op->emitOpError()
           << "expects the rope layout \"half\" or \"interleaved\", got \""
           << layout << "\"";
  if (rotaryDim % 2 != 0 || rotaryDim > headDim)
    return op->emitOpError() << "expects rotary_dim to be even and at most "
                                "the head dimension ("
                             << headDim << "), got " << rotaryDim;
  if (invFreq &&
      failed(check.dim("rope inverse frequencies size (R/2)", rotaryDim / 2,
                       tensorType(invFreq).getDimSize(0))))
    return failure();
  if (!std::isfinite(base) || base <= 0)
    return op->emitOpError()
           << "expects the rope base to be positive and finite, got " << base;
  if (!std::isfinite(scale) || scale <= 0)
    return op->emitOpError()
           << "expects the rope scale to be positive and finite, got " << scale;
  if (!std::isfinite(mscale))
    return op->emitOpError()
           << "expects the rope mscale to be finite, got " << mscale;
  return success();
}

LogicalResult mlir::mha::verifyNormEpsilon(Operation *op, double eps) {
  if (std::isfinite(eps) && eps >= 0)
    return success();
  return op->emitOpError()
         << "expects the norm epsilon to be finite and non-negative, got "
         << eps;
}

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.isStatic(getInput(), "input", 3, "feature dimension")) ||
      failed(check.dim("weight size (d)", getInput().getType().getDimSize(3),
                       getWeight().getType().getDimSize(0))))
    return failure();
  return verifyNormEpsilon(*this, getEps().convertToDouble());
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::verify() {
  ShapeChecker check(*this);
  RankedTensorType input = getInput().getType();
  if (failed(check.isStatic(getInput(), "input", 3, "feature dimension")))
    return failure();
  if (Value offsets = getOffsets())
    if (failed(check.dim("offsets size (B)", input.getDimSize(0),
                         tensorType(offsets).getDimSize(0))))
      return failure();
  return verifyRope(*this, check, getLayout(), getRotaryDim(),
                    input.getDimSize(3), getInvFreq(),
                    getBase().convertToDouble(), getScale().convertToDouble(),
                    getMscale().convertToDouble());
}
