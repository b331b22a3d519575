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

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir {
namespace mha {

/// The largest tile any option accepts: queries per tile, keys per block,
/// rows or columns per projection tile. Each thread of the fused path holds
/// a [query-tile, key-tile] f32 block of scores, 64 MiB at 4096 x 4096, and
/// a tile larger than its dimension is the whole dimension anyway (0 says
/// that for the projections). The bound also keeps every size the passes
/// compute from the options (tile x tile x splits) far from int64 overflow.
constexpr int64_t kMaxTileSize = 4096;

/// The most key ranges `key-splits` accepts. The ranges exist to keep the
/// threads busy, so more ranges than `mha-run --threads` allows (1024) only
/// add partial states to merge; the pass also never makes more ranges than
/// there are key blocks. Each range has its own [B, H, T, dv] partial
/// output, so an unbounded count was an unbounded allocation.
constexpr int64_t kMaxKeySplits = 1024;

/// Fails with `<name> must be between <min> and <max>, got <value>` when
/// `value` is outside [min, max].
llvm::Error checkOptionRange(llvm::StringRef name, int64_t value, int64_t min,
                             int64_t max);

/// Checks the options of `mha-tile-attention`: query-tile and key-tile in
/// [1, kMaxTileSize], key-splits in [1, kMaxKeySplits]. Each message names
/// the option as `<prefix><name>`, e.g. `--key-splits` with prefix "--".
llvm::Error checkTileAttentionOptions(const MhaTileAttentionOptions &options,
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
