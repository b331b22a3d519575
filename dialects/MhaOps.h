//===- MhaOps.h - Operations of the mha dialect -----------------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHAOPS_H
#define MHA_DIALECTS_MHAOPS_H

#include "dialects/MhaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace mha {
/// The optional score steps of the served models' attention (mha.sdpa's
/// `bias`, `alibi`, `sinks`, `window`, `softcap` and `score_mod` region):
/// null where absent. One struct so that every op that carries them (and
/// every rewrite that copies them from one op to the next) names them once.
Region *getScoreModRegion(Operation *op);

struct ScoreSteps {
  Value attnBias, alibiSlopes, sinks;
  IntegerAttr window;
  FloatAttr softcap;
  /// The `score_mod` region, null where the op has none (an empty region).
  Region *scoreMod = nullptr;

  /// Whether any step is present.
  bool any() const {
    return attnBias || alibiSlopes || sinks || window || softcap || scoreMod;
  }
  /// Whether a step changes the scores themselves (softcap, ALiBi, a bias,
  /// the region): the softmax then runs on steps(s·scale) with a scale of 1.
  bool modifiesScores() const {
    return softcap || alibiSlopes || attnBias || scoreMod;
  }
  /// Whether a step reads per-head data (ALiBi slopes, sinks, a bias with
  /// more than one head, the region, which receives the head), which
  /// rewrites that regroup heads must keep.
  bool readsHeads() const;
  /// Clones `scoreMod` into the empty `region` (of an op built from these
  /// steps); nothing without one.
  void cloneScoreModInto(Region &region) const;
  /// The steps of `op` (mha.sdpa, mha.attention_weights or mha.attention).
  template <typename OpTy> static ScoreSteps of(OpTy op) {
    return {op.getAttnBias(),   op.getAlibiSlopes(), op.getSinks(),
            op.getWindowAttr(), op.getSoftcapAttr(), getScoreModRegion(op)};
  }
};

/// The `score_mod` region of an attention op (its one, optional region),
/// null where it has none.
Region *getScoreModRegion(Operation *op);

/// Verifies the `score_mod` region of `op` (when it has one): at most one
/// region, of one block whose arguments have `argumentTypes`, ops free of
/// side effects, and an `mha.yield` of one f32.
LogicalResult verifyScoreModRegion(Operation *op, TypeRange argumentTypes);

/// The argument types of a user-facing attention op's `score_mod` region:
/// the score (f32), then the batch element, query head, query position and
/// key (index).
SmallVector<Type> getScoreModArgumentTypes(MLIRContext *context);

/// The shape rules of an append of `update [B, Hkv, T, d]` into `cache
/// [B, Hkv, C, d]` at `lengths [B]` (mha.cache_append, and the codes of
/// mha.cache_append_quantized): static Hkv and d that agree, B that agrees
/// with the lengths, T <= C where both are static. `cacheName` names the
/// cache in messages.
LogicalResult verifyCacheAppendShapes(Operation *op, Value update, Value cache,
                                      Value lengths, StringRef cacheName);
} // namespace mha
} // namespace mlir

#define GET_OP_CLASSES
#include "dialects/MhaOps.h.inc"

#endif // MHA_DIALECTS_MHAOPS_H
