//===- UnitLoops.cpp - Tiles without their unit loops ---------------------===//

#include "compiler/utils/UnitLoops.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

using namespace mlir;

linalg::LinalgOp mlir::mha::dropUnitLoops(RewriterBase &rewriter,
                                          linalg::GenericOp tile) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(tile);
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, tile, control);
  if (failed(dropped))
    return tile;
  rewriter.replaceOp(tile, dropped->replacements);
  return cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
}
