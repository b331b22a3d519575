//===- MhaOps.cpp - Verifiers and builders of the mha ops -----------------===//

#include "dialects/MhaOps.h"
#include "dialects/AttentionClauses.h"
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
// Shape helpers shared by the verifiers and the type-inferring builders
//===----------------------------------------------------------------------===//

namespace {
/// The more precise of two sizes that agree.
int64_t refineDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

/// Whether the declared result types agree with the inferred ones: the same
/// rank and element type, and every size equal where both are known (the
/// declared type may know a size the operands leave `?`, and the other way
/// round). With `widensBF16`, a bf16 result may be declared f32: a bf16
/// layer may return its output unrounded, since the last contraction
/// accumulates in f32 anyway; this is the only mix of element types the
/// dialect accepts (and mha-widen-bf16 lowers).
bool compatibleResults(TypeRange inferred, TypeRange declared,
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
Type tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}
} // namespace

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
// SdpaOp
//===----------------------------------------------------------------------===//

/// `query [B, H, T, dk]`, `value [B, Hkv, S, dv]` -> `[B, H, T, dv]`.
LogicalResult SdpaOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType key = tensorType(adaptor.getKey());
  RankedTensorType value = tensorType(adaptor.getValue());
  if (query.getRank() != 4 || key.getRank() != 4 || value.getRank() != 4)
    return emitOptionalError(location, "mha.sdpa: no result type for these "
                                       "operand ranks");
  ArrayRef<int64_t> q = query.getShape();
  int64_t batch =
      refineDim(refineDim(q[0], key.getDimSize(0)), value.getDimSize(0));
  types.push_back(tensorOf({batch, q[1], q[2], value.getDimSize(3)},
                           query.getElementType()));
  return success();
}

bool SdpaOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange declared) {
  return compatibleResults(inferred, declared);
}

/// `scale` if set, else `1/√dk` (dimension 3 of `query`).
static double effectiveScale(std::optional<APFloat> scale,
                             RankedTensorType query) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(query.getDimSize(3)));
}

double SdpaOp::getEffectiveScale() {
  return effectiveScale(getScale(), getQuery().getType());
}

/// Checks a mask `[B or 1, T, S]` (rank 3 by its ODS type) against the
/// batch, query and key sizes.
static LogicalResult verifyMask(ShapeChecker &check, Value mask, int64_t batch,
                                int64_t queries, int64_t keys) {
  if (!mask)
    return success();
  ArrayRef<int64_t> shape = tensorType(mask).getShape();
  if (shape[0] != 1 &&
      failed(check.dim("mask batch (B or 1)", batch, shape[0])))
    return failure();
  if (failed(check.dim("mask query length (T)", queries, shape[1])) ||
      failed(check.dim("mask key length (S)", keys, shape[2])))
    return failure();
  return success();
}

/// `causal_bottom_right` says where the causal diagonal lies: without
/// `causal` there is no diagonal, and the graph most likely lost its `causal`.
static LogicalResult verifyCausal(Operation *op, bool causal,
                                  bool causalBottomRight) {
  if (!causalBottomRight || causal)
    return success();
  return op->emitOpError()
         << "expects causal_bottom_right only together with causal, got "
            "causal_bottom_right without causal";
}

/// `positions [B]` put query `i` of sequence `b` at `positions[b] + i` on the
/// top-left causal diagonal: they need `causal`, and say nothing about the
/// bottom-right alignment, which places the queries itself.
static LogicalResult verifyPositions(Operation *op, ShapeChecker &check,
                                     Value positions, bool causal,
                                     bool causalBottomRight, int64_t batch) {
  if (!positions)
    return success();
  if (!causal)
    return op->emitOpError()
           << "expects positions only together with causal, got positions "
              "without causal";
  if (causalBottomRight)
    return op->emitOpError()
           << "expects positions with the top-left causal alignment, got "
              "causal(bottom_right)";
  return check.dim("positions size (B)", batch,
                   tensorType(positions).getDimSize(0));
}

/// A scale multiplies the scores: it must be a positive finite number.
static LogicalResult verifyScale(Operation *op, std::optional<APFloat> scale) {
  if (!scale)
    return success();
  double value = scale->convertToDouble();
  if (std::isfinite(value) && value > 0)
    return success();
  return op->emitOpError() << "expects scale to be positive and finite, got "
                           << value;
}

/// The rules on `query [B, H, T, dk]` and `key [B, Hkv, S, dk]` (rank 4 by
/// their ODS types) that `mha.sdpa` and `mha.attention_weights` share.
static LogicalResult verifyQueryAndKey(ShapeChecker &check, Value query,
                                       Value key) {
  ArrayRef<int64_t> q = tensorType(query).getShape();
  ArrayRef<int64_t> k = tensorType(key).getShape();
  if (failed(check.isStatic(query, "query", 1, "head count")) ||
      failed(check.isStatic(query, "query", 3, "head dimension")) ||
      failed(check.isStatic(key, "key", 1, "head count")) ||
      failed(check.isStatic(key, "key", 3, "head dimension")) ||
      failed(check.dim("key batch", q[0], k[0])) ||
      failed(check.dim("key head dimension (dk)", q[3], k[3])) ||
      failed(check.positive("the key/value head count", k[1])) ||
      failed(check.divides("the key/value head count", k[1],
                           "the query head count", q[1])))
    return failure();
  return success();
}

LogicalResult SdpaOp::verify() {
  ShapeChecker check(*this);
  if (failed(verifyQueryAndKey(check, getQuery(), getKey())))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  ArrayRef<int64_t> v = getValue().getType().getShape();
  if (failed(check.isStatic(getValue(), "value", 1, "head count")) ||
      failed(check.isStatic(getValue(), "value", 3, "value dimension")) ||
      failed(check.dim("value batch", refineDim(q[0], k[0]), v[0])) ||
      failed(check.dim("value heads (Hkv)", k[1], v[1])) ||
      failed(check.dim("value length (S)", k[2], v[2])) ||
      failed(verifyMask(check, getMask(), refineDim(q[0], k[0]), q[2],
                        refineDim(k[2], v[2]))) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyPositions(*this, check, getPositions(), getCausal(),
                             getCausalBottomRight(),
                             refineDim(refineDim(q[0], k[0]), v[0]))) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              refineDim(refineDim(q[0], k[0]), v[0]), q[1],
                              q[2], refineDim(k[2], v[2]))))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType SdpaOp::inferResultType() { return inferredResultType(*this); }

//===----------------------------------------------------------------------===//
// AttentionWeightsOp
//===----------------------------------------------------------------------===//

/// `query [B, H, T, dk]`, `key [B, Hkv, S, dk]` -> `[B, H, T, S]`.
LogicalResult AttentionWeightsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType key = tensorType(adaptor.getKey());
  if (query.getRank() != 4 || key.getRank() != 4)
    return emitOptionalError(location, "mha.attention_weights: no result type "
                                       "for these operand ranks");
  ArrayRef<int64_t> q = query.getShape();
  types.push_back(tensorOf(
      {refineDim(q[0], key.getDimSize(0)), q[1], q[2], key.getDimSize(2)},
      query.getElementType()));
  return success();
}

bool AttentionWeightsOp::isCompatibleReturnTypes(TypeRange inferred,
                                                 TypeRange declared) {
  return compatibleResults(inferred, declared);
}

double AttentionWeightsOp::getEffectiveScale() {
  return effectiveScale(getScale(), getQuery().getType());
}

LogicalResult AttentionWeightsOp::verify() {
  ShapeChecker check(*this);
  if (failed(verifyQueryAndKey(check, getQuery(), getKey())))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  if (failed(verifyMask(check, getMask(), refineDim(q[0], k[0]), q[2], k[2])) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyPositions(*this, check, getPositions(), getCausal(),
                             getCausalBottomRight(), refineDim(q[0], k[0]))) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              refineDim(q[0], k[0]), q[1], q[2], k[2])))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType AttentionWeightsOp::inferResultType() {
  return inferredResultType(*this);
}

//===----------------------------------------------------------------------===//
// CacheAppendOp
//===----------------------------------------------------------------------===//

LogicalResult CacheAppendOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.isStatic(getCache(), "cache", 1, "head count")) ||
      failed(check.isStatic(getCache(), "cache", 3, "row width")) ||
      failed(check.isStatic(getUpdate(), "update", 1, "head count")) ||
      failed(check.isStatic(getUpdate(), "update", 3, "row width")))
    return failure();
  ArrayRef<int64_t> u = getUpdate().getType().getShape();
  ArrayRef<int64_t> c = getCache().getType().getShape();
  int64_t lengths = getLengths().getType().getDimSize(0);
  if (failed(check.dim("update batch", c[0], u[0])) ||
      failed(check.dim("lengths size (B)", refineDim(c[0], u[0]), lengths)) ||
      failed(check.dim("update heads (Hkv)", c[1], u[1])) ||
      failed(check.dim("update row width (d)", c[3], u[3])))
    return failure();
  // The new rows must fit in an empty cache; whether they fit after the
  // rows a sequence already has is only known at run time.
  if (!ShapedType::isDynamic(u[2]) && !ShapedType::isDynamic(c[2]) &&
      u[2] > c[2])
    return emitOpError() << "expects the update length (T = " << u[2]
                         << ") to be at most the cache capacity (C = " << c[2]
                         << ")";
  return success();
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

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

namespace {
/// The sizes of one attention layer, read off its operands.
struct LayerSizes {
  int64_t numHeads, numKvHeads, headDim, valueDim;
};
} // namespace

/// Checks the three input weights (shared or split-first form) and their
/// biases, and finds the head and value dimensions.
static FailureOr<LayerSizes> verifyInputWeights(AttentionOp op,
                                                ShapeChecker &check) {
  LayerSizes sizes;
  sizes.numHeads = op.getNumHeads();
  sizes.numKvHeads = op.getEffectiveNumKvHeads();
  if (failed(check.divides("num_kv_heads", sizes.numKvHeads, "num_heads",
                           sizes.numHeads)))
    return failure();

  int64_t modelDim = op.getQuery().getType().getDimSize(2);
  int64_t kvDim = tensorType(op.getKeyValueSource()).getDimSize(2);
  if (op.isSplitFirst()) {
    // Head h projects columns h*w .. (h+1)*w-1 of the input with w_q[h].
    if (failed(check.rank(op.getWQ(), "w_q", 3, "[H, D/H, dk]")) ||
        failed(check.rank(op.getWK(), "w_k", 3, "[Hkv, D_kv/Hkv, dk]")) ||
        failed(check.rank(op.getWV(), "w_v", 3, "[Hkv, D_kv/Hkv, dv]")) ||
        failed(check.divides("num_heads", sizes.numHeads, "the model width",
                             modelDim)) ||
        failed(check.divides("num_kv_heads", sizes.numKvHeads,
                             "the key/value width", kvDim)))
      return failure();
    ArrayRef<int64_t> wq = op.getWQ().getType().getShape();
    ArrayRef<int64_t> wk = op.getWK().getType().getShape();
    ArrayRef<int64_t> wv = op.getWV().getType().getShape();
    sizes.headDim = wq[2];
    sizes.valueDim = wv[2];
    if (failed(check.dim("w_q heads", sizes.numHeads, wq[0])) ||
        failed(check.dim("w_q rows (D/H)", modelDim / sizes.numHeads, wq[1])) ||
        failed(check.dim("w_k heads", sizes.numKvHeads, wk[0])) ||
        failed(check.dim("w_k rows (D_kv/Hkv)", kvDim / sizes.numKvHeads,
                         wk[1])) ||
        failed(check.dim("w_k columns (dk)", sizes.headDim, wk[2])) ||
        failed(check.dim("w_v heads", sizes.numKvHeads, wv[0])) ||
        failed(
            check.dim("w_v rows (D_kv/Hkv)", kvDim / sizes.numKvHeads, wv[1])))
      return failure();
  } else {
    if (failed(check.rank(op.getWQ(), "w_q", 2, "[D, H*dk]")) ||
        failed(check.rank(op.getWK(), "w_k", 2, "[D_kv, Hkv*dk]")) ||
        failed(check.rank(op.getWV(), "w_v", 2, "[D_kv, Hkv*dv]")))
      return failure();
    ArrayRef<int64_t> wq = op.getWQ().getType().getShape();
    ArrayRef<int64_t> wk = op.getWK().getType().getShape();
    ArrayRef<int64_t> wv = op.getWV().getType().getShape();
    if (failed(check.dim("w_q rows (D)", modelDim, wq[0])) ||
        failed(check.divides("num_heads", sizes.numHeads, "the w_q columns",
                             wq[1])) ||
        failed(check.dim("w_k rows (D_kv)", kvDim, wk[0])) ||
        failed(check.dim("w_v rows (D_kv)", kvDim, wv[0])) ||
        failed(check.divides("num_kv_heads", sizes.numKvHeads,
                             "the w_v columns", wv[1])))
      return failure();
    sizes.headDim = wq[1] / sizes.numHeads;
    sizes.valueDim = wv[1] / sizes.numKvHeads;
    if (failed(check.dim("w_k columns (Hkv*dk)",
                         sizes.numKvHeads * sizes.headDim, wk[1])))
      return failure();
  }
  int64_t qColumns, kColumns, vColumns;
  if (failed(check.multiply("H*dk", sizes.numHeads, sizes.headDim, qColumns)) ||
      failed(check.multiply("Hkv*dk", sizes.numKvHeads, sizes.headDim,
                            kColumns)) ||
      failed(check.multiply("Hkv*dv", sizes.numKvHeads, sizes.valueDim,
                            vColumns)) ||
      failed(check.bias(op.getBQ(), "b_q", qColumns)) ||
      failed(check.bias(op.getBK(), "b_k", kColumns)) ||
      failed(check.bias(op.getBV(), "b_v", vColumns)))
    return failure();
  return sizes;
}

/// The QK-norm and rotary options of a layer whose heads are `headDim`
/// wide: each option only with what it modifies, the norms both or neither,
/// the rotary embedding in self-attention (its positions are those of one
/// sequence).
static LogicalResult verifyQueryKeyOptions(AttentionOp op, ShapeChecker &check,
                                           int64_t headDim) {
  if (!op.getQNorm() != !op.getKNorm())
    return op.emitOpError() << "expects q_norm and k_norm together, got only "
                            << (op.getQNorm() ? "q_norm" : "k_norm");
  if (op.getQNorm()) {
    if (failed(check.dim("q_norm size (dk)", headDim,
                         tensorType(op.getQNorm()).getDimSize(0))) ||
        failed(check.dim("k_norm size (dk)", headDim,
                         tensorType(op.getKNorm()).getDimSize(0))))
      return failure();
  } else if (op.getQkNormEps()) {
    return op.emitOpError() << "expects qk_norm_eps only together with q_norm "
                               "and k_norm";
  }
  if (std::optional<APFloat> eps = op.getQkNormEps())
    if (failed(verifyNormEpsilon(op, eps->convertToDouble())))
      return failure();
  if (!op.getRope()) {
    if (op.getRotaryDim() || op.getRopeBase() || op.getRopeScale() ||
        op.getRopeMscale() || op.getRopeInvFreq())
      return op.emitOpError()
             << "expects rotary_dim, rope_base, rope_scale, rope_mscale and "
                "rope_inv_freq only together with rope";
    return success();
  }
  if (op.getKv())
    return op.emitOpError() << "expects rope only in self-attention, got kv";
  auto value = [](std::optional<APFloat> attr, double byDefault) {
    return attr ? attr->convertToDouble() : byDefault;
  };
  return verifyRope(
      op, check, *op.getRope(), op.getEffectiveRotaryDim(headDim), headDim,
      op.getRopeInvFreq(), value(op.getRopeBase(), 10000.0),
      value(op.getRopeScale(), 1.0), value(op.getRopeMscale(), 1.0));
}

/// `query [B, T, D]` (and `kv [B, S, D_kv]`), `w_o [H·dv, D_out]` ->
/// `[B, T, D_out]` (of the query's element type; a bf16 layer may declare
/// f32, `compatibleResults`).
LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType wo = tensorType(adaptor.getWO());
  if (query.getRank() != 3 || wo.getRank() != 2)
    return emitOptionalError(location, "mha.attention: no result type for "
                                       "these operand ranks");
  int64_t batch = query.getDimSize(0);
  if (Value kv = adaptor.getKv())
    batch = refineDim(batch, tensorType(kv).getDimSize(0));
  types.push_back(tensorOf({batch, query.getDimSize(1), wo.getDimSize(1)},
                           query.getElementType()));
  return success();
}

bool AttentionOp::isCompatibleReturnTypes(TypeRange inferred,
                                          TypeRange declared) {
  return compatibleResults(inferred, declared, /*widensBF16=*/true);
}

LogicalResult AttentionOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.isStatic(getQuery(), "query", 2, "model width")))
    return failure();
  ArrayRef<int64_t> query = getQuery().getType().getShape();
  int64_t kvLen = query[1];
  if (Value kv = getKv()) {
    if (failed(check.isStatic(kv, "kv", 2, "key/value width")) ||
        failed(check.dim("kv batch", query[0], tensorType(kv).getDimSize(0))))
      return failure();
    kvLen = tensorType(kv).getDimSize(1);
  }
  FailureOr<LayerSizes> sizes = verifyInputWeights(*this, check);
  if (failed(sizes))
    return failure();
  if (failed(check.rank(getWO(), "w_o", 2, "[H*dv, D_out]")))
    return failure();
  RankedTensorType wo = getWO().getType();
  int64_t oRows;
  // The mask's batch is the layer's: kv's batch where the query's is `?`.
  int64_t batch = query[0];
  if (Value kv = getKv())
    batch = refineDim(batch, tensorType(kv).getDimSize(0));
  if (failed(check.multiply("H*dv", sizes->numHeads, sizes->valueDim, oRows)) ||
      failed(check.dim("w_o rows (H*dv)", oRows, wo.getDimSize(0))) ||
      failed(check.bias(getBO(), "b_o", wo.getDimSize(1))) ||
      failed(verifyMask(check, getMask(), batch, query[1], kvLen)) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              batch, sizes->numHeads, query[1], kvLen)) ||
      failed(verifyQueryKeyOptions(*this, check, sizes->headDim)))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType AttentionOp::inferResultType() {
  return inferredResultType(*this);
}

#define GET_OP_CLASSES
#include "dialects/MhaOps.cpp.inc"
