//===- SpecializeContraction.cpp - Named ops from generics ----------------===//
//
// See SpecializeContraction.h.
//
// Retired by: linalg::specializeGenericOp keeping a transposed operand's
// indexing map (or leaving such a generic as it is).
//
//===----------------------------------------------------------------------===//

#include "compiler/workarounds/SpecializeContraction.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#include <numeric>

using namespace mlir;

/// Whether `named` computes what `generic` does: the same indexing maps and
/// iterator types once its loops are renumbered. Specialization may reorder
/// the loops (a generic over (m, k, n) becomes a matmul over (m, n, k)),
/// which is fine; reading an operand in another order is not.
static bool sameUpToLoopOrder(linalg::LinalgOp generic,
                              linalg::LinalgOp named) {
  unsigned numLoops = generic.getNumLoops();
  if (named.getNumLoops() != numLoops || numLoops > 6)
    return false;
  SmallVector<AffineMap> genericMaps = generic.getIndexingMapsArray();
  SmallVector<AffineMap> namedMaps = named.getIndexingMapsArray();
  auto genericIterators = generic.getIteratorTypesArray();
  auto namedIterators = named.getIteratorTypesArray();
  MLIRContext *context = generic.getContext();
  // perm[i]: the generic loop that is the named op's loop i.
  SmallVector<unsigned> perm(numLoops);
  std::iota(perm.begin(), perm.end(), 0);
  do {
    SmallVector<AffineExpr> renamed(numLoops);
    bool iteratorsMatch = true;
    for (unsigned i = 0; i < numLoops; ++i) {
      renamed[perm[i]] = getAffineDimExpr(i, context);
      iteratorsMatch &= genericIterators[perm[i]] == namedIterators[i];
    }
    if (!iteratorsMatch)
      continue;
    bool mapsMatch = true;
    for (auto [genericMap, namedMap] : llvm::zip_equal(genericMaps, namedMaps))
      mapsMatch &= genericMap.replaceDimsAndSymbols(renamed, {}, numLoops, 0) ==
                   namedMap;
    if (mapsMatch)
      return true;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return false;
}

FailureOr<linalg::LinalgOp>
mlir::mha::specializeGenericOpChecked(RewriterBase &rewriter,
                                      linalg::GenericOp generic) {
  // Specialize a clone, so that the original survives a wrong answer.
  rewriter.setInsertionPoint(generic);
  auto clone = cast<linalg::GenericOp>(rewriter.clone(*generic));
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, clone);
  if (failed(named)) {
    rewriter.eraseOp(clone);
    return failure();
  }
  if (named->getOperation()->getNumOperands() != generic->getNumOperands() ||
      !sameUpToLoopOrder(generic, *named)) {
    rewriter.eraseOp(*named);
    return failure();
  }
  rewriter.replaceOp(generic, named->getOperation()->getResults());
  return named;
}
