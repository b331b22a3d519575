//===- BF16Amx.cpp - bf16 projections on AMX tiles
//-------------------------===//
//
// The `mha.bf16_dot` projections (compiler/graph/BF16Projections.cpp) on
// AMX: TDPBF16PS multiplies a 16x32 bf16 tile of x by a 32x16 bf16 tile of
// W (16 rows of K pairs by 16 columns) into 16x16 f32 accumulators, 16
// times the products of a vdpbf16ps per instruction. The K-pair packing of
// the prepared weights is AMX's B-tile layout: a B tile is 16 rows (k
// pairs) of 64 bytes (16 columns of one pair each), read with the packed
// buffer's row stride.
//
// - An `scf.forall` over (column tile, row tile, batch), as mha-bf16-dot's
//   (each output element is summed by one thread in one order, so results
//   do not depend on the thread count).
// - In a tile, blocks of 32 rows by 32 columns: 2 A tiles x 2 B tiles into
//   4 accumulators, the 8 tile registers (16 columns and 1 B tile where the
//   columns per tileLoop.head are an odd multiple of 16; 16 rows and 1 A tile
//   for the rows that 32 does not divide). Per 32 k: 4 tile loads, 4 TDPBF16PS.
//   A K that 32 does not divide ends with smaller tiles (2·r k).
// - The accumulators start at the bias, loaded with a row stride of 0
//   (every row of the tile is the bias's 16 columns), or at zero.
// - The k loop is unrolled in chunks of `k-chunk` steps; between chunks
//   the accumulators go through the result scratch (an f32 tile lives in
//   no register across an `scf.for`: LLVM 22's cf-to-llvm has no type
//   conversion for `!amx.tile` block arguments), so a K of up to
//   32·k-chunk keeps them in registers throughout.
// - Rows that 16 does not divide (the last rows of T = 509, decoding's
//   T = 1, a dynamic T) are copied into a zero-padded 16-row scratch and
//   computed as a whole tile, whose extra rows are not written back: a
//   tile load never reads past x.
//
// Why on tensors, before bufferization, with `bufferization.to_buffer`:
// the AMX ops take memrefs, but the generic, its bias and its place in the
// result are found on tensors (matchBF16Projection, shared with
// mha-bf16-dot), and one-shot bufferization then puts the result where
// the f32 path's goes. x, the packed weight and the bias are read through
// read-only `to_buffer`s; each tile of the result is accumulated in a
// stack scratch (`memref.alloca`, [row-tile, columns of the tile] f32)
// that `to_tensor` hands back and `tensor.parallel_insert_slice` copies
// into the result: one copy of the tile from L1 per tile, small against
// its K/2 TDPBF16PS steps, for a kernel that needs no memref matching.
//
// convert-vector-to-llvm with `enable-amx` lowers the ops to LLVM's
// `llvm.x86.*.internal` tile intrinsics, whose tile configuration
// (`ldtilecfg`) the X86 back end inserts; the target needs amx-tile and
// amx-bf16, and the process the kernel's permission for the tile data
// (ARCH_REQ_XCOMP_PERM: the JIT runtime and mha-compile's wrapper ask).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/codegen/AmxTile.h"
#include "compiler/codegen/BF16Projection.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHABF16AMX
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// The memref type `to_buffer` gives `type`: any offset and strides but a
/// unit innermost stride, which the tile loads need.
MemRefType bufferType(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

/// How many times `row-tile` rows a parallel tile takes where its column
/// blocks' weight panels stay in L1 (AmxKernelBuilder).
constexpr int64_t kPanelReuse = 4;

class AmxKernelBuilder {
public:
  AmxKernelBuilder(ImplicitLocOpBuilder &b, BF16Projection p, int64_t rowTile,
                   int64_t colTile, int64_t kChunk, int64_t l1Bytes)
      : b(b), p(p), rowTile(rowTile), kChunk(kChunk), pairs(p.pairs),
        headColumns(p.headColumns), columns(p.columns) {
    bTiles = headColumns % (2 * kAmxTile) == 0 ? 2 : 1;
    tileColumns = bf16ColumnTile(headColumns, colTile, bTiles * kAmxTile);
    // The tile's column loop passes over its row blocks: a column block's
    // weight panel (K by its columns, bf16) that fits in two thirds of L1
    // (the rest for the rows of x streaming past) is read from L2 once for
    // all of them, so more row blocks read it for one load. A panel that
    // does not fit gains nothing from more rows but a larger scratch
    // (docs/performance.md, 2026-11-28).
    int64_t panelBytes = 2 * pairs * bTiles * kAmxTile * 2;
    if (3 * panelBytes <= 2 * l1Bytes) {
      int64_t rows = kPanelReuse * rowTile;
      int64_t tokens = cast<ShapedType>(p.x.getType()).getDimSize(/*tokens=*/1);
      if (ShapedType::isStatic(tokens))
        rows = std::min<int64_t>(rows, llvm::alignTo(tokens, 2 * kAmxTile));
      this->rowTile = std::max(rowTile, rows);
    }
    fullSteps = 2 * pairs / kAmxStep;
    tailPairs = pairs % (kAmxStep / 2);
    accType = amx::TileType::get({kAmxTile, kAmxTile}, b.getF32Type());
  }

  Value build() {
    // The operands' buffers, read only.
    auto toBuffer = [&](Value tensor) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      return bufferization::ToBufferOp::create(b, bufferType(type), tensor,
                                               /*readOnly=*/true);
    };
    xBuffer = toBuffer(p.x);
    packedBuffer = toBuffer(p.panels ? p.panels : p.packed);
    if (p.bias)
      biasBuffer = toBuffer(p.bias);
    OpBuilder::InsertionGuard guard(b);
    tileLoop = buildBF16TileLoop(b, p, tileColumns, rowTile);
    scf::ForallOp forall = tileLoop.forall;
    Value rows = tileLoop.rows;

    // The tile's results accumulate here, on the stack.
    auto scratchType = MemRefType::get({rowTile, tileColumns}, b.getF32Type());
    scratch = memref::AllocaOp::create(
        b, scratchType, b.getI64IntegerAttr(kAmxScratchAlignment));
    // The initial values of the accumulators where there is no bias: zero
    // (tilezero), or the fill value broadcast from a 16-element row.
    if (!p.bias && !matchPattern(p.fill, m_AnyZeroFloat())) {
      fillRow = memref::AllocaOp::create(
          b, MemRefType::get({kAmxTile}, b.getF32Type()),
          b.getI64IntegerAttr(kAmxScratchAlignment));
      linalg::FillOp::create(b, ValueRange{p.fill}, ValueRange{fillRow});
    }

    // Rows [0, whole32) in blocks of 32, then one of 16 if that many are
    // left, then the rest (fewer than 16) from the zero-padded copy.
    Value whole16 = arith::SubIOp::create(
        b, rows, arith::RemUIOp::create(b, rows, index(kAmxTile)));
    Value whole32 = arith::SubIOp::create(
        b, rows, arith::RemUIOp::create(b, rows, index(2 * kAmxTile)));
    Value hasHalf =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, whole32, whole16);
    Value hasRest =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, whole16, rows);
    Value padded = copyRestRows(rows, whole16, hasRest);

    auto columnLoop = scf::ForOp::create(b, index(0), index(tileColumns),
                                         index(bTiles * kAmxTile));
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(columnLoop.getBody());
      Value c = columnLoop.getInductionVar();
      auto fromX = [&](Value row) {
        return [this, row](int64_t i, Value k) -> SmallVector<Value> {
          Value r = arith::AddIOp::create(b, tileLoop.row0, row);
          if (i)
            r = arith::AddIOp::create(b, r, index(i * kAmxTile));
          return {tileLoop.batchIndex, r, k};
        };
      };
      auto rowLoop =
          scf::ForOp::create(b, index(0), whole32, index(2 * kAmxTile));
      {
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPointToStart(rowLoop.getBody());
        Value r = rowLoop.getInductionVar();
        block(xBuffer, fromX(r), 2, r, c);
      }
      auto ifHalf = scf::IfOp::create(b, hasHalf, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard halfGuard(b);
        b.setInsertionPointToStart(ifHalf.thenBlock());
        block(xBuffer, fromX(whole32), 1, whole32, c);
      }
      auto ifRest = scf::IfOp::create(b, hasRest, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard restGuard(b);
        b.setInsertionPointToStart(ifRest.thenBlock());
        auto fromPadded = [this](int64_t, Value k) -> SmallVector<Value> {
          return {index(0), k};
        };
        block(padded, fromPadded, 1, whole16, c);
      }
    }

    // The tile [rows, tileColumns] of the result.
    SmallVector<OpFoldResult> offsets, sizes;
    tileLoop.getResultSlice(b, p.heads, tileColumns, offsets, sizes);
    SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
    auto tensorType =
        RankedTensorType::get({rowTile, tileColumns}, b.getF32Type());
    Value result = bufferization::ToTensorOp::create(
        b, tensorType, scratch, /*restrict=*/true, /*writable=*/true);
    auto tileType = RankedTensorType::get({ShapedType::kDynamic, tileColumns},
                                          b.getF32Type());
    Value tile = tensor::ExtractSliceOp::create(
        b, tileType, result,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{rows, b.getIndexAttr(tileColumns)},
        SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
    b.setInsertionPointToEnd(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, tile, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    return forall.getResult(0);
  }

private:
  using ARows = std::function<SmallVector<Value>(int64_t, Value)>;

  /// The rows [whole16, rows) of the tile's x (fewer than 16) copied, when
  /// `hasRest`, into a zeroed [16, K] scratch, whose tiles AMX then loads
  /// whole: a tile load past the rows of x would read beyond its buffer.
  Value copyRestRows(Value rows, Value whole16, Value hasRest) {
    Value padded = memref::AllocaOp::create(
        b, MemRefType::get({kAmxTile, 2 * pairs}, b.getBF16Type()),
        b.getI64IntegerAttr(kAmxScratchAlignment));
    {
      auto ifRest = scf::IfOp::create(b, hasRest, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard restGuard(b);
      b.setInsertionPointToStart(ifRest.thenBlock());
      Value zero = arith::ConstantOp::create(b, b.getZeroAttr(b.getBF16Type()));
      linalg::FillOp::create(b, ValueRange{zero}, ValueRange{padded});
      Value restRows = arith::SubIOp::create(b, rows, whole16);
      Value from = memref::SubViewOp::create(
          b, xBuffer,
          SmallVector<OpFoldResult>{
              tileLoop.batchIndex,
              arith::AddIOp::create(b, tileLoop.row0, whole16).getResult(),
              b.getIndexAttr(0)},
          SmallVector<OpFoldResult>{b.getIndexAttr(1), restRows,
                                    b.getIndexAttr(2 * pairs)},
          SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
      Value fromRows = memref::CollapseShapeOp::create(
          b, from, SmallVector<ReassociationIndices>{{0, 1}, {2}});
      Value to = memref::SubViewOp::create(
          b, padded,
          SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
          SmallVector<OpFoldResult>{restRows, b.getIndexAttr(2 * pairs)},
          SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
      memref::CopyOp::create(b, fromRows, to);
    }
    return padded;
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, value);
  }

  /// Indices of the packed weight at pair `kk` and tile column `c + 16j`.
  SmallVector<Value> weightIndices(Value kk, Value c, int64_t j) {
    Value col = arith::AddIOp::create(b, tileLoop.column0, c);
    if (j)
      col = arith::AddIOp::create(b, col, index(j * kAmxTile));
    if (p.heads)
      return {kk, tileLoop.head, col};
    return {kk, col};
  }

  /// One block: `aTiles` x 16 rows (A tile i's indices at k from `aRows`)
  /// by bTiles x 16 columns from tile column `c`, summed over all of K,
  /// stored at scratch row `scratchRow`.
  void block(Value a, const ARows &aRows, int64_t aTiles, Value scratchRow,
             Value c) {
    auto scratchIndices = [&](int64_t i, int64_t j) -> SmallVector<Value> {
      Value r = scratchRow;
      if (i)
        r = arith::AddIOp::create(b, r, index(i * kAmxTile));
      Value col = c;
      if (j)
        col = arith::AddIOp::create(b, c, index(j * kAmxTile));
      return {r, col};
    };
    // The accumulators' first values.
    SmallVector<Value> acc;
    for (int64_t i = 0; i < aTiles; ++i)
      for (int64_t j = 0; j < bTiles; ++j) {
        if (p.bias) {
          SmallVector<Value> indices = weightIndices(index(0), c, j);
          indices.erase(indices.begin());
          acc.push_back(amx::TileLoadOp::create(b, accType, biasBuffer, indices,
                                                index(0)));
        } else if (fillRow) {
          acc.push_back(amx::TileLoadOp::create(
              b, accType, fillRow, ValueRange{index(0)}, index(0)));
        } else {
          acc.push_back(amx::TileZeroOp::create(b, accType));
        }
      }
    auto store = [&](ArrayRef<Value> values) {
      for (int64_t i = 0; i < aTiles; ++i)
        for (int64_t j = 0; j < bTiles; ++j)
          amx::TileStoreOp::create(b, scratch, scratchIndices(i, j),
                                   values[i * bTiles + j]);
    };
    auto load = [&]() {
      SmallVector<Value> values;
      for (int64_t i = 0; i < aTiles; ++i)
        for (int64_t j = 0; j < bTiles; ++j)
          values.push_back(amx::TileLoadOp::create(b, accType, scratch,
                                                   scratchIndices(i, j)));
      return values;
    };

    // The first chunk from the initial values, then whole chunks in a
    // loop, then what is left (whole steps and the tail) from the scratch.
    int64_t first = std::min(kChunk, fullSteps);
    for (int64_t s = 0; s < first; ++s)
      step(a, aRows, aTiles, index(s), c, kAmxTile, acc);
    int64_t loopChunks = (fullSteps - first) / kChunk;
    int64_t left = fullSteps - first - loopChunks * kChunk;
    if (loopChunks == 0 && left == 0) {
      if (tailPairs)
        step(a, aRows, aTiles, index(fullSteps), c, tailPairs, acc);
      store(acc);
      return;
    }
    store(acc);
    if (loopChunks > 0) {
      auto chunks = scf::ForOp::create(
          b, index(first), index(first + loopChunks * kChunk), index(kChunk));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(chunks.getBody());
      SmallVector<Value> values = load();
      for (int64_t s = 0; s < kChunk; ++s) {
        Value stepIndex = chunks.getInductionVar();
        if (s)
          stepIndex = arith::AddIOp::create(b, stepIndex, index(s));
        step(a, aRows, aTiles, stepIndex, c, kAmxTile, values);
      }
      store(values);
    }
    if (left > 0 || tailPairs) {
      SmallVector<Value> values = load();
      int64_t from = first + loopChunks * kChunk;
      for (int64_t s = 0; s < left; ++s)
        step(a, aRows, aTiles, index(from + s), c, kAmxTile, values);
      if (tailPairs)
        step(a, aRows, aTiles, index(fullSteps), c, tailPairs, values);
      store(values);
    }
  }

  /// One step of 2·`stepPairs` k from k = 32·`stepIndex`: the A tiles, the
  /// B tiles, and aTiles x bTiles TDPBF16PS into `acc`.
  void step(Value a, const ARows &aRows, int64_t aTiles, Value stepIndex,
            Value c, int64_t stepPairs, SmallVectorImpl<Value> &acc) {
    auto aType = amx::TileType::get({kAmxTile, 2 * stepPairs}, b.getBF16Type());
    auto bType = amx::TileType::get({stepPairs, 2 * kAmxTile}, b.getBF16Type());
    Value k = arith::MulIOp::create(b, stepIndex, index(kAmxStep));
    Value kk = arith::MulIOp::create(b, stepIndex, index(kAmxStep / 2));
    SmallVector<Value> aValues, bValues;
    for (int64_t i = 0; i < aTiles; ++i)
      aValues.push_back(amx::TileLoadOp::create(b, aType, a, aRows(i, k)));
    for (int64_t j = 0; j < bTiles; ++j) {
      if (p.panels) {
        // Panel (column / 16), rows kk.. of 64 bytes: 1 KiB in one piece.
        Value col = arith::AddIOp::create(b, tileLoop.column, c);
        if (j)
          col = arith::AddIOp::create(b, col, index(j * kAmxTile));
        Value panel = arith::DivUIOp::create(b, col, index(kAmxTile));
        bValues.push_back(amx::TileLoadOp::create(
            b, bType, packedBuffer, ValueRange{panel, kk, index(0)}));
        continue;
      }
      // Rows of the packed weight are `columns` f32 (pairs) apart, also
      // where it is [K/2, H, d].
      bValues.push_back(amx::TileLoadOp::create(
          b, bType, packedBuffer, weightIndices(kk, c, j), index(columns)));
    }
    for (int64_t i = 0; i < aTiles; ++i)
      for (int64_t j = 0; j < bTiles; ++j)
        acc[i * bTiles + j] = amx::TileMulFOp::create(
            b, accType, aValues[i], bValues[j], acc[i * bTiles + j]);
  }

  ImplicitLocOpBuilder &b;
  BF16Projection p;
  int64_t rowTile, kChunk;
  int64_t pairs, headColumns, columns, tileColumns, bTiles;
  int64_t fullSteps, tailPairs;
  amx::TileType accType;
  Value xBuffer, packedBuffer, biasBuffer;
  /// The tile loop (set by build()): its values are those of one tile, as
  /// are the scratch buffers.
  BF16TileLoop tileLoop;
  Value scratch, fillRow;
};

struct MhaBF16AmxPass : mha::impl::MhaBF16AmxBase<MhaBF16AmxPass> {
  using MhaBF16AmxBase::MhaBF16AmxBase;

  void runOnOperation() override {
    // A function whose recorded bf16 path is another is not this pass's.
    std::optional<BF16Path> path = getRecordedBF16Path(getOperation());
    if (path && *path != BF16Path::Amx)
      return;
    // Each size: the option where set, else the record (mha-strategy).
    if (!hasBF16Projections(getOperation()))
      return;
    auto pick = [&](int64_t option, llvm::StringRef name,
                    int64_t (*recorded)(CodegenSizesAttr)) {
      return getOptionOrRecorded(getOperation(), "mha-bf16-amx", option, name,
                                 recorded);
    };
    FailureOr<int64_t> rowTiles =
        pick(this->rowTile, "row-tile", [](CodegenSizesAttr sizes) -> int64_t {
          return sizes.getAmxRows();
        });
    FailureOr<int64_t> kChunks =
        pick(this->kChunk, "k-chunk", [](CodegenSizesAttr sizes) -> int64_t {
          return sizes.getAmxKChunk();
        });
    FailureOr<int64_t> l1 =
        pick(this->l1Bytes, "l1-bytes", [](CodegenSizesAttr sizes) -> int64_t {
          return sizes.getL1Bytes();
        });
    if (failed(rowTiles) || failed(kChunks) || failed(l1))
      return signalPassFailure();
    int64_t rowTile = *rowTiles, kChunk = *kChunks, l1Bytes = *l1;
    if (rowTile < kAmxTile || rowTile % kAmxTile != 0 || colTile < 1 ||
        kChunk < 1) {
      getOperation().emitError()
          << "mha-bf16-amx expects a row-tile that is a multiple of 16, "
             "col-tile >= 1 and k-chunk >= 1, got row-tile="
          << rowTile << " col-tile=" << int64_t(colTile)
          << " k-chunk=" << kChunk;
      return signalPassFailure();
    }
    // The columns recorded; the rows stay whole 16s (amx_rows).
    int64_t colTile =
        getBF16Tiles(getOperation(), rowTile, this->colTile).second;
    replaceBF16Projections(getOperation(), [&](ImplicitLocOpBuilder &b,
                                               BF16Projection &projection) {
      return AmxKernelBuilder(b, projection, rowTile, colTile, kChunk, l1Bytes)
          .build();
    });
  }
};
} // namespace
