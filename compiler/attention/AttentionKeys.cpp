//===- AttentionKeys.cpp - The keys of an mha.sdpa, once per head ---------===//
//
// What SdpaTiling prepares before its loops, once per key/value head rather
// than once per query tile: Kᵀ, or the keys and values packed in bf16 hi
// and lo pairs as AMX's B operands (transposeKeys, pack).
//
//===----------------------------------------------------------------------===//

#include "compiler/attention/AttentionTiling.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/BF16Parts.h"
#include "compiler/utils/UnitLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::mha;

bool SdpaTiling::canPack() const {
  std::optional<int64_t> queries = getConstantIntValue(numQueries);
  std::optional<int64_t> keys = getConstantIntValue(numKeys);
  bool wholeTiles =
      queries && (*queries <= queryTile
                      ? *queries % 16 == 0
                      : *queries % queryTile == 0 && queryTile % 16 == 0);
  if (positions || !wholeTiles || !keys || *keys % 16 != 0 ||
      keyTile % 16 != 0 || keyDim % 16 != 0 || valueDim % 16 != 0 ||
      !getElementTypeOrSelf(key.getType()).isF32() ||
      !getElementTypeOrSelf(value.getType()).isF32())
    return false;
  // mha-amx-split splits Q and P into bf16 scratch on the stack, [tq, 2·dk]
  // and [tq, 2·BK]: at most 128 KiB each (mha-stack-scratch's bound).
  constexpr int64_t kMaxPartsBytes = 128 * 1024;
  int64_t rows = std::min(*queries, queryTile);
  int64_t columns = std::max(std::min(keyTile, *keys), keyDim);
  return rows * 2 * columns * int64_t(sizeof(uint16_t)) <= kMaxPartsBytes;
}

/// `value` ([B, Hkv, R, C]) with its rows' dimension split into
/// (R / 2, 2): rows 2i and 2i + 1 as [.., i, 0, ..] and [.., i, 1, ..].
static Value expandRowPairs(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rows = type.getDimSize(2);
  auto pairsType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1),
       ShapedType::isDynamic(rows) ? rows : rows / 2, 2, type.getDimSize(3)},
      type.getElementType());
  return tensor::ExpandShapeOp::create(
      builder, loc, pairsType, value,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
}

/// Pairs of rows of `source` ([B, Hkv, R, C]) packed in bf16 hi and lo
/// parts into `init` ([B, Hkv, R, C] f32): row 2i + 1 is the lo of what row
/// 2i is the hi, each element the pair (X[2i][c], X[2i + 1][c])
/// (buildBF16Pair), X the rows of `source`. A generic over (b, h, i, part,
/// c) that reads X's rows 2i and 2i + 1 as two slices (every map a
/// projection, so that a row of it vectorizes along c) and writes `init`
/// as [B, Hkv, R / 2, 2, C]; the part (hi or lo) is its loop `part`,
/// chosen before the one rounding of each element.
static linalg::GenericOp buildPackedPairs(OpBuilder &builder, Location loc,
                                          Value source, Value init) {
  MLIRContext *context = builder.getContext();
  Value pairs = expandRowPairs(builder, loc, source);
  auto pairsType = cast<RankedTensorType>(pairs.getType());
  auto rowType =
      RankedTensorType::get({pairsType.getDimSize(0), pairsType.getDimSize(1),
                             pairsType.getDimSize(2), pairsType.getDimSize(4)},
                            pairsType.getElementType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, pairs);
  auto row = [&](int64_t element) -> Value {
    SmallVector<OpFoldResult> offsets(5, builder.getIndexAttr(0));
    offsets[3] = builder.getIndexAttr(element);
    SmallVector<OpFoldResult> rowSizes = sizes;
    rowSizes[3] = builder.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(
        builder, loc, rowType, pairs, offsets, rowSizes,
        SmallVector<OpFoldResult>(5, builder.getIndexAttr(1)));
  };
  AffineExpr b = getAffineDimExpr(0, context), h = getAffineDimExpr(1, context),
             pair = getAffineDimExpr(2, context),
             c = getAffineDimExpr(4, context);
  AffineMap rowMap = AffineMap::get(5, 0, {b, h, pair, c}, context);
  SmallVector<AffineMap> maps = {rowMap, rowMap,
                                 AffineMap::getMultiDimIdentityMap(5, context)};
  Value packed = expandRowPairs(builder, loc, init);
  return linalg::GenericOp::create(
      builder, loc, TypeRange{packed.getType()}, ValueRange{row(0), row(1)},
      ValueRange{packed}, maps,
      SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value isLo =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne,
                                  linalg::IndexOp::create(nb, nloc, 3),
                                  arith::ConstantIndexOp::create(nb, nloc, 0));
        linalg::YieldOp::create(
            nb, nloc,
            buildBF16Pair(nb, nloc, buildBF16Part(nb, nloc, args[0], isLo),
                          buildBF16Part(nb, nloc, args[1], isLo)));
      });
}

/// `op` tiled into an `scf.forall` over (batch, key/value head), one head
/// per iteration; its result. The tile of a generic loses its unit loops
/// (dropUnitLoops), so that mha-vectorize vectorizes it.
static FailureOr<Value> tilePerHead(RewriterBase &rewriter, Operation *op) {
  auto tilingOp = cast<TilingInterface>(op);
  SmallVector<OpFoldResult> sizes(tilingOp.getLoopIteratorTypes().size(),
                                  rewriter.getIndexAttr(0));
  sizes[0] = sizes[1] = rewriter.getIndexAttr(1);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(sizes);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, tilingOp, options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  if (auto tile = dyn_cast<linalg::GenericOp>(tiled->tiledOps.front()))
    dropUnitLoops(rewriter, tile);
  return tiled->replacements.front();
}

/// The packed pairs of `source` into `init` (buildPackedPairs), one head
/// per iteration of an `scf.forall`, as [B, Hkv, R, C].
static FailureOr<Value> packPerHead(RewriterBase &rewriter, Location loc,
                                    Value source, Value init) {
  linalg::GenericOp pack = buildPackedPairs(rewriter, loc, source, init);
  FailureOr<Value> packed = tilePerHead(rewriter, pack);
  if (failed(packed))
    return failure();
  rewriter.setInsertionPointAfterValue(*packed);
  return tensor::CollapseShapeOp::create(
             rewriter, loc, init.getType(), *packed,
             SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}})
      .getResult();
}

LogicalResult SdpaTiling::transposeKeys(RewriterBase &rewriter) {
  return makeKeysT(rewriter, /*packed=*/false);
}

LogicalResult SdpaTiling::pack(RewriterBase &rewriter) {
  if (failed(makeKeysT(rewriter, /*packed=*/true)))
    return failure();
  // The values [B, Hkv, S, dv] in pairs of keys.
  auto valueType = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = {batch, rewriter.getIndexAttr(kvHeads),
                                     numKeys, rewriter.getIndexAttr(valueDim)};
  Value init = createEmpty(rewriter, valueType, sizes);
  FailureOr<Value> packedValues = packPerHead(rewriter, loc, value, init);
  if (failed(packedValues))
    return failure();
  value = *packedValues;
  packed = true;
  return success();
}

LogicalResult SdpaTiling::makeKeysT(RewriterBase &rewriter, bool packedKeys) {
  auto keyType = cast<RankedTensorType>(key.getType());
  auto type = RankedTensorType::get(
      {keyType.getDimSize(0), kvHeads, keyDim, keyType.getDimSize(2)},
      keyType.getElementType());
  // Kᵀ's rows are padded by the function's row_padding (one vector): a key
  // block's dk rows, S keys apart, would otherwise fall into the same few
  // cache sets whenever S is a multiple of 256 (8 KiB rows at S = 2048),
  // and evict each other between the query rows that read them. Kᵀ is a
  // view of the padded buffer (alloc_tensor: a slice of an empty tensor
  // would fold into a smaller one). mha-tile-attention refuses a function
  // without a record.
  CodegenSizesAttr sizes =
      getRecordedCodegenSizes(rewriter.getInsertionBlock()->getParentOp());
  int64_t rowPadding = sizes ? sizes.getRowPadding() : 0;
  SmallVector<int64_t> paddedShape(type.getShape());
  if (ShapedType::isStatic(paddedShape.back()))
    paddedShape.back() += rowPadding;
  auto paddedType = RankedTensorType::get(paddedShape, type.getElementType());
  SmallVector<Value> dynamicSizes;
  if (type.isDynamicDim(0))
    dynamicSizes.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, batch));
  OpFoldResult paddedKeys =
      apply(rewriter, rewriter.getAffineDimExpr(0) + rowPadding, {numKeys});
  if (type.isDynamicDim(3))
    dynamicSizes.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, paddedKeys));
  Value padded = bufferization::AllocTensorOp::create(rewriter, loc, paddedType,
                                                      dynamicSizes);
  OpFoldResult zero0 = rewriter.getIndexAttr(0),
               one0 = rewriter.getIndexAttr(1);
  Value init = tensor::ExtractSliceOp::create(
      rewriter, loc, type, padded, {zero0, zero0, zero0, zero0},
      {batch, rewriter.getIndexAttr(kvHeads), rewriter.getIndexAttr(keyDim),
       numKeys},
      {one0, one0, one0, one0});
  // Kᵀ, or (packedKeys) Kᵀ's rows in pairs: Kᵀ first, in a buffer of its
  // own, then packed as the values are, from whole rows. Packing K's
  // columns directly read each pair of Kᵀ's rows as strided columns of K
  // (vgatherqps), twice as long as the transpose and the packing together.
  Value keysTInit = init;
  if (packedKeys)
    keysTInit = createEmpty(rewriter, type,
                            {batch, rewriter.getIndexAttr(kvHeads),
                             rewriter.getIndexAttr(keyDim), numKeys});
  FailureOr<Value> tiled = tilePerHead(
      rewriter, linalg::TransposeOp::create(rewriter, loc, key, keysTInit,
                                            ArrayRef<int64_t>{0, 1, 3, 2}));
  if (failed(tiled))
    return failure();
  keysT = *tiled;
  if (!packedKeys)
    return success();
  tiled = packPerHead(rewriter, loc, keysT, init);
  if (failed(tiled))
    return failure();
  keysT = *tiled;
  return success();
}
