//===- BF16Projection.h - The mha.bf16_dot generics' parts -----*- C++ -*-===//
//
// mha-bf16-projections writes each bf16 projection as a `linalg.generic`
// marked `mha.bf16_dot`; its two lowerings (mha-bf16-dot: vdpbf16ps
// register blocks, mha-bf16-amx: AMX tiles) read the same parts of it, so
// they match it here, once.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_BF16PROJECTION_H
#define MHA_COMPILER_CODEGEN_BF16PROJECTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::mha {

/// The parts of a `mha.bf16_dot` generic that the kernels read.
struct BF16Projection {
  linalg::GenericOp op;
  /// The bf16 input [B, T, K].
  Value x;
  /// The packed weight, [K/2, N] or [K/2, H, d] where the result is heads.
  Value packed;
  /// The bias in the weight's column layout, or null (zero or `fill`).
  Value bias;
  Value fill;
  bool heads;
  /// Where the packed weight is read back from panels of 16 columns
  /// (mha-bf16-projections' `panels`, for AMX): the panels,
  /// [N/16, K/2, 16]; else null.
  Value panels;
  /// K/2, the columns per head (N without heads) and N.
  int64_t pairs, headColumns, columns;
};

/// `op`'s parts, if it is a `mha.bf16_dot` generic on tensors whose packed
/// weight is static and whose columns (per head) are a multiple of 16.
std::optional<BF16Projection> matchBF16Projection(linalg::GenericOp op);

/// The largest multiple of `step` that divides `extent` and is at most
/// `limit` (at least `step`, which divides `extent`): the columns of a
/// parallel tile.
int64_t bf16ColumnTile(int64_t extent, int64_t limit, int64_t step);

/// The parallel loop of a bf16 projection kernel: an `scf.forall` over
/// (column tile, row tile, batch) into a new [B, T, N] (or [B, H, T, d])
/// f32 result, each output element summed by one thread in one order (so
/// results do not depend on the thread count), and the tile's coordinates.
struct BF16TileLoop {
  scf::ForallOp forall;
  /// The tile's first row, its row count (min(row-tile, T - row0)) and its
  /// batch element.
  Value row0, rows, batchIndex;
  /// The tile's first column of the whole result; with heads, its head and
  /// first column within the head (else `column0` is `column`).
  Value column, head, column0;

  /// Where the tile of `tileColumns` columns goes in the result ([B, T, N],
  /// or [B, H, T, d] with `heads`): its offsets and sizes (unit strides).
  void getResultSlice(OpBuilder &b, bool heads, int64_t tileColumns,
                      SmallVector<OpFoldResult> &offsets,
                      SmallVector<OpFoldResult> &sizes) const;
};

/// Builds the loop of `projection`'s kernel, whose tiles are `rowTile` rows
/// by `tileColumns` columns, and leaves the builder inside it, before its
/// terminator.
BF16TileLoop buildBF16TileLoop(ImplicitLocOpBuilder &b,
                               const BF16Projection &projection,
                               int64_t tileColumns, int64_t rowTile);

/// The parallel tile (rows, columns) of the bf16 projections in `function`:
/// the projections' tiles recorded on it (`mha.codegen`, those that are
/// not 0), else `rowTile` and `colTile`.
std::pair<int64_t, int64_t> getBF16Tiles(Operation *function, int64_t rowTile,
                                         int64_t colTile);

/// Whether `root` holds a `mha.bf16_dot` projection that the kernels lower:
/// only then do they need their sizes.
bool hasBF16Projections(Operation *root);

/// Replaces each `mha.bf16_dot` projection under `root` by the value that
/// `buildKernel` builds for it (before the generic), then erases the generic
/// and what it leaves unused: its init and the side-effect-free ops that
/// only computed its weight operand (e.g. the reads of AMX panels back to
/// [K/2, N]), before mha-vectorize would spend vector code on them.
void replaceBF16Projections(
    Operation *root,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, BF16Projection &)>
        buildKernel);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_BF16PROJECTION_H
