//===- MhaDialect.h - The mha dialect ---------------------------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHADIALECT_H
#define MHA_DIALECTS_MHADIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir {
namespace mha {
/// The largest query or key tile of an `#mha.attention_tiles` (and of the
/// options that choose them, compiler/OptionRanges.h): each thread of the
/// fused path holds a [query tile, key tile] f32 block of scores, 64 MiB at
/// 4096 x 4096, and the bound keeps every size computed from the tiles
/// (tile x tile x splits) far from int64 overflow.
constexpr int64_t kMaxAttentionTile = 4096;
/// The most key ranges of an `#mha.attention_tiles`: each has its own
/// [B, H, T, dv] partial output, and the ranges exist to keep the threads
/// busy (`mha-run --threads` allows 1024).
constexpr int64_t kMaxAttentionKeySplits = 1024;
/// The largest register block (rows or columns) and the most reduction
/// steps per iteration of an `#mha.codegen_sizes` (and of the options that
/// set them): far more than any CPU's registers hold, and small enough that
/// an unrolled block stays a reasonable amount of code.
constexpr int64_t kMaxRegisterBlock = 64;
constexpr int64_t kMaxRegisterUnroll = 16;
} // namespace mha
} // namespace mlir

// The attributes first: the dialect's helper for `mha.tiles` returns one.
#define GET_ATTRDEF_CLASSES
#include "dialects/MhaAttributes.h.inc"

#include "dialects/MhaOpsDialect.h.inc"

#endif // MHA_DIALECTS_MHADIALECT_H
