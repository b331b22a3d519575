//===- SpecializeContraction.cpp - Named ops from generics, checked -------===//

#include "compiler/workarounds/SpecializeContraction.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

using namespace mlir;

FailureOr<linalg::LinalgOp>
mlir::mha::specializeGenericOpChecked(RewriterBase &rewriter,
                                      linalg::GenericOp generic) {
  // Specialize a clone, so that the original survives a wrong answer.
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  rewriter.setInsertionPoint(generic);
  auto clone = cast<linalg::GenericOp>(rewriter.clone(*generic));
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, clone);
  if (failed(named)) {
    rewriter.eraseOp(clone);
    return failure();
  }
  if (named->getIndexingMapsArray() != maps) {
    rewriter.eraseOp(*named);
    return failure();
  }
  rewriter.replaceOp(generic, named->getOperation()->getResults());
  return named;
}
