//===- AmxTile.h - The AMX tile geometry that the bf16 kernels share ------===//
//
// The sizes of AMX-BF16's tiles, as `mha-bf16-amx` (projections) and
// `mha-amx-split` (attention's products) use them: 16 rows, and 64 bytes a
// row, that is 16 f32 columns of an accumulator or B tile, or 32 bf16
// values of the reduction in an A tile.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_AMXTILE_H
#define MHA_COMPILER_CODEGEN_AMXTILE_H

#include <cstdint>

namespace mlir::mha {

/// Rows of a tile, and f32 columns of an accumulator or B tile.
constexpr int64_t kAmxTile = 16;
/// Reduction (bf16 values) per full A tile: 64 bytes.
constexpr int64_t kAmxStep = 32;
/// Alignment of the stack scratch that tiles are stored to and loaded from:
/// a tile row is 64 bytes, one cache line where the scratch starts on one
/// (and its rows are multiples of 64 bytes apart); a stack slot's default
/// alignment, 16, splits every row over two lines.
constexpr int64_t kAmxScratchAlignment = 64;

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_AMXTILE_H
