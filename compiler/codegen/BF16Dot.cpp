//===- BF16Dot.cpp - bf16 projections as vdpbf16ps register blocks --------===//
//
// mha-bf16-projections writes each bf16 projection as a `linalg.generic`
// marked `mha.bf16_dot` over (rows, columns, kk, p): the bf16 input
// `x [B, T, K]` read in pairs (2kk, 2kk+1) and the weight packed in K pairs
// (one f32 element per bf16 pair, compiler/graph/BF16Projections.cpp). This
// pass writes that generic as upstream's `x86vector.avx512.dot` (AVX512_BF16
// `vdpbf16ps`: 16 f32 accumulators += the dot products of 16 bf16 pairs),
// the register block of the f32 kernel with twice the products per
// instruction:
//
// - an `scf.forall` over (column tile, row tile, batch), the batch
//   innermost and the column tile outermost, so that the tiles sharing a
//   weight tile run back to back on one thread (as mha-tile-projections
//   orders the f32 projections'); each output element is summed by one
//   thread in one order, so results do not depend on the thread count;
// - in a tile, blocks of `rows` rows by 32 columns (16 where the columns
//   per head are an odd number of vectors): 2·rows accumulators
//   (vector<16xf32>) start at the bias and are carried through the loop
//   over k pairs; each step loads two vectors of packed weights (16 columns
//   by 2 k each) and, per row, broadcasts the row's bf16 pair (one i32) to
//   the 16 lanes: 2·rows dot instructions per 2 loads and `rows`
//   broadcasts. The rows a block does not divide take blocks of one row.
//
// Vector code on tensors, before bufferization, like mha-vectorize's. Built
// by hand; LLVM 22's x86vector::populateVectorContractToPackedTypeDotProduct-
// Patterns lowers a packed bf16 vector.contract to the same dot, so this
// pass should become mha-vectorize's register blocks plus that pattern
// (docs/upstream.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/codegen/BF16Projection.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHABF16DOT
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

std::optional<BF16Projection>
mlir::mha::matchBF16Projection(linalg::GenericOp op) {
  if (!MhaDialect::Bf16DotAttrHelper(op.getContext()).isAttrPresent(op) ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  BF16Projection match;
  match.op = op;
  auto pairs = op.getDpsInputs()[0].getDefiningOp<tensor::ExpandShapeOp>();
  if (!pairs)
    return std::nullopt;
  match.x = pairs.getSrc();
  match.packed = op.getDpsInputs()[1];
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  match.heads = resultType.getRank() == 4;
  Operation *init = op.getDpsInits()[0].getDefiningOp();
  if (auto broadcast = dyn_cast_or_null<linalg::BroadcastOp>(init))
    match.bias = broadcast.getInput();
  else if (auto fill = dyn_cast_or_null<linalg::FillOp>(init))
    match.fill = fill.getInputs()[0];
  else
    return std::nullopt;
  auto xType = cast<RankedTensorType>(match.x.getType());
  auto packedType = cast<RankedTensorType>(match.packed.getType());
  if (xType.getRank() != 3 || !xType.getElementType().isBF16() ||
      !packedType.hasStaticShape() ||
      packedType.getRank() != (match.heads ? 3 : 2) ||
      packedType.getDimSize(0) * 2 != xType.getDimSize(2) ||
      resultType.getShape().back() % 16 != 0)
    return std::nullopt;
  // [K/2, N] (or its [K/2, H, d] view) read back from panels of 16
  // columns: collapse(transpose<1, 0, 2>(panels [N/16, K/2, 16])).
  Value flat = match.packed;
  if (match.heads)
    if (auto expand = flat.getDefiningOp<tensor::ExpandShapeOp>())
      flat = expand.getSrc();
  if (auto collapse = flat.getDefiningOp<tensor::CollapseShapeOp>())
    if (auto transpose = collapse.getSrc().getDefiningOp<linalg::TransposeOp>();
        transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0, 2} &&
        cast<RankedTensorType>(transpose.getInput().getType())
                .getShape()
                .back() == 16)
      match.panels = transpose.getInput();
  match.pairs = packedType.getDimSize(0);
  match.headColumns = packedType.getShape().back();
  match.columns = match.heads ? packedType.getDimSize(1) * match.headColumns
                              : match.headColumns;
  return match;
}

void BF16TileLoop::getResultSlice(OpBuilder &b, bool heads, int64_t tileColumns,
                                  SmallVector<OpFoldResult> &offsets,
                                  SmallVector<OpFoldResult> &sizes) const {
  OpFoldResult one = b.getIndexAttr(1), width = b.getIndexAttr(tileColumns);
  if (heads) {
    offsets = {batchIndex, head, row0, column0};
    sizes = {one, one, rows, width};
  } else {
    offsets = {batchIndex, row0, column0};
    sizes = {one, rows, width};
  }
}

std::pair<int64_t, int64_t>
mlir::mha::getBF16Tiles(Operation *function, int64_t rowTile, int64_t colTile) {
  if (CodegenSizesAttr sizes = getRecordedCodegenSizes(function)) {
    if (sizes.getProjectionRows() > 0)
      rowTile = sizes.getProjectionRows();
    if (sizes.getProjectionCols() > 0)
      colTile = sizes.getProjectionCols();
  }
  return {rowTile, colTile};
}

int64_t mlir::mha::bf16ColumnTile(int64_t extent, int64_t limit, int64_t step) {
  for (int64_t size = std::min(extent, std::max(limit, step)) / step * step;
       size > step; size -= step)
    if (extent % size == 0)
      return size;
  return step;
}

BF16TileLoop mlir::mha::buildBF16TileLoop(ImplicitLocOpBuilder &b,
                                          const BF16Projection &projection,
                                          int64_t tileColumns,
                                          int64_t rowTile) {
  int64_t columns = projection.columns, headColumns = projection.headColumns;
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, value);
  };
  // The result's sizes are the accumulator's (the op's own result does not
  // exist yet where the kernel goes).
  linalg::GenericOp op = projection.op;
  Value init = op.getDpsInits()[0];
  Value empty = tensor::EmptyOp::create(
      b, tensor::getMixedSizes(b, b.getLoc(), init), b.getF32Type());
  Value batch = tensor::DimOp::create(b, projection.x, 0);
  Value tokens = tensor::DimOp::create(b, projection.x, 1);
  Value rowTiles = arith::CeilDivUIOp::create(b, tokens, index(rowTile));
  SmallVector<OpFoldResult> counts = {b.getIndexAttr(columns / tileColumns),
                                      rowTiles, batch};
  BF16TileLoop loop;
  loop.forall = scf::ForallOp::create(b, counts, ValueRange{empty},
                                      /*mapping=*/std::nullopt);
  b.setInsertionPoint(loop.forall.getTerminator());
  loop.column = arith::MulIOp::create(b, loop.forall.getInductionVar(0),
                                      index(tileColumns));
  loop.row0 =
      arith::MulIOp::create(b, loop.forall.getInductionVar(1), index(rowTile));
  loop.batchIndex = loop.forall.getInductionVar(2);
  loop.rows = arith::MinUIOp::create(
      b, index(rowTile), arith::SubIOp::create(b, tokens, loop.row0));
  if (projection.heads) {
    loop.head = arith::DivUIOp::create(b, loop.column, index(headColumns));
    loop.column0 = arith::RemUIOp::create(b, loop.column, index(headColumns));
  } else {
    loop.column0 = loop.column;
  }
  return loop;
}

/// Erases `op` if it has no uses and no side effects, then the operand
/// definitions that it leaves so.
static void eraseDeadChain(Operation *op) {
  if (!op || !op->use_empty() || !isMemoryEffectFree(op))
    return;
  SmallVector<Operation *> operands;
  for (Value operand : op->getOperands())
    if (Operation *definition = operand.getDefiningOp())
      operands.push_back(definition);
  op->erase();
  for (Operation *definition : operands)
    eraseDeadChain(definition);
}

bool mlir::mha::hasBF16Projections(Operation *root) {
  return root
      ->walk([](linalg::GenericOp op) {
        return matchBF16Projection(op) ? WalkResult::interrupt()
                                       : WalkResult::advance();
      })
      .wasInterrupted();
}

void mlir::mha::replaceBF16Projections(
    Operation *root,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, BF16Projection &)>
        buildKernel) {
  SmallVector<BF16Projection> projections;
  root->walk([&](linalg::GenericOp op) {
    if (std::optional<BF16Projection> match = matchBF16Projection(op))
      projections.push_back(*match);
  });
  for (BF16Projection &projection : projections) {
    ImplicitLocOpBuilder b(projection.op.getLoc(), projection.op);
    Value result = buildKernel(b, projection);
    projection.op.getResult(0).replaceAllUsesWith(result);
    Operation *init = projection.op.getDpsInits()[0].getDefiningOp();
    Operation *weight = projection.op.getDpsInputs()[1].getDefiningOp();
    projection.op.erase();
    if (init && init->use_empty())
      init->erase();
    eraseDeadChain(weight);
  }
}

namespace {
/// A block is two vectors of `lanes` f32 lanes wide (16 in a zmm
/// register: 32 columns), or one where the columns (per tileLoop.head) are
/// an odd number of vectors.
class KernelBuilder {
public:
  KernelBuilder(ImplicitLocOpBuilder &b, BF16Projection p, int64_t rowTile,
                int64_t colTile, int64_t blockRows, int64_t lanes)
      : b(b), p(p), rowTile(rowTile), blockRows(blockRows), lanes(lanes),
        pairs(p.pairs), headColumns(p.headColumns) {
    vectors = headColumns % (2 * lanes) == 0 ? 2 : 1;
    tileColumns = bf16ColumnTile(headColumns, colTile, vectors * lanes);
    f32Vector = VectorType::get({lanes}, b.getF32Type());
    bf16Vector = VectorType::get({2 * lanes}, b.getBF16Type());
  }

  Value build() {
    OpBuilder::InsertionGuard guard(b);
    tileLoop = buildBF16TileLoop(b, p, tileColumns, rowTile);
    scf::ForallOp forall = tileLoop.forall;
    Value rows = tileLoop.rows;
    // The tile [rows, tileColumns] of the result.
    SmallVector<OpFoldResult> offsets, sizes;
    tileLoop.getResultSlice(b, p.heads, tileColumns, offsets, sizes);
    SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
    auto tileType = RankedTensorType::get({ShapedType::kDynamic, tileColumns},
                                          b.getF32Type());
    Value out = forall.getRegionIterArgs()[0];
    Value tile = tensor::ExtractSliceOp::create(b, tileType, out, offsets,
                                                sizes, strides);
    // Whole blocks of rows, then the rows they leave one at a time.
    Value wholeRows = arith::SubIOp::create(
        b, rows, arith::RemUIOp::create(b, rows, index(blockRows)));
    tile = rowLoop(index(0), wholeRows, blockRows, tile);
    tile = rowLoop(wholeRows, rows, 1, tile);
    b.setInsertionPointToEnd(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, tile, out, offsets, sizes,
                                          strides);
    return forall.getResult(0);
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, value);
  }

  /// Rows [from, to) of the tile in blocks of `count` rows.
  Value rowLoop(Value from, Value to, int64_t count, Value tile) {
    auto loop = scf::ForOp::create(b, from, to, index(count), ValueRange{tile});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value next =
        columnLoop(loop.getInductionVar(), count, loop.getRegionIterArg(0));
    scf::YieldOp::create(b, next);
    return loop.getResult(0);
  }

  /// The blocks of `count` rows from tile row `row` across the tile.
  Value columnLoop(Value row, int64_t count, Value tile) {
    auto loop = scf::ForOp::create(b, index(0), index(tileColumns),
                                   index(vectors * lanes), ValueRange{tile});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value next =
        block(row, loop.getInductionVar(), count, loop.getRegionIterArg(0));
    scf::YieldOp::create(b, next);
    return loop.getResult(0);
  }

  /// Indices of packed weights or bias at column `column` of the tile (a
  /// multiple of 16): [tileLoop.head, column] where the result is heads.
  SmallVector<Value> columnIndices(Value column) {
    Value c = arith::AddIOp::create(b, tileLoop.column0, column);
    if (p.heads)
      return {tileLoop.head, c};
    return {c};
  }

  Value read(Value source, SmallVector<Value> indices, VectorType type) {
    Value padding =
        arith::ConstantOp::create(b, b.getZeroAttr(type.getElementType()));
    return vector::TransferReadOp::create(b, type, source, indices, padding,
                                          ArrayRef<bool>{true});
  }

  /// One block: `count` rows from tile row `row`, 32 columns from tile
  /// column `column`, summed over all k pairs; returns the tile with the
  /// block written.
  Value block(Value row, Value column, int64_t count, Value tile) {
    SmallVector<Value> columnsOf;
    for (int64_t v = 0; v < vectors; ++v)
      columnsOf.push_back(arith::AddIOp::create(b, column, index(v * lanes)));
    // The accumulators start at the bias of their columns (or the fill).
    SmallVector<Value> inits;
    for (int64_t v = 0; v < vectors; ++v) {
      Value start =
          p.bias
              ? read(p.bias, columnIndices(columnsOf[v]), f32Vector)
              : vector::BroadcastOp::create(b, f32Vector, p.fill).getResult();
      inits.push_back(start);
    }
    SmallVector<Value> accumulators;
    for (int64_t r = 0; r < count; ++r)
      llvm::append_range(accumulators, inits);

    SmallVector<Value> rowIndices;
    for (int64_t r = 0; r < count; ++r)
      rowIndices.push_back(arith::AddIOp::create(
          b, tileLoop.row0,
          r ? arith::AddIOp::create(b, row, index(r)).getResult() : row));
    auto pairLoop =
        scf::ForOp::create(b, index(0), index(pairs), index(1), accumulators);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(pairLoop.getBody());
      Value kk = pairLoop.getInductionVar();
      // 16 columns by a pair of k each.
      SmallVector<Value> weights;
      for (int64_t v = 0; v < vectors; ++v) {
        SmallVector<Value> indices = {kk};
        llvm::append_range(indices, columnIndices(columnsOf[v]));
        weights.push_back(vector::BitCastOp::create(
            b, bf16Vector, read(p.packed, indices, f32Vector)));
      }
      // Row r's pair x[2kk], x[2kk + 1] as one i32, in every lane.
      Value k = arith::MulIOp::create(b, kk, index(2));
      auto pairType = VectorType::get({2}, b.getBF16Type());
      auto oneI32 = VectorType::get({1}, b.getI32Type());
      auto i32Vector = VectorType::get({lanes}, b.getI32Type());
      SmallVector<Value> next;
      for (int64_t r = 0; r < count; ++r) {
        Value pair =
            read(p.x, {tileLoop.batchIndex, rowIndices[r], k}, pairType);
        Value broadcast = vector::BroadcastOp::create(
            b, i32Vector, vector::BitCastOp::create(b, oneI32, pair));
        Value lhs = vector::BitCastOp::create(b, bf16Vector, broadcast);
        for (int64_t v = 0; v < vectors; ++v)
          next.push_back(x86vector::DotBF16Op::create(
              b, pairLoop.getRegionIterArgs()[r * vectors + v], lhs,
              weights[v]));
      }
      scf::YieldOp::create(b, next);
    }
    for (int64_t r = 0; r < count; ++r) {
      Value tileRow =
          r ? arith::AddIOp::create(b, row, index(r)).getResult() : row;
      for (int64_t v = 0; v < vectors; ++v)
        tile = vector::TransferWriteOp::create(
                   b, pairLoop.getResult(r * vectors + v), tile,
                   ValueRange{tileRow, columnsOf[v]}, ArrayRef<bool>{true})
                   .getResult();
    }
    return tile;
  }

  ImplicitLocOpBuilder &b;
  BF16Projection p;
  int64_t rowTile, blockRows, lanes;
  int64_t pairs, headColumns, tileColumns, vectors;
  VectorType f32Vector, bf16Vector;
  /// The tile loop, set by build().
  BF16TileLoop tileLoop;
};

struct MhaBF16DotPass : mha::impl::MhaBF16DotBase<MhaBF16DotPass> {
  using MhaBF16DotBase::MhaBF16DotBase;

  void runOnOperation() override {
    // A function whose recorded bf16 path is another is not this pass's.
    std::optional<BF16Path> path = getRecordedBF16Path(getOperation());
    if (path && *path != BF16Path::Avx512)
      return;
    if (rowTile < 1 || colTile < 1 || rows < 1) {
      getOperation().emitError()
          << "mha-bf16-dot expects row-tile, col-tile and rows >= 1, got "
             "row-tile="
          << int64_t(rowTile) << " col-tile=" << int64_t(colTile)
          << " rows=" << int64_t(rows);
      return signalPassFailure();
    }
    // The lanes: the option where set, else the record (mha-strategy).
    if (!hasBF16Projections(getOperation()))
      return;
    FailureOr<int64_t> recordedLanes = getOptionOrRecorded(
        getOperation(), "mha-bf16-dot", lanes, "lanes",
        [](CodegenSizesAttr sizes) { return sizes.getBf16Lanes(); });
    if (failed(recordedLanes))
      return signalPassFailure();
    int64_t vectorLanes = *recordedLanes;
    if (!llvm::is_contained({4, 8, 16}, vectorLanes)) {
      getOperation().emitError()
          << "mha-bf16-dot expects lanes 4, 8 or 16, got " << vectorLanes;
      return signalPassFailure();
    }
    int64_t rowTile, colTile;
    std::tie(rowTile, colTile) =
        getBF16Tiles(getOperation(), this->rowTile, this->colTile);
    replaceBF16Projections(getOperation(), [&](ImplicitLocOpBuilder &b,
                                               BF16Projection &projection) {
      return KernelBuilder(b, projection, rowTile, colTile, rows, vectorLanes)
          .build();
    });
  }
};
} // namespace
