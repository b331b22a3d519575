//===- BF16Projections.cpp - bf16 projections on K-pair packed weights ----===//
//
// A bf16 layer computes in f32 on widened operands (mha-expand,
// mha-widen-bf16), which gives the accuracy of bf16 storage but the speed
// of f32. AVX512_BF16's `vdpbf16ps` multiplies pairs of bf16 values and
// accumulates them in f32: twice the products per instruction of an f32
// FMA, exact products, f32 sums. It reads its right operand as pairs of
// consecutive k (two rows of W) interleaved per column, so the weights are
// packed that way once, in the prepare function that already widens them:
// each f32 element of the packed buffer holds the bf16 pair
// (w[2kk, n], w[2kk+1, n]), the first in its low half. (The prepared
// buffers are f32 by the runtime's ABI: the bits are carried, never
// computed on as f32.)
//
// This pass runs after mha-prepare-weights. A projection `x·W (+ b)` whose
// input is a bf16 tensor widened to f32 and whose weight is a prepared
// buffer of widened bf16 values becomes a `linalg.generic` marked
// `mha.bf16_dot` that reads x's bf16 pairs and the packed buffer; its body
// unpacks the pair member its `p` loop selects, so it is correct as it
// stands (scalar) and mha-bf16-dot turns it into vdpbf16ps register blocks.
// The output projection's input is attention's f32 output: rounding it to
// bf16 breaks the accuracy target of test/bf16 (1.67 times the storage
// error, docs/dialect.md), so by default it stays an f32 projection. With
// `split-f32` (the AMX path) it is split in two bf16 terms, hi = bf16(a)
// and lo = bf16(a - hi) (a - hi is exact in f32; hi + lo is a to a
// relative 2^-17), and a·W = hi·W + lo·W: the input [hi | lo] is
// concatenated along K ([B, T, 2K]) and the prepared weight packed twice
// along K ([W; W], at prepare time). Why that form and not a kernel that
// adds two products into the same accumulators: the generic keeps its
// meaning and shape, so matchBF16Projection, both kernels and the
// `?`/padded-row handling apply unchanged; the cost is the output
// projection's weight stored twice and its B tiles loaded twice (from
// the same panels, 1 KiB each), with the same loads per TDPBF16PS as a
// K of 2K. A kernel that reused each B tile for the hi and lo A tiles
// would load 6 tiles per 8 TDPBF16PS instead of 8.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/utils/BF16Parts.h"
#include "compiler/utils/UnitLoops.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHABF16PROJECTIONS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Columns of one vector of mha-bf16-dot's register blocks (16 f32):
/// projections whose column count (per head, where they write heads) it
/// does not divide stay f32.
constexpr int64_t kColumnBlock = 16;

/// The bf16 tensor that `value` widens, or null.
Value widenedBF16(Value value) {
  auto extf = value.getDefiningOp<arith::ExtFOp>();
  if (!extf)
    return {};
  auto type = dyn_cast<RankedTensorType>(extf.getIn().getType());
  return type && type.getElementType().isBF16() ? extf.getIn() : Value();
}

/// Whether every element of `value` is a widened bf16 value: an
/// `arith.extf` of bf16, or a concatenation of such (mha-fuse-projections'
/// packed weights). Then rounding it back to bf16 is exact.
bool holdsBF16Values(Value value) {
  if (widenedBF16(value))
    return true;
  auto concat = value.getDefiningOp<tensor::ConcatOp>();
  return concat && llvm::all_of(concat.getInputs(), widenedBF16);
}

/// The prepared weight of a projection: the layer's argument, the prepare
/// function that fills it and the [K, N] value that function flattens.
struct PreparedWeight {
  BlockArgument argument;
  func::FuncOp prepare;
  tensor::CollapseShapeOp flattened;
};

/// The prepared weight that `weight` reshapes, if it is one that only this
/// projection reads and that holds widened bf16 values.
std::optional<PreparedWeight>
getPreparedWeight(Value weight, func::FuncOp layer, SymbolTable &symbols) {
  auto expand = weight.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !expand->hasOneUse())
    return std::nullopt;
  auto argument = dyn_cast<BlockArgument>(expand.getSrc());
  auto prepared =
      MhaDialect::PrepareFunctionsAttrHelper(layer.getContext()).getAttr(layer);
  if (!argument || !argument.hasOneUse() || !prepared ||
      argument.getOwner() != &layer.getBody().front())
    return std::nullopt;
  unsigned first = layer.getNumArguments() - prepared.size();
  if (argument.getArgNumber() < first)
    return std::nullopt;
  auto symbol =
      cast<FlatSymbolRefAttr>(prepared[argument.getArgNumber() - first]);
  auto prepare = symbols.lookup<func::FuncOp>(symbol.getValue());
  if (!prepare || !prepare.getBody().hasOneBlock())
    return std::nullopt;
  auto ret = cast<func::ReturnOp>(prepare.getBody().front().getTerminator());
  auto flattened = ret.getOperand(0).getDefiningOp<tensor::CollapseShapeOp>();
  if (!flattened || !flattened->hasOneUse() ||
      !holdsBF16Values(flattened.getSrc()))
    return std::nullopt;
  return PreparedWeight{argument, prepare, flattened};
}

/// `weight [K, N]` (f32 holding bf16 values) packed in K pairs:
/// `[K/2, N]` f32 whose element (kk, n) holds the bits of bf16 w[2kk, n] in
/// its low half and w[2kk+1, n] in its high half. Elementwise arith on
/// tensors (and views), which the pipeline lowers like the prepare
/// function's other ops.
Value packInKPairs(OpBuilder &b, Location loc, Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  auto bf16Type = RankedTensorType::get({k, n}, b.getBF16Type());
  Value rounded = arith::TruncFOp::create(b, loc, bf16Type, weight);
  auto pairsType = RankedTensorType::get({k / 2, 2, n}, b.getBF16Type());
  Value pairs = tensor::ExpandShapeOp::create(
      b, loc, pairsType, rounded,
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
  auto halfType = RankedTensorType::get({k / 2, n}, b.getBF16Type());
  auto i16Type = RankedTensorType::get({k / 2, n}, b.getI16Type());
  auto i32Type = RankedTensorType::get({k / 2, n}, b.getI32Type());
  auto member = [&](int64_t p) -> Value {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(p),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(k / 2), b.getIndexAttr(1),
                                       b.getIndexAttr(n)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    Value half = tensor::ExtractSliceOp::create(b, loc, halfType, pairs,
                                                offsets, sizes, strides);
    Value bits = arith::BitcastOp::create(b, loc, i16Type, half);
    return arith::ExtUIOp::create(b, loc, i32Type, bits);
  };
  Value sixteen = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(i32Type, b.getI32IntegerAttr(16)));
  Value low = member(0);
  Value high = arith::ShLIOp::create(b, loc, member(1), sixteen);
  Value packed = arith::OrIOp::create(b, loc, low, high);
  return arith::BitcastOp::create(
      b, loc, RankedTensorType::get({k / 2, n}, b.getF32Type()), packed);
}

/// The `mha.bf16_dot` generic that computes `project` from the bf16 input
/// `x [B, T, K]` and the packed weight `packed [K/2, N]`:
/// `out[b, (h,) t, n] = bias + sum_kk sum_p x[b, t, 2kk+p] · w[2kk+p, n]`,
/// where w's pair member p is unpacked from packed[kk, n] in the body.
Value buildBF16Projection(OpBuilder &b, Location loc,
                          RankedTensorType resultType, Value bias, Value x,
                          Value packed) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t k = xType.getDimSize(2);
  bool heads = resultType.getRank() == 4;

  // x as [B, T, K/2, 2].
  SmallVector<int64_t> pairShape = {xType.getDimSize(0), xType.getDimSize(1),
                                    k / 2, 2};
  SmallVector<OpFoldResult> pairSizes = {
      tensor::getMixedSize(b, loc, x, 0), tensor::getMixedSize(b, loc, x, 1),
      b.getIndexAttr(k / 2), b.getIndexAttr(2)};
  Value xPairs = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(pairShape, xType.getElementType()), x,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}, pairSizes);

  // The weights and bias in the result's column layout ([H, d] for heads).
  SmallVector<int64_t> columns(resultType.getShape().drop_front(heads ? 0 : 2));
  if (heads)
    columns = {resultType.getDimSize(1), resultType.getDimSize(3)};
  auto packedType = cast<RankedTensorType>(packed.getType());
  if (heads) {
    packed = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({k / 2, columns[0], columns[1]},
                              packedType.getElementType()),
        packed, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  }

  // The accumulator starts at the bias (or 0), broadcast over the rows.
  SmallVector<OpFoldResult> resultSizes =
      heads
          ? SmallVector<OpFoldResult>{pairSizes[0], b.getIndexAttr(columns[0]),
                                      pairSizes[1], b.getIndexAttr(columns[1])}
          : SmallVector<OpFoldResult>{pairSizes[0], pairSizes[1],
                                      b.getIndexAttr(columns[0])};
  Value empty = tensor::EmptyOp::create(b, loc, resultSizes, b.getF32Type());
  Value init;
  if (bias) {
    if (heads)
      bias = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(columns, b.getF32Type()), bias,
          SmallVector<ReassociationIndices>{{0, 1}});
    SmallVector<int64_t> rows =
        heads ? SmallVector<int64_t>{0, 2} : SmallVector<int64_t>{0, 1};
    init = linalg::BroadcastOp::create(b, loc, bias, empty, rows)->getResult(0);
  } else {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }

  // Loops (b, h, t, j, kk, p) for heads, (b, t, n, kk, p) otherwise.
  unsigned numLoops = heads ? 6 : 5;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  unsigned kk = numLoops - 2, p = numLoops - 1;
  SmallVector<AffineMap> maps;
  if (heads) {
    maps = {AffineMap::get(6, 0, {d(0), d(2), d(kk), d(p)}, ctx),
            AffineMap::get(6, 0, {d(kk), d(1), d(3)}, ctx),
            AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  } else {
    maps = {AffineMap::get(5, 0, {d(0), d(1), d(kk), d(p)}, ctx),
            AffineMap::get(5, 0, {d(kk), d(2)}, ctx),
            AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)};
  }
  SmallVector<utils::IteratorType> iterators(numLoops - 2,
                                             utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{xPairs, packed}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // The member p of the pair: bits [16p, 16p + 16) of the element.
        Value member = linalg::IndexOp::create(nb, nloc, p);
        Value shift = arith::MulIOp::create(
            nb, nloc,
            arith::IndexCastOp::create(nb, nloc, nb.getI32Type(), member),
            arith::ConstantOp::create(nb, nloc, nb.getI32IntegerAttr(16)));
        Value bits =
            arith::BitcastOp::create(nb, nloc, nb.getI32Type(), args[1]);
        Value half = arith::TruncIOp::create(
            nb, nloc, nb.getI16Type(),
            arith::ShRUIOp::create(nb, nloc, bits, shift));
        Value w = arith::BitcastOp::create(nb, nloc, nb.getBF16Type(), half);
        Value product = arith::MulFOp::create(
            nb, nloc, arith::ExtFOp::create(nb, nloc, nb.getF32Type(), args[0]),
            arith::ExtFOp::create(nb, nloc, nb.getF32Type(), w));
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{arith::AddFOp::create(nb, nloc, args[2], product)});
      });
  MhaDialect::Bf16DotAttrHelper(ctx).setAttr(generic, b.getUnitAttr());
  return generic.getResult(0);
}

/// `packed [K/2, N]` in panels of 16 columns, `[N/16, K/2, 16]`.
Value toPanels(OpBuilder &b, Location loc, Value packed) {
  auto type = cast<RankedTensorType>(packed.getType());
  int64_t pairs = type.getDimSize(0), n = type.getDimSize(1);
  Value split = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({pairs, n / kColumnBlock, kColumnBlock},
                            type.getElementType()),
      packed, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{n / kColumnBlock, pairs, kColumnBlock},
      type.getElementType());
  return linalg::TransposeOp::create(b, loc, split, init,
                                     ArrayRef<int64_t>{1, 0, 2})
      ->getResult(0);
}

/// `panels [N/16, K/2, 16]` back to `[K/2, N]` (what the generic reads).
Value fromPanels(OpBuilder &b, Location loc, Value panels) {
  auto type = cast<RankedTensorType>(panels.getType());
  int64_t blocks = type.getDimSize(0), pairs = type.getDimSize(1);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{pairs, blocks, kColumnBlock},
      type.getElementType());
  Value transposed = linalg::TransposeOp::create(b, loc, panels, init,
                                                 ArrayRef<int64_t>{1, 0, 2})
                         ->getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({pairs, blocks * kColumnBlock},
                            type.getElementType()),
      transposed, SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

/// Rows of the output projection's input per parallel tile of its split:
/// whole AMX tiles of rows, enough tiles for the threads at T = 128.
constexpr int64_t kSplitRowTile = 32;

/// `op`, a generic whose loops start (batch, token, ...), as an scf.forall
/// over one sequence and kSplitRowTile tokens per tile: the split reads and
/// writes the whole input once, in parallel like the projections around
/// it. Its result.
static Value tileSplitRows(OpBuilder &b, linalg::GenericOp op) {
  IRRewriter rewriter(b);
  rewriter.setInsertionPoint(op);
  SmallVector<OpFoldResult> tileSizes(op.getNumLoops(), b.getIndexAttr(0));
  tileSizes[0] = b.getIndexAttr(1);
  tileSizes[1] = b.getIndexAttr(kSplitRowTile);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(tileSizes);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return op.getResult(0);
  rewriter.replaceOp(op, tiled->replacements);
  // The tile of one sequence as a generic without its unit batch loop:
  // mha-vectorize vectorizes generics of up to 3 loops.
  dropUnitLoops(rewriter, cast<linalg::GenericOp>(tiled->tiledOps.front()));
  return tiled->replacements.front();
}

/// The output projection's f32 input `a` ([B, T, K], or the heads
/// [B, H, T, dv] read as [B, T, H·dv]) as two bf16 terms along K,
/// `[B, T, 2K]` = [hi | lo] with hi = bf16(a) (to nearest, ties away from
/// zero, on a's bits) and lo = bf16(a - hi) (nearest even), buildBF16Part:
/// a - hi is exact in f32, so hi + lo is a to a relative 2^-17 (the bf16
/// rounding of the remainder), and
/// [hi | lo]·[W; W] = hi·W + lo·W sums exact products in f32. With
/// `terms` 1, hi alone, `[B, T, K]`: `a` rounded to bf16.
Value splitInBF16Terms(OpBuilder &b, Location loc, Value a, int64_t terms) {
  auto type = cast<RankedTensorType>(a.getType());
  bool heads = type.getRank() == 4;
  // The terms' layout, [B, T, K] with K = H·dv for the heads.
  int64_t k =
      heads ? type.getDimSize(1) * type.getDimSize(3) : type.getDimSize(2);
  unsigned tokenDim = heads ? 2 : 1;
  // Generics over (b, t, k), or (b, t, h, d) reading the heads where they
  // are (dv stays innermost, so each vector is a contiguous piece of a
  // head's row), write the terms into the two halves of one [B, T, 2K]
  // buffer. (A concatenation of two results would be copied element by
  // element; a [B·T, 2, K] result reshaped to [B, T, 2K] would fold with
  // the generic's [B, T, K, 2] view into a reshape of a rank-2 value, which
  // the kernels do not match.) The halves are slices of a
  // `bufferization.alloc_tensor`, which the canonicalizer does not fold
  // as it folds slices of a `tensor.empty`, so one-shot bufferization
  // writes them in place.
  MLIRContext *ctx = b.getContext();
  auto termsType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(tokenDim), terms * k},
      b.getBF16Type());
  SmallVector<Value> dynamicSizes;
  SmallVector<OpFoldResult> halfSizes;
  for (unsigned dim : {0u, tokenDim}) {
    halfSizes.push_back(tensor::getMixedSize(b, loc, a, dim));
    if (type.isDynamicDim(dim))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, a, dim));
  }
  halfSizes.push_back(b.getIndexAttr(k));
  Value buffer =
      bufferization::AllocTensorOp::create(b, loc, termsType, dynamicSizes);
  auto halfOffsets = [&](int64_t index) {
    return SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                     b.getIndexAttr(index * k)};
  };
  SmallVector<OpFoldResult> unitStrides(3, b.getIndexAttr(1));
  unsigned loops = heads ? 4 : 3;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(loops, ctx);
  // The heads [B, H, T, dv] read at (b, t, h, d).
  AffineMap input =
      heads ? AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, ctx)
            : identity;
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  // Term `index` (0: hi, 1: lo) into its half of `into`.
  auto term = [&](Value into, int64_t index) -> Value {
    Value init = tensor::ExtractSliceOp::create(
        b, loc, into, halfOffsets(index), halfSizes, unitStrides);
    auto initType = cast<RankedTensorType>(init.getType());
    if (heads)
      init = tensor::ExpandShapeOp::create(
          b, loc,
          RankedTensorType::get({initType.getDimSize(0), initType.getDimSize(1),
                                 type.getDimSize(1), type.getDimSize(3)},
                                b.getBF16Type()),
          init, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{a}, ValueRange{init},
        SmallVector<AffineMap>{input, identity}, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          linalg::YieldOp::create(
              nb, nloc, buildBF16Part(nb, nloc, args[0], /*lo=*/index == 1));
        });
    Value half = tileSplitRows(b, generic);
    if (heads)
      half = tensor::CollapseShapeOp::create(
          b, loc, initType, half,
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    return tensor::InsertSliceOp::create(b, loc, half, into, halfOffsets(index),
                                         halfSizes, unitStrides);
  };
  // One after the other, each into the result of the last (two results
  // of one generic inserted into one buffer bufferize to a copy).
  Value hi = term(buffer, 0);
  return terms == 2 ? term(hi, 1) : hi;
}

struct MhaBF16ProjectionsPass
    : mha::impl::MhaBF16ProjectionsBase<MhaBF16ProjectionsPass> {
  using MhaBF16ProjectionsBase::MhaBF16ProjectionsBase;

  /// The options for the layer being rewritten: its recorded bf16 path's.
  bool usePanels = false, useSplitF32 = false, useRoundF32 = false;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> layers;
    for (auto function : module.getOps<func::FuncOp>())
      if (MhaDialect::PrepareFunctionsAttrHelper(&getContext())
              .getAttr(function))
        layers.push_back(function);
    for (func::FuncOp layer : layers) {
      // The layer's recorded bf16 path decides where it has one (its
      // prepare functions follow it): none on the f32 path, panels and the
      // output projection on the AMX path.
      std::optional<BF16Path> path = getRecordedBF16Path(layer);
      if (path && *path == BF16Path::F32)
        continue;
      usePanels = path ? *path == BF16Path::Amx : bool(panels);
      bool amx = !path || *path == BF16Path::Amx;
      useSplitF32 = amx && splitF32;
      useRoundF32 = amx && roundF32;
      SmallVector<ProjectOp> projections;
      layer.walk([&](ProjectOp op) { projections.push_back(op); });
      for (ProjectOp op : projections)
        rewrite(op, layer, symbols);
      if (!useSplitF32 && !useRoundF32)
        continue;
      SmallVector<OutputProjectOp> outputs;
      layer.walk([&](OutputProjectOp op) { outputs.push_back(op); });
      for (OutputProjectOp op : outputs)
        rewrite(op, layer, symbols);
    }
  }

  /// Whether `bias` (or its absence) suits the generic: f32.
  static bool isF32Bias(Value bias) {
    return !bias ||
           cast<RankedTensorType>(bias.getType()).getElementType().isF32();
  }

  /// Has the prepare function of `weight` ([K, N] f32 holding bf16 values)
  /// return it packed in K pairs (in panels with `panels`), twice along K
  /// with `twice` ([W; W], [2K, N]), and returns the layer's [K'/2, N] view
  /// of it (K' = 2K with `twice`), built at `op`.
  Value packWeight(PreparedWeight &weight, func::FuncOp layer, Operation *op,
                   bool twice) {
    OpBuilder b(weight.flattened);
    Location loc = weight.flattened.getLoc();
    Value values = weight.flattened.getSrc();
    if (twice)
      values = tensor::ConcatOp::create(b, loc, /*dim=*/0,
                                        ValueRange{values, values});
    auto valuesType = cast<RankedTensorType>(values.getType());
    int64_t k = valuesType.getDimSize(0), n = valuesType.getDimSize(1);
    Value packed = packInKPairs(b, loc, values);
    auto flatType = RankedTensorType::get({k / 2 * n}, b.getF32Type());
    Value flat;
    if (usePanels)
      flat = tensor::CollapseShapeOp::create(
          b, loc, flatType, toPanels(b, loc, packed),
          SmallVector<ReassociationIndices>{{0, 1, 2}});
    else
      flat = tensor::CollapseShapeOp::create(
          b, loc, flatType, packed, SmallVector<ReassociationIndices>{{0, 1}});
    weight.flattened.getResult().replaceAllUsesWith(flat);
    weight.flattened.erase();
    weight.prepare.setType(FunctionType::get(
        &getContext(), weight.prepare.getArgumentTypes(), {flatType}));

    // The layer's argument takes its new type; the projection reads it.
    weight.argument.setType(flatType);
    SmallVector<Type> argumentTypes(layer.getBody().front().getArgumentTypes());
    layer.setType(FunctionType::get(&getContext(), argumentTypes,
                                    layer.getResultTypes()));
    b.setInsertionPoint(op);
    if (usePanels)
      return fromPanels(
          b, op->getLoc(),
          tensor::ExpandShapeOp::create(
              b, op->getLoc(),
              RankedTensorType::get({n / kColumnBlock, k / 2, kColumnBlock},
                                    b.getF32Type()),
              weight.argument, SmallVector<ReassociationIndices>{{0, 1, 2}}));
    return tensor::ExpandShapeOp::create(
        b, op->getLoc(), RankedTensorType::get({k / 2, n}, b.getF32Type()),
        weight.argument, SmallVector<ReassociationIndices>{{0, 1}});
  }

  /// Rewrites `op` into the bf16 generic on its packed weight, or leaves it
  /// as it is when it is not a shared-weight projection of widened bf16
  /// values with sizes the register blocks divide.
  void rewrite(ProjectOp op, func::FuncOp layer, SymbolTable &symbols) {
    Value x = widenedBF16(op.getInput());
    if (!x || op.isPerHead())
      return;
    auto xType = cast<RankedTensorType>(x.getType());
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (xType.getRank() != 3 || !weightType.hasStaticShape() ||
        !resultType.getElementType().isF32())
      return;
    int64_t k = weightType.getDimSize(0), n = weightType.getDimSize(1);
    // Columns per head where the result is heads.
    int64_t blockColumns =
        resultType.getRank() == 4 ? resultType.getDimSize(3) : n;
    if (k % 2 != 0 || ShapedType::isDynamic(blockColumns) ||
        blockColumns % kColumnBlock != 0 || !isF32Bias(op.getBias()))
      return;
    std::optional<PreparedWeight> weight =
        getPreparedWeight(op.getWeight(), layer, symbols);
    if (!weight)
      return;

    // The prepare function returns the packed weight instead.
    Value weightPairs = packWeight(*weight, layer, op, /*twice=*/false);
    OpBuilder b(op);
    Operation *oldWeight = op.getWeight().getDefiningOp();
    Operation *widening = op.getInput().getDefiningOp();
    op.getResult().replaceAllUsesWith(buildBF16Projection(
        b, op.getLoc(), resultType, op.getBias(), x, weightPairs));
    op.erase();
    oldWeight->erase();
    if (widening->use_empty())
      widening->erase();
  }

  /// With `split-f32`: the output projection of attention's f32 output on
  /// the bf16 generic, its input split in two bf16 terms
  /// (splitInBF16Terms) and its weight packed twice along K; with
  /// `round-f32` alone, its input rounded (one term) and its weight packed
  /// once.
  void rewrite(OutputProjectOp op, func::FuncOp layer, SymbolTable &symbols) {
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (!inputType.getElementType().isF32() || !weightType.hasStaticShape() ||
        resultType.getRank() != 3 || !resultType.getElementType().isF32() ||
        ShapedType::isDynamic(resultType.getDimSize(2)) ||
        resultType.getDimSize(2) % kColumnBlock != 0 ||
        !isF32Bias(op.getBias()))
      return;
    if (inputType.getRank() == 4 &&
        (ShapedType::isDynamic(inputType.getDimSize(1)) ||
         ShapedType::isDynamic(inputType.getDimSize(3))))
      return;
    std::optional<PreparedWeight> weight =
        getPreparedWeight(op.getWeight(), layer, symbols);
    if (!weight)
      return;

    Value weightPairs = packWeight(*weight, layer, op, /*twice=*/useSplitF32);
    OpBuilder b(op);
    Value x = splitInBF16Terms(b, op.getLoc(), op.getInput(),
                               /*terms=*/useSplitF32 ? 2 : 1);
    Operation *oldWeight = op.getWeight().getDefiningOp();
    op.getResult().replaceAllUsesWith(buildBF16Projection(
        b, op.getLoc(), resultType, op.getBias(), x, weightPairs));
    op.erase();
    oldWeight->erase();
  }
};
} // namespace
