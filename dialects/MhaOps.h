//===- MhaOps.h - Operations of the mha dialect -----------------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHAOPS_H
#define MHA_DIALECTS_MHAOPS_H

#include "dialects/MhaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace mha {
/// The optional score steps of the served models' attention (mha.sdpa's
/// `bias`, `alibi`, `sinks`, `window` and `softcap`): null where absent.
/// One struct so that every op that carries them (and every rewrite that
/// copies them from one op to the next) names them once.
struct ScoreSteps {
  Value attnBias, alibiSlopes, sinks;
  IntegerAttr window;
  FloatAttr softcap;

  /// Whether any step is present.
  bool any() const {
    return attnBias || alibiSlopes || sinks || window || softcap;
  }
  /// Whether a step changes the scores themselves (softcap, ALiBi, a bias):
  /// the softmax then runs on steps(s·scale) with a scale of 1.
  bool modifiesScores() const { return softcap || alibiSlopes || attnBias; }
  /// Whether a step reads per-head data (ALiBi slopes, sinks, a bias with
  /// more than one head), which rewrites that regroup heads must keep.
  bool readsHeads() const;
  /// The steps of `op` (mha.sdpa, mha.attention_weights or mha.attention).
  template <typename OpTy> static ScoreSteps of(OpTy op) {
    return {op.getAttnBias(), op.getAlibiSlopes(), op.getSinks(),
            op.getWindowAttr(), op.getSoftcapAttr()};
  }
};
} // namespace mha
} // namespace mlir

#define GET_OP_CLASSES
#include "dialects/MhaOps.h.inc"

#endif // MHA_DIALECTS_MHAOPS_H
