//===- InferredTypes.h - Result types from the operands ---------*- C++ -*-===//
//
// What the verifiers and the type-inferring builders of the mha ops share:
// the result type the operands imply, and whether a declared one agrees.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_DIALECTS_INFERREDTYPES_H
#define MHA_DIALECTS_INFERREDTYPES_H

#include "dialects/ShapeChecker.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace mha {
/// The more precise of two sizes that agree.
inline int64_t refineDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

/// Whether the declared result types agree with the inferred ones: the same
/// rank and element type, and every size equal where both are known (the
/// declared type may know a size the operands leave `?`, and the other way
/// round). With `widensBF16`, a bf16 result may be declared f32: a bf16
/// layer may return its output unrounded, since the last contraction
/// accumulates in f32 anyway; this is the only mix of element types the
/// dialect accepts (and mha-widen-bf16 lowers).
inline bool compatibleResults(TypeRange inferred, TypeRange declared,
                              bool widensBF16 = false) {
  if (inferred.size() != declared.size())
    return false;
  for (auto [expected, found] : llvm::zip(inferred, declared)) {
    auto expectedType = dyn_cast<RankedTensorType>(expected);
    auto foundType = dyn_cast<RankedTensorType>(found);
    if (!expectedType || !foundType ||
        expectedType.getRank() != foundType.getRank() ||
        !llvm::all_of_zip(expectedType.getShape(), foundType.getShape(),
                          dimsAgree))
      return false;
    Type expectedElement = expectedType.getElementType();
    Type foundElement = foundType.getElementType();
    if (expectedElement != foundElement &&
        !(widensBF16 && expectedElement.isBF16() && foundElement.isF32()))
      return false;
  }
  return true;
}

/// The result type `op`'s operands imply, with the declared element type
/// where the op may widen bf16 (`compatibleResults`); null where the
/// operands imply none (they do not verify).
template <typename OpTy> RankedTensorType inferredResultType(OpTy op) {
  SmallVector<Type, 1> types;
  if (failed(OpTy::inferReturnTypes(op.getContext(), op.getLoc(),
                                    typename OpTy::Adaptor(op), types)))
    return {};
  auto inferred = cast<RankedTensorType>(types.front());
  Type declared = op.getType().getElementType();
  return declared.isF32() && inferred.getElementType().isBF16()
             ? inferred.clone(declared)
             : inferred;
}

/// The declared result type agrees with the inferred one. Checked here, by
/// the op's verifier, rather than left to InferTypeOpInterface's own check
/// (a region-trait, run after it): the message says what was expected with
/// the same words as the verifier's other ones.
template <typename OpTy> LogicalResult verifyResultType(OpTy op) {
  SmallVector<Type, 1> inferred;
  if (failed(OpTy::inferReturnTypes(op.getContext(), op.getLoc(),
                                    typename OpTy::Adaptor(op), inferred)))
    return failure();
  if (OpTy::isCompatibleReturnTypes(inferred, op->getResultTypes()))
    return success();
  return op.emitOpError() << "expects result type " << inferred.front()
                          << ", got " << op.getType();
}

/// The `[B, ...]` tensor type of `shape` and `element`.
inline Type tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

} // namespace mha
} // namespace mlir

#endif // MHA_DIALECTS_INFERREDTYPES_H
