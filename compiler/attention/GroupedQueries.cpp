//===- GroupedQueries.cpp - A decoding step's query heads as rows ---------===//

#include "compiler/attention/GroupedQueries.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mha;

bool mlir::mha::canGroupQueryHeads(SdpaOp op) {
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  auto keyType = cast<RankedTensorType>(op.getKey().getType());
  int64_t heads = queryType.getDimSize(1), kvHeads = keyType.getDimSize(1);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
      kvHeads < 2 || heads <= kvHeads || op.getMask())
    return false;
  // The grouped rows are heads at one position (the tile's
  // `shared_position`): a window and a softcap, the same for every head,
  // keep their meaning; the steps that read per-head data (slopes, sinks, a
  // bias, the region, which receives the head) would need each row's head,
  // so such ops are not grouped.
  ScoreSteps steps = ScoreSteps::of(op);
  if (steps.attnBias || steps.alibiSlopes || steps.sinks || steps.scoreMod)
    return false;
  int64_t queries = queryType.getDimSize(2);
  if (op.getPositions())
    return ShapedType::isDynamic(queries) || queries == 1;
  return queries == 1 && !op.getCausal();
}

std::pair<SdpaOp, Value> mlir::mha::buildGroupedSdpa(RewriterBase &rewriter,
                                                     SdpaOp op, Value query) {
  Location loc = op.getLoc();
  auto queryType = cast<RankedTensorType>(query.getType());
  int64_t kvHeads = cast<RankedTensorType>(op.getKey().getType()).getDimSize(1);
  int64_t group = queryType.getDimSize(1) / kvHeads;
  // [B, H, 1, d] <-> [B, H, d] <-> [B, Hkv, G, d]: both reassociations keep
  // the batch and the last dimension, and merge the middle two.
  SmallVector<ReassociationIndices> middle = {{0}, {1, 2}, {3}};
  auto regroup = [&](Value value, int64_t outer, int64_t inner) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, value, middle);
    auto groupedType = RankedTensorType::get(
        {type.getDimSize(0), outer, inner, type.getDimSize(3)},
        type.getElementType());
    return tensor::ExpandShapeOp::create(rewriter, loc, groupedType, flat,
                                         middle);
  };
  Value groupedQuery = regroup(query, kvHeads, group);
  // The window and the softcap, the only score steps a grouped op keeps
  // (canGroupQueryHeads).
  ScoreSteps steps;
  steps.window = op.getWindowAttr();
  steps.softcap = op.getSoftcapAttr();
  auto grouped = SdpaOp::create(rewriter, loc, groupedQuery, op.getKey(),
                                op.getValue(), /*mask=*/Value(), op.getCausal(),
                                op.getCausalBottomRight(), op.getScaleAttr(),
                                op.getPositions(), steps);
  // The strategy's tiles and the bf16 layer's mark, as the op had them.
  for (NamedAttribute attribute : op->getDiscardableAttrs())
    grouped->setAttr(attribute.getName(), attribute.getValue());
  Value result = regroup(grouped.getResult(), queryType.getDimSize(1), 1);
  return {grouped, result};
}
