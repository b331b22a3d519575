//===- RegisterBlockTiling.h - Tiling to register blocks --------*- C++ -*-===//
//
// mha-vectorize tiles each op to its register blocks (RegisterBlockSizes.h)
// with scf::tileUsingSCF, the reduction loops innermost, and peels the last
// iteration off a loop whose step may not divide its extent, so that every
// block but the last has static sizes. The initial value that a
// contraction alone starts from (a fill, a bias broadcast) is fused into
// its blocks, and a contraction whose row count the block does not divide
// is first split into parts of whole blocks and a rest.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_REGISTERBLOCKTILING_H
#define MHA_COMPILER_CODEGEN_REGISTERBLOCKTILING_H

#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::mha {

/// Marks the register blocks of one op while its loops are tiled and peeled.
constexpr StringLiteral kRegisterBlockAttr =
    MhaDialect::RegisterBlockAttrHelper::getNameStr();

/// Marks an initial value that a contraction's accumulators start from
/// (getFusableInit), and the tiles it is fused into the register blocks as
/// (tileToRegisterBlocks), until each is vectorized.
constexpr StringLiteral kBlockInitAttr =
    MhaDialect::BlockInitAttrHelper::getNameStr();

/// Whether `op` computes each element of its result on its own, from no
/// more than broadcast inputs: a fill, or a broadcast (of a bias) as a
/// generic, which mha-tile-projections makes of the projections'.
bool isElementwiseInit(linalg::LinalgOp op);

/// The initial value that `op`'s accumulators start from, when `op` alone
/// reads it: attention's zeroed block of scores, a projection's bias.
/// Fused into the register blocks, it becomes a register block of zeros or
/// of the bias, instead of a pass that writes the whole buffer and blocks
/// that load it back.
linalg::LinalgOp getFusableInit(linalg::LinalgOp op);

/// Tiles `op` to its register blocks with the reduction loops innermost, and
/// peels the last iteration off every loop whose step may not divide its
/// extent, so that all but the last block of a loop have static sizes.
/// Returns the blocks: `op` itself when it is one block already. An
/// initial value that `op` alone starts from (getFusableInit) is tiled with
/// the blocks, in their parallel loops and before their reduction loops;
/// its tiles, to be vectorized with the blocks, go to `fusedInits`.
FailureOr<SmallVector<linalg::LinalgOp>>
tileToRegisterBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
                     ArrayRef<int64_t> sizes,
                     SmallVector<linalg::LinalgOp> &fusedInits);

/// The row loop of a contraction whose row count is `?`, when it is not
/// one block (a decode step's tiles of one token per sequence, or the last
/// partial tile of a prefill), or static but not a multiple of `rows`:
/// whole blocks of `rows` rows and the rest, peeled off. `cleanup` (the
/// canonicalization patterns) makes the whole blocks' slices static; the
/// rest keeps `?` rows, fewer than `rows`, or has its static size.
/// Returns the parts, or failure when `op` was not split (it is then
/// untouched). Each output element keeps its summation order.
FailureOr<SmallVector<linalg::LinalgOp>>
splitRows(RewriterBase &rewriter, linalg::LinalgOp op, unsigned row,
          int64_t rows, const FrozenRewritePatternSet &cleanup);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_REGISTERBLOCKTILING_H
