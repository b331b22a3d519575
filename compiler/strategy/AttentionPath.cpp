//===- AttentionPath.cpp - Fused or decomposed attention ------------------===//

#include "compiler/strategy/AttentionPath.h"
#include "dialects/MhaOps.h"

#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mha;

std::optional<AttentionMode> mlir::mha::parseAttentionMode(StringRef text) {
  return llvm::StringSwitch<std::optional<AttentionMode>>(text)
      .Case("fused", AttentionMode::Fused)
      .Case("decomposed", AttentionMode::Decomposed)
      .Case("auto", AttentionMode::Auto)
      .Default(std::nullopt);
}

StringRef mlir::mha::stringifyAttentionMode(AttentionMode mode) {
  switch (mode) {
  case AttentionMode::Fused:
    return "fused";
  case AttentionMode::Decomposed:
    return "decomposed";
  case AttentionMode::Auto:
    return "auto";
  }
  llvm_unreachable("unknown attention mode");
}

bool mlir::mha::isF32Attention(SdpaOp op) {
  auto isF32 = [](Value value) {
    return getElementTypeOrSelf(value.getType()).isF32();
  };
  return isF32(op.getQuery()) && isF32(op.getKey()) && isF32(op.getValue()) &&
         isF32(op.getResult());
}

std::optional<AttentionShape> mlir::mha::getAttentionShape(Operation *op) {
  if (auto sdpa = dyn_cast<SdpaOp>(op)) {
    ArrayRef<int64_t> query = sdpa.getQuery().getType().getShape();
    ArrayRef<int64_t> key = sdpa.getKey().getType().getShape();
    return AttentionShape{query[0], query[1], query[2], key[2]};
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    ArrayRef<int64_t> input = attention.getQuery().getType().getShape();
    int64_t keys =
        cast<RankedTensorType>(attention.getKeyValueSource().getType())
            .getDimSize(1);
    return AttentionShape{input[0], int64_t(attention.getNumHeads()), input[1],
                          keys};
  }
  return std::nullopt;
}

AttentionPathChoice mlir::mha::chooseAttentionPath(const AttentionShape &shape,
                                                   AttentionMode mode) {
  switch (mode) {
  case AttentionMode::Fused:
    return {true, "forced"};
  case AttentionMode::Decomposed:
    return {false, "forced"};
  case AttentionMode::Auto:
    break;
  }
  // The rule sees static sizes only: a graph with a dynamic length may run
  // on long sequences, so it is fused. Otherwise the work per head, T·S
  // scores, decides.
  if (ShapedType::isDynamic(shape.keys))
    return {true, "auto: S is dynamic"};
  if (ShapedType::isDynamic(shape.queries))
    return {true, "auto: T is dynamic"};
  int64_t scores = shape.queries * shape.keys;
  bool fused = scores >= kAutoFusedMinScores;
  return {fused,
          llvm::formatv("auto: T*S = {0}*{1} {2} {3}", shape.queries,
                        shape.keys, fused ? ">=" : "<", kAutoFusedMinScores)};
}
