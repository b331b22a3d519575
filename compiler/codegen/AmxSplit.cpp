//===- AmxSplit.cpp - Attention's products on AMX tiles -------------------===//
//
// The products of a key block in a bf16 layer, S = Q · Kᵀ and acc += P · V,
// marked `mha.amx_split` by the online softmax (OnlineAttentionBlock.cpp)
// where mha-tile-attention packed the keys and values (SdpaTiling::pack), on
// AMX: TDPBF16PS takes bf16 operands, and Q, K, V (the projections'
// results) and P are f32, so each is split in hi + lo bf16 parts and
//
//   C += hi(A)·hi(B) + lo(A)·hi(B) + hi(A)·lo(B)
//
// (lo·lo is below f32's rounding of the sum): three TDPBF16PS per 32 of
// the reduction, each 16 x 16 x 32 products.
//
// - B (Kᵀ [dk, BK] or V [BK, dv]) is AMX's B layout already: row 2i holds
//   the pairs (hi(X[2i][n]), hi(X[2i+1][n])) as one f32 each, row 2i + 1
//   the pairs of their lo parts, so a B tile is 16 of its even (or odd)
//   rows by 16 columns, read with twice the view's row stride.
// - A (Q [tq, dk] or P [tq, BK]) is split into a stack scratch [M, 2·K]
//   bf16 (hi, then lo, per row) by a generic that writes both halves, tiled
//   into rows by scf::tileUsingSCF and each row vectorized by
//   linalg::vectorize: the pass runs after mha-vectorize, and a scalar loop
//   per element would cost as much as the tiles. Q is split once per query
//   tile, before the key loops, where nothing inside them writes the buffer
//   it views; P once per block.
// - The product's generic is tiled by scf::tileUsingSCF into blocks of 16
//   rows by 32 columns (16 where the columns are an odd number of 16), and
//   each block becomes its AMX tiles: 2 accumulators, A's hi and lo tiles
//   and one B tile at a time (buildTiles says why). The reduction is
//   unrolled (K/32 steps, a last one of 16): no tile crosses an `scf.for`
//   (LLVM 22's cf-to-llvm has no type conversion for `!amx.tile` block
//   arguments, BF16Amx.cpp). C starts at zero where its init is a fill of
//   zero marked `mha.amx_split` (the scores; the fill goes), else at C (the
//   accumulator).
//
// Why on buffers, after bufferization: the results are written in place
// into the scores scratch and the accumulator, which the softmax reads;
// on tensors (as BF16Amx.cpp works) each block would need a copy. A
// generic whose shapes are not static whole tiles is left as it is, for
// convert-linalg-to-loops (scalar, but the same sum); SdpaTiling::canPack
// keeps mha-tile-attention from making one.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/codegen/AmxTile.h"
#include "compiler/utils/BF16Parts.h"
#include "dialects/MhaDialect.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAAMXSPLIT
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// The parts of a `mha.amx_split` generic: A [M, K] f32, B [K, N] in pairs
/// of rows and C [M, N] f32, the views that the generic reads as pairs.
struct SplitDot {
  linalg::GenericOp op;
  Value a, b, c;
  int64_t m, k, n;
  /// C's init where it is a fill of zero marked `mha.amx_split` (the
  /// scores): the tiles start at zero instead, and the fill goes.
  linalg::FillOp zeroFill;
  /// A's bf16 parts where they are made for this product alone (A is
  /// written inside its loops: P).
  Value parts;
};

/// What `value`, an expanded view, expands.
Value getExpanded(Value value) {
  auto expand = value.getDefiningOp<memref::ExpandShapeOp>();
  return expand ? expand.getSrc() : Value();
}

/// Whether the innermost stride of `type` is 1, which tile loads and
/// stores need.
bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

std::optional<SplitDot> matchSplitDot(linalg::GenericOp op) {
  if (!MhaDialect::AmxSplitAttrHelper(op.getContext()).isAttrPresent(op) ||
      !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 3 ||
      op.getNumDpsInits() != 1 || op.getDpsInputs()[1] != op.getDpsInputs()[2])
    return std::nullopt;
  SplitDot match;
  match.op = op;
  match.a = getExpanded(op.getDpsInputs()[0]);
  match.b = getExpanded(op.getDpsInputs()[1]);
  match.c = op.getDpsInits()[0];
  if (!match.a || !match.b)
    return std::nullopt;
  auto aType = cast<MemRefType>(match.a.getType());
  auto bType = cast<MemRefType>(match.b.getType());
  auto cType = cast<MemRefType>(match.c.getType());
  if (!aType.hasStaticShape() || !bType.hasStaticShape() ||
      !cType.hasStaticShape() || aType.getRank() != 2 || bType.getRank() != 2 ||
      cType.getRank() != 2 || !hasUnitInnerStride(aType) ||
      !hasUnitInnerStride(bType) || !hasUnitInnerStride(cType))
    return std::nullopt;
  match.m = aType.getDimSize(0);
  match.k = aType.getDimSize(1);
  match.n = bType.getDimSize(1);
  if (match.m % kAmxTile != 0 || match.k % kAmxTile != 0 ||
      match.n % kAmxTile != 0 || bType.getDimSize(0) != match.k ||
      cType.getDimSize(0) != match.m || cType.getDimSize(1) != match.n)
    return std::nullopt;
  for (Operation *user : match.c.getUsers())
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill &&
        MhaDialect::AmxSplitAttrHelper(op.getContext()).isAttrPresent(fill) &&
        fill->getBlock() == op->getBlock() && fill->isBeforeInBlock(op) &&
        matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      match.zeroFill = fill;
  return match;
}

Value index(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

/// `op` tiled with `tileSizes` into `scf.for` loops (scf::tileUsingSCF, on
/// buffers: the loops carry nothing) and erased; the tile, whose operands
/// are views of `op`'s, and the loops.
FailureOr<scf::SCFTilingResult> tileLoops(RewriterBase &rewriter,
                                          linalg::GenericOp op,
                                          ArrayRef<int64_t> tileSizes) {
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), tileSizes));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.eraseOp(op);
  return tiled;
}

/// The f32 rows of `a` ([m, k]) split into `parts` ([m, 2·k] bf16, hi then
/// lo), at the builder's insertion point: a generic that writes both halves
/// of `parts`, tiled into one row per iteration and each row vectorized
/// (linalg::vectorize: one vector of k per part), as the rest of the code
/// was by mha-vectorize before this pass.
LogicalResult buildParts(RewriterBase &rewriter, Location loc, Value a,
                         Value parts, int64_t m, int64_t k, bool hiOnly) {
  auto half = [&](int64_t column) -> Value {
    return memref::SubViewOp::create(
        rewriter, loc, parts,
        getAsIndexOpFoldResult(rewriter.getContext(), {0, column}),
        getAsIndexOpFoldResult(rewriter.getContext(), {m, k}),
        getAsIndexOpFoldResult(rewriter.getContext(), {1, 1}));
  };
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  SmallVector<Value> halves = {half(0)};
  if (!hiOnly)
    halves.push_back(half(k));
  auto split = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ValueRange{a}, halves,
      SmallVector<AffineMap>(1 + halves.size(), identity),
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // Alone, the hi part need not match a lo part: one conversion
        // (to nearest even, as PyTorch rounds) instead of the integer
        // rounding that keeps `x - hi` exact.
        if (hiOnly) {
          linalg::YieldOp::create(nb, nloc,
                                  ValueRange{arith::TruncFOp::create(
                                      nb, nloc, nb.getBF16Type(), args[0])});
          return;
        }
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{buildBF16Part(nb, nloc, args[0], /*lo=*/false),
                       buildBF16Part(nb, nloc, args[0], /*lo=*/true)});
      });
  FailureOr<scf::SCFTilingResult> rows = tileLoops(rewriter, split, {1, 0});
  if (failed(rows))
    return failure();
  Operation *row = rows->tiledOps.front();
  rewriter.setInsertionPoint(row);
  if (failed(linalg::vectorize(rewriter, row)))
    return failure();
  rewriter.eraseOp(row);
  return success();
}

/// C += A · B of `dot`: its generic tiled into blocks of 16 rows by 32
/// columns (16 where the columns are an odd number of 16) by
/// scf::tileUsingSCF, each block the AMX tiles below, from the parts of A
/// in `parts`.
LogicalResult buildTiles(RewriterBase &rewriter, const SplitDot &dot,
                         Value parts, bool hiOnly) {
  int64_t bTiles = dot.n % (2 * kAmxTile) == 0 ? 2 : 1;
  // Iterations (m, pair, n, element): blocks of m and n, every pair.
  FailureOr<scf::SCFTilingResult> blocks =
      tileLoops(rewriter, dot.op, {kAmxTile, 0, bTiles * kAmxTile, 0});
  if (failed(blocks))
    return failure();
  Operation *block = blocks->tiledOps.front();
  ImplicitLocOpBuilder b(block->getLoc(), block);
  Value row = cast<scf::ForOp>(blocks->loops[0]).getInductionVar();
  Value column = cast<scf::ForOp>(blocks->loops[1]).getInductionVar();
  // B's rows 2i (hi) and 2i + 1 (lo) are two rows of B apart.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, dot.b);
  Value pairStride =
      arith::MulIOp::create(b, metadata.getStrides()[0], index(b, 2));
  auto accType = amx::TileType::get({kAmxTile, kAmxTile}, b.getF32Type());
  SmallVector<Value> columns, acc;
  for (int64_t j = 0; j < bTiles; ++j) {
    columns.push_back(
        j ? arith::AddIOp::create(b, column, index(b, j * kAmxTile)).getResult()
          : column);
    acc.push_back(dot.zeroFill
                      ? amx::TileZeroOp::create(b, accType).getResult()
                      : amx::TileLoadOp::create(b, accType, dot.c,
                                                ValueRange{row, columns.back()})
                            .getResult());
  }
  for (int64_t from = 0; from < dot.k; from += kAmxStep) {
    int64_t width = std::min(kAmxStep, dot.k - from);
    auto aType = amx::TileType::get({kAmxTile, width}, b.getBF16Type());
    auto bType = amx::TileType::get({width / 2, 2 * kAmxTile}, b.getBF16Type());
    Value aHi = amx::TileLoadOp::create(b, aType, parts,
                                        ValueRange{row, index(b, from)});
    Value aLo =
        hiOnly ? Value()
               : amx::TileLoadOp::create(
                     b, aType, parts, ValueRange{row, index(b, dot.k + from)});
    // One B tile at a time, hi then lo: 5 tiles live (2 accumulators, the
    // A parts, one B part). A tile register has one shape per function
    // (the X86 back end's single tile configuration), so the 16-wide last
    // step's A and B tiles take registers of their own: 5 + 2 + 1 of the
    // 8, where loading a whole B column first would run out.
    for (int64_t j = 0; j < bTiles; ++j) {
      Value bHi = amx::TileLoadOp::create(
          b, bType, dot.b, ValueRange{index(b, from), columns[j]}, pairStride);
      acc[j] = amx::TileMulFOp::create(b, accType, aHi, bHi, acc[j]);
      if (hiOnly)
        continue;
      acc[j] = amx::TileMulFOp::create(b, accType, aLo, bHi, acc[j]);
      Value bLo = amx::TileLoadOp::create(
          b, bType, dot.b, ValueRange{index(b, from + 1), columns[j]},
          pairStride);
      acc[j] = amx::TileMulFOp::create(b, accType, aHi, bLo, acc[j]);
    }
  }
  for (int64_t j = 0; j < bTiles; ++j)
    amx::TileStoreOp::create(b, dot.c, ValueRange{row, columns[j]}, acc[j]);
  // The block's views of A, B and C are left to the canonicalizer.
  rewriter.eraseOp(block);
  return success();
}

/// The buffer that `view` is a view of (through view-like ops).
Value getRoot(Value view) {
  while (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
    view = viewLike.getViewSource();
  return view;
}

/// Whether an op under `loop` may write the buffer `root` (or a buffer that
/// may alias it: an unknown effect, or a write to a view of something that
/// is not an allocation).
bool mayWrite(scf::ForOp loop, Value root) {
  bool rootIsAllocation =
      isa_and_present<memref::AllocOp, memref::AllocaOp>(root.getDefiningOp());
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      if (!written)
        return WalkResult::interrupt();
      Value writtenRoot = getRoot(written);
      bool writtenIsAllocation =
          isa_and_present<memref::AllocOp, memref::AllocaOp>(
              writtenRoot.getDefiningOp());
      if (writtenRoot == root || !rootIsAllocation || !writtenIsAllocation)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The outermost `scf.for` around `op`, inside its parallel loop, before
/// which A's parts can be made once: A's view is defined outside it and
/// nothing under it writes A's buffer (Q in the key loops); null where
/// there is none (P, written per block).
scf::ForOp getHoistingLoop(Operation *op, Value a) {
  scf::ForOp hoisted;
  Value root = getRoot(a);
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    if (loop->isAncestor(a.getParentRegion()->getParentOp()) ||
        mayWrite(loop, root))
      break;
    hoisted = loop;
  }
  return hoisted;
}

/// Where a scratch of `op`'s tile goes: at the start of its parallel
/// loop's body, whose iterations each need their own (allocated once per
/// iteration, not per key block); the function's entry without one.
void setScratchInsertionPoint(OpBuilder &b, Operation *op) {
  Operation *parallel = op->getParentOfType<scf::ForallOp>();
  if (!parallel)
    parallel = op->getParentOfType<scf::ParallelOp>();
  if (!parallel)
    parallel = op->getParentOfType<FunctionOpInterface>();
  b.setInsertionPointToStart(&parallel->getRegion(0).front());
}

struct MhaAmxSplitPass : mha::impl::MhaAmxSplitBase<MhaAmxSplitPass> {
  using MhaAmxSplitBase::MhaAmxSplitBase;

  void runOnOperation() override {
    SmallVector<SplitDot> dots;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<SplitDot> match = matchSplitDot(op))
        dots.push_back(*match);
    });
    IRRewriter rewriter(&getContext());
    // The parts of a loop-invariant A, made once before its loops.
    llvm::DenseMap<std::pair<Value, Operation *>, Value> hoistedParts;
    for (SplitDot &dot : dots) {
      Location loc = dot.op.getLoc();
      auto partsType =
          MemRefType::get({dot.m, 2 * dot.k}, rewriter.getBF16Type());
      scf::ForOp loop = getHoistingLoop(dot.op, dot.a);
      Value &parts = loop ? hoistedParts[{dot.a, loop}] : dot.parts;
      if (!parts) {
        setScratchInsertionPoint(rewriter, dot.op);
        parts = memref::AllocaOp::create(
            rewriter, loc, partsType,
            rewriter.getI64IntegerAttr(kAmxScratchAlignment));
        if (loop)
          rewriter.setInsertionPoint(loop);
        else
          rewriter.setInsertionPoint(dot.op);
        if (failed(
                buildParts(rewriter, loc, dot.a, parts, dot.m, dot.k, fast))) {
          dot.op.emitOpError("could not split A into bf16 parts");
          return signalPassFailure();
        }
      }
      rewriter.setInsertionPoint(dot.op);
      linalg::FillOp zeroFill = dot.zeroFill;
      if (failed(buildTiles(rewriter, dot, parts, fast))) {
        dot.op.emitOpError("could not tile into AMX blocks");
        return signalPassFailure();
      }
      if (zeroFill)
        rewriter.eraseOp(zeroFill);
    }
  }
};
} // namespace
