//===- TileTensors.h - Views of an attention tile's tensors -----*- C++ -*-===//
//
// The online softmax works on views of a tile's tensors: the keys, values,
// Kᵀ and mask of a range of keys or of one block, and the scratch that a
// block writes back in place. Tiling and peeling leave those views typed
// `?` where their sizes are constants; these helpers read the sizes that
// the slices know, cut views with static types where they can, and erase
// the views that nothing reads any more. Shared by the key loop
// (OnlineSoftmax.cpp), the decomposition of a block
// (OnlineAttentionBlock.cpp) and mha.online_attention's TilingInterface.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_TILETENSORS_H
#define MHA_COMPILER_ATTENTION_TILETENSORS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mha {

/// `source[offsets][sizes]` with unit strides, of the same rank.
Value slice(OpBuilder &b, Location loc, Value source,
            ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes);

/// `source` written back into `dest` at `slice`'s place: the inverse of
/// `slice`, which bufferization recognizes as in place.
Value unslice(OpBuilder &b, Location loc, Value source, Value dest,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes);

/// The sizes of `value` as far as its type or the slice that made it says
/// (without creating ops): an attribute where static, the slice's size value
/// where that made it, else null.
SmallVector<OpFoldResult> getKnownSizes(Value value);

/// `slice`, or `source` itself where that is the whole of it from 0 (the
/// whole of a block, or the keys of a range that is all of them).
Value sliceUnlessWhole(OpBuilder &b, Location loc, Value source,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes);

/// Dimension `dim` of `value`: static where the type or the slice that made
/// it says so (a peeled loop's blocks are slices of a constant size, typed
/// `?` by the tiling that made them before the peeling).
OpFoldResult getSize(OpBuilder &b, Location loc, Value value, unsigned dim = 0);

/// `value` with the static type its sizes allow: a slice of a constant size
/// typed `?` (a peeled loop's block, made by tiling before the peeling) is
/// made again so that the block's ops see static shapes (what the vectorizer
/// needs). A block sliced out of a range of keys that is itself a slice of
/// the same rank is taken straight from what the range was sliced from: one
/// view per block, as the key loop had before it was tiled. Null stays null.
Value withStaticSizes(OpBuilder &b, Location loc, Value value);

/// Erases `value`'s slice, and the slices it was cut from, where nothing
/// else reads them.
void eraseDeadSlices(RewriterBase &rewriter, Value value);

/// Whether `value` (a tensor or an element) holds bf16: a key or value
/// block read from a bf16 cache, which the online softmax widens to f32
/// inside the ops that read it, so that no f32 copy of the cache exists.
bool isBF16(Value value);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_ATTENTION_TILETENSORS_H
