//===- MhaOps.cpp - Verifiers and builders of the mha ops -----------------===//
//
// The layer's steps around attention: the projections, the head layouts
// and the cache append (the attention ops are in MhaAttentionOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialects/MhaOps.h"
#include "dialects/AttentionClauses.h"
#include "dialects/InferredTypes.h"
#include "dialects/ShapeChecker.h"
#include "dialects/VariantChecks.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mha;

//===----------------------------------------------------------------------===//
// ProjectOp
//===----------------------------------------------------------------------===//

/// `[..., D_in] · [D_in, D_out] -> [..., D_out]`; with `num_heads`,
/// `[B, T, D_in] · [D_in, H·d] -> [B, H, T, d]`; per head
/// `[B, H, T, w] · [H, w, d]` or `[B, T, H·w] · [H, w, d] -> [B, H, T, d]`.
LogicalResult ProjectOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType weight = tensorType(adaptor.getWeight());
  ArrayRef<int64_t> in = input.getShape();
  Type element = input.getElementType();
  std::optional<uint64_t> numHeads = adaptor.getNumHeads();
  if (in.empty() || weight.getRank() < 2 || weight.getRank() > 3 ||
      (weight.getRank() == 3 && in.size() < 3) ||
      (numHeads && (in.size() != 3 || *numHeads == 0)))
    return emitOptionalError(location, "mha.project: no result type for "
                                       "these operand ranks");
  if (weight.getRank() == 3 && input.getRank() == 3) {
    types.push_back(tensorOf(
        {in[0], weight.getDimSize(0), in[1], weight.getDimSize(2)}, element));
    return success();
  }
  if (numHeads) {
    int64_t heads = *numHeads;
    types.push_back(
        tensorOf({in[0], heads, in[1], weight.getDimSize(1) / heads}, element));
    return success();
  }
  SmallVector<int64_t> shape(in);
  shape.back() = weight.getShape().back();
  if (weight.getRank() == 3)
    shape[1] = refineDim(shape[1], weight.getDimSize(0));
  types.push_back(tensorOf(shape, element));
  return success();
}

bool ProjectOp::isCompatibleReturnTypes(TypeRange inferred,
                                        TypeRange declared) {
  return compatibleResults(inferred, declared);
}

/// The shared form `[..., D_in] · [D_in, D_out]`, which writes heads
/// `[B, H, T, D_out / H]` when `numHeads` is set.
static LogicalResult verifySharedProject(ProjectOp op, ShapeChecker &check,
                                         std::optional<int64_t> numHeads) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType weight = op.getWeight().getType();
  if (input.getRank() < 1)
    return op.emitOpError("expects input to have rank at least 1 ([..., "
                          "D_in]), got rank 0");
  if (numHeads &&
      (failed(check.rank(op.getInput(), "input", 3, "[B, T, D_in]")) ||
       failed(check.divides("num_heads", *numHeads, "the weight columns",
                            weight.getDimSize(1)))))
    return failure();
  if (failed(check.isStatic(op.getInput(), "input", input.getRank() - 1,
                            "input width")) ||
      failed(check.dim("weight rows (D_in)", input.getShape().back(),
                       weight.getDimSize(0))) ||
      failed(check.bias(op.getBias(), "bias", weight.getDimSize(1))))
    return failure();
  return success();
}

/// The per-head form: `[B, H, T, w]`, or `[B, T, H·w]` read as `H` slices,
/// times `[H, w, d]`.
static LogicalResult verifyPerHeadProject(ProjectOp op, ShapeChecker &check) {
  RankedTensorType input = op.getInput().getType();
  ArrayRef<int64_t> w = op.getWeight().getType().getShape();
  if (op.getNumHeads())
    return op.emitOpError("expects no num_heads with per-head weights (the "
                          "weight's leading dimension is the head count)");
  int64_t width, columns;
  if (failed(check.multiply("H*w", w[0], w[1], width)) ||
      failed(check.multiply("H*d", w[0], w[2], columns)))
    return failure();
  if (input.getRank() == 3) {
    if (failed(check.isStatic(op.getInput(), "input", 2, "input width")) ||
        failed(check.dim("input width (H*w)", width, input.getDimSize(2))))
      return failure();
  } else if (input.getRank() == 4) {
    if (failed(check.isStatic(op.getInput(), "input", 3, "slice width")) ||
        failed(check.dim("weight heads", input.getDimSize(1), w[0])) ||
        failed(
            check.dim("weight rows (slice width)", input.getDimSize(3), w[1])))
      return failure();
  } else {
    return op.emitOpError() << "expects input to have rank 3 ([B, T, H*w]) or "
                               "4 ([B, H, T, w]) with per-head weights, got "
                               "rank "
                            << input.getRank();
  }
  return check.bias(op.getBias(), "bias", columns);
}

LogicalResult ProjectOp::verify() {
  ShapeChecker check(*this);
  RankedTensorType weight = getWeight().getType();
  if (weight.getRank() == 2) {
    if (failed(verifySharedProject(*this, check, getNumHeads())))
      return failure();
  } else if (weight.getRank() == 3) {
    if (failed(verifyPerHeadProject(*this, check)))
      return failure();
  } else {
    return emitOpError() << "expects weight to have rank 2 ([D_in, D_out]) or "
                            "3 ([H, w, d]), got rank "
                         << weight.getRank();
  }
  return verifyResultType(*this);
}

RankedTensorType ProjectOp::inferResultType() {
  return inferredResultType(*this);
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp
//===----------------------------------------------------------------------===//

/// `[B, T, H·d] -> [B, H, T, d]`.
LogicalResult SplitHeadsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t numHeads = adaptor.getNumHeads();
  if (input.getRank() != 3 || numHeads <= 0)
    return emitOptionalError(location, "mha.split_heads: no result type for "
                                       "this operand");
  ArrayRef<int64_t> shape = input.getShape();
  types.push_back(tensorOf({shape[0], numHeads, shape[1], shape[2] / numHeads},
                           input.getElementType()));
  return success();
}

bool SplitHeadsOp::isCompatibleReturnTypes(TypeRange inferred,
                                           TypeRange declared) {
  return compatibleResults(inferred, declared);
}

LogicalResult SplitHeadsOp::verify() {
  ShapeChecker check(*this);
  int64_t numHeads = getNumHeads();
  if (failed(check.isStatic(getInput(), "input", 2, "width")) ||
      failed(check.divides("num_heads", numHeads, "the width",
                           getInput().getType().getDimSize(2))))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType SplitHeadsOp::inferResultType() {
  return inferredResultType(*this);
}

//===----------------------------------------------------------------------===//
// CacheAppendOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::mha::verifyCacheAppendShapes(Operation *op, Value update,
                                                 Value cache, Value lengths,
                                                 StringRef cacheName) {
  ShapeChecker check(op);
  if (failed(check.isStatic(cache, cacheName, 1, "head count")) ||
      failed(check.isStatic(cache, cacheName, 3, "row width")) ||
      failed(check.isStatic(update, "update", 1, "head count")) ||
      failed(check.isStatic(update, "update", 3, "row width")))
    return failure();
  ArrayRef<int64_t> u = cast<RankedTensorType>(update.getType()).getShape();
  ArrayRef<int64_t> c = cast<RankedTensorType>(cache.getType()).getShape();
  int64_t count = cast<RankedTensorType>(lengths.getType()).getDimSize(0);
  if (failed(check.dim("update batch", c[0], u[0])) ||
      failed(check.dim("lengths size (B)", refineDim(c[0], u[0]), count)) ||
      failed(check.dim("update heads (Hkv)", c[1], u[1])) ||
      failed(check.dim("update row width (d)", c[3], u[3])))
    return failure();
  // The new rows must fit in an empty cache; whether they fit after the
  // rows a sequence already has is only known at run time.
  if (!ShapedType::isDynamic(u[2]) && !ShapedType::isDynamic(c[2]) &&
      u[2] > c[2])
    return op->emitOpError() << "expects the update length (T = " << u[2]
                             << ") to be at most the " << cacheName
                             << " capacity (C = " << c[2] << ")";
  return success();
}

LogicalResult CacheAppendOp::verify() {
  return verifyCacheAppendShapes(*this, getUpdate(), getCache(), getLengths(),
                                 "cache");
}

//===----------------------------------------------------------------------===//
// ConcatHeadsOp
//===----------------------------------------------------------------------===//

/// `[B, H, T, d] -> [B, T, H·d]`.
LogicalResult ConcatHeadsOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  ArrayRef<int64_t> shape = input.getShape();
  int64_t width;
  if (shape.size() != 4 || llvm::MulOverflow(shape[1], shape[3], width))
    return emitOptionalError(location, "mha.concat_heads: no result type for "
                                       "this operand");
  types.push_back(
      tensorOf({shape[0], shape[2], width}, input.getElementType()));
  return success();
}

bool ConcatHeadsOp::isCompatibleReturnTypes(TypeRange inferred,
                                            TypeRange declared) {
  return compatibleResults(inferred, declared);
}

LogicalResult ConcatHeadsOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.isStatic(getInput(), "input", 1, "head count")) ||
      failed(check.isStatic(getInput(), "input", 3, "head dimension")))
    return failure();
  int64_t width;
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  if (failed(check.multiply("H*d", shape[1], shape[3], width)))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType ConcatHeadsOp::inferResultType() {
  return inferredResultType(*this);
}

//===----------------------------------------------------------------------===//
// OutputProjectOp
//===----------------------------------------------------------------------===//

/// `[B, T, H·dv]` or `[B, H, T, dv]`, times `[H·dv, D_out]` -> `[B, T, D_out]`
/// (of the input's element type; a bf16 layer may declare f32,
/// `compatibleResults`).
LogicalResult OutputProjectOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType weight = tensorType(adaptor.getWeight());
  ArrayRef<int64_t> shape = input.getShape();
  if ((shape.size() != 3 && shape.size() != 4) || weight.getRank() != 2)
    return emitOptionalError(location, "mha.output_project: no result type "
                                       "for these operand ranks");
  int64_t seqLen = input.getRank() == 4 ? shape[2] : shape[1];
  types.push_back(tensorOf({shape[0], seqLen, weight.getDimSize(1)},
                           input.getElementType()));
  return success();
}

bool OutputProjectOp::isCompatibleReturnTypes(TypeRange inferred,
                                              TypeRange declared) {
  return compatibleResults(inferred, declared, /*widensBF16=*/true);
}

LogicalResult OutputProjectOp::verify() {
  ShapeChecker check(*this);
  RankedTensorType input = getInput().getType();
  if (failed(check.rank(getWeight(), "weight", 2, "[H*dv, D_out]")))
    return failure();
  int64_t width;
  if (input.getRank() == 4) {
    if (failed(check.isStatic(getInput(), "input", 1, "head count")) ||
        failed(check.isStatic(getInput(), "input", 3, "value dimension")))
      return failure();
    if (failed(check.multiply("H*dv", input.getDimSize(1), input.getDimSize(3),
                              width)))
      return failure();
  } else if (input.getRank() == 3) {
    if (failed(check.isStatic(getInput(), "input", 2, "width")))
      return failure();
    width = input.getDimSize(2);
  } else {
    return emitOpError() << "expects input to have rank 3 ([B, T, H*dv]) or 4 "
                            "([B, H, T, dv]), got rank "
                         << input.getRank();
  }
  RankedTensorType weight = getWeight().getType();
  if (failed(check.dim("weight rows (H*dv)", width, weight.getDimSize(0))) ||
      failed(check.bias(getBias(), "bias", weight.getDimSize(1))))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType OutputProjectOp::inferResultType() {
  return inferredResultType(*this);
}

#define GET_OP_CLASSES
#include "dialects/MhaOps.cpp.inc"
