//===- RegisterBlockSizes.h - Register block sizes --------------*- C++ -*-===//
//
// mha-vectorize cuts each linalg op into register blocks: a contraction
// into `rows x cols` outputs and reduction steps of 1, whose accumulators
// stay in registers; every other op into one vector along its last loop.
// This file chooses those sizes (the block and the vector along each loop)
// from the op's extents, static or bounded, and the pass's options.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_REGISTERBLOCKSIZES_H
#define MHA_COMPILER_CODEGEN_REGISTERBLOCKSIZES_H

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::mha {

/// The register blocks of one op: the tile size along each loop (the whole
/// extent where it is not tiled) and the vector shape of a block, which may
/// be larger: its extra lanes are masked.
struct RegisterBlocks {
  /// The tile size along each loop of the op.
  SmallVector<int64_t> sizes;
  /// The vector size of a block along each loop of the op.
  SmallVector<int64_t> vectorSizes;
};

/// The width of a masked vector for `extent` elements along lanes: a power
/// of two of registers (100 of 128 lanes, not of 112). LLVM has no legal
/// mask type of 3 or 7 registers, and assembles such masked operations lane
/// by lane, through the stack.
int64_t maskedWidth(int64_t extent, int64_t lanes);

/// A constant bound on the extent of `op`'s loop `dim`, from any operand
/// that it indexes.
std::optional<int64_t> loopBound(linalg::LinalgOp op, unsigned dim);

/// The register blocks that cut `op` into what is vectorized, or nothing
/// when `op` is not vectorized.
std::optional<RegisterBlocks>
getRegisterBlocks(linalg::LinalgOp op, const MhaVectorizeOptions &options);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_REGISTERBLOCKSIZES_H
