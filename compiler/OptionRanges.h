//===- OptionRanges.h - Ranges of the numeric options -----------*- C++ -*-===//
//
// One place for the bounds of the tile sizes and the key splits, so that the
// tools (mha-run, mha-compile), the named pipelines (mha-opt --mha-to-llvm)
// and the passes themselves refuse the same values with the same message.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_OPTIONRANGES_H
#define MHA_COMPILER_OPTIONRANGES_H

#include "compiler/Passes.h"
#include "compiler/strategy/AttentionStrategy.h"
#include "dialects/MhaDialect.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir {
namespace mha {

/// The largest tile any option accepts: queries per tile, keys per block
/// (the bound of `#mha.attention_tiles`, MhaDialect.h), rows or columns per
/// projection tile (a tile larger than its dimension is the whole dimension
/// anyway; 0 says that for the projections).
constexpr int64_t kMaxTileSize = kMaxAttentionTile;

/// The most key ranges `key-splits` accepts (MhaDialect.h says why); the
/// pass also never makes more ranges than there are key blocks.
constexpr int64_t kMaxKeySplits = kMaxAttentionKeySplits;

/// Fails with `<name> must be between <min> and <max>, got <value>` when
/// `value` is outside [min, max].
llvm::Error checkOptionRange(llvm::StringRef name, int64_t value, int64_t min,
                             int64_t max);

/// Checks what the options ask of `mha-strategy`: query-tile and
/// key-tile in [0, kMaxTileSize] (0: from the target), key-splits in
/// [1, kMaxKeySplits]. Each message names the option as `<prefix><name>`,
/// e.g. `--key-splits` with prefix "--".
llvm::Error checkAttentionTileRequest(const AttentionTileRequest &request,
                                      llvm::StringRef prefix = "");

/// Checks the register block's options: `<prefix>register-rows` and
/// `<prefix>register-cols` in [0, kMaxRegisterBlock], `<prefix>register-
/// unroll` in [0, kMaxRegisterUnroll] (0: the target's).
llvm::Error checkRegisterBlockOptions(int64_t rows, int64_t cols,
                                      int64_t unroll,
                                      llvm::StringRef prefix = "");

/// Checks the options of `mha-tile-projections`: row-tile and col-tile in
/// [0, kMaxTileSize] (0: the whole dimension). Named `<prefix>row-tile` and
/// `<prefix>col-tile`.
llvm::Error
checkTileProjectionsOptions(const MhaTileProjectionsOptions &options,
                            llvm::StringRef prefix = "");

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_OPTIONRANGES_H
