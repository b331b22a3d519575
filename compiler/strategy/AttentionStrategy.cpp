//===- AttentionStrategy.cpp - The tile sizes of each attention -----------===//

#include "compiler/strategy/AttentionStrategy.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::mha;

int64_t mlir::mha::getMaxKeySplits(SdpaOp op, int64_t keyTile) {
  bool bottomRight = op.getCausal() && op.getCausalBottomRight();
  bool positions = op.getCausal() && op.getPositions();
  if (!isF32Attention(op) || (op.getCausal() && !bottomRight && !positions))
    return 1;
  AttentionShape shape = *getAttentionShape(op);
  if (ShapedType::isDynamic(shape.batch) ||
      ShapedType::isDynamic(shape.queries))
    return 1;
  // A range has at least one key block: more ranges than blocks would only
  // be empty ranges, each with its own partial output to merge.
  int64_t splits = kMaxAttentionKeySplits;
  if (!ShapedType::isDynamic(shape.keys))
    splits = std::min(splits, int64_t(llvm::divideCeil(shape.keys, keyTile)));
  // The partial outputs, [P, B, H, T, dv] f32: the result's size times P.
  // Sizes come from the graph, which may be hostile: every product is
  // checked.
  std::optional<int64_t> splitBytes = 4;
  for (int64_t size : {shape.batch, shape.heads, shape.queries,
                       int64_t(op.getType().getDimSize(3))})
    if (splitBytes)
      splitBytes = llvm::checkedMul<int64_t>(*splitBytes, size);
  if (!splitBytes)
    return 1;
  if (*splitBytes > 0)
    splits =
        std::min(splits, std::numeric_limits<int64_t>::max() / *splitBytes);
  return std::max<int64_t>(splits, 1);
}

AttentionTilesAttr
mlir::mha::chooseAttentionTiles(SdpaOp op, const AttentionTileRequest &request,
                                const TargetDescription &target) {
  CodegenStrategy sizes = deriveCodegenStrategy(target);
  int64_t queryTile =
      request.queryTile > 0 ? request.queryTile : sizes.attentionQueryTile;
  int64_t keyTile =
      request.keyTile > 0 ? request.keyTile : sizes.attentionKeyTile;

  // Key ranges where the query tiles alone are too few to keep the ranges'
  // threads busy (a product that overflows is certainly not "few").
  int64_t keySplits = 1;
  AttentionShape shape = *getAttentionShape(op);
  if (!ShapedType::isDynamic(shape.batch) &&
      !ShapedType::isDynamic(shape.queries)) {
    std::optional<int64_t> queryTiles =
        llvm::checkedMul<int64_t>(shape.batch, shape.heads);
    if (queryTiles)
      queryTiles = llvm::checkedMul<int64_t>(
          *queryTiles, llvm::divideCeil(shape.queries, queryTile));
    if (queryTiles && *queryTiles < request.keySplits)
      keySplits = std::min(request.keySplits, getMaxKeySplits(op, keyTile));
  }
  if (keySplits < 2)
    keySplits = 1;

  // Causal query tiles: key blocks that divide the tile are all whole.
  if (op.getCausal() && keySplits == 1)
    while (queryTile % keyTile != 0)
      --keyTile;
  return AttentionTilesAttr::get(op.getContext(), queryTile, keyTile,
                                 keySplits);
}

AttentionTilesAttr mlir::mha::getAttentionTiles(SdpaOp op) {
  if (AttentionTilesAttr tiles =
          MhaDialect::TilesAttrHelper(op.getContext()).getAttr(op))
    return tiles;
  return chooseAttentionTiles(op, AttentionTileRequest(), TargetDescription());
}
