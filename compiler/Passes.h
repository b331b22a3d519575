//===- Passes.h - Passes of the mha compiler --------------------*- C++ -*-===//

#ifndef MHA_COMPILER_PASSES_H
#define MHA_COMPILER_PASSES_H

#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/Strategy.h"
#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace mha {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

/// Adds the pattern that rewrites `mha.attention` into the five-step form.
void populateExpandAttentionPatterns(RewritePatternSet &patterns);

/// Adds the patterns that lower `mha.project`, `mha.split_heads`,
/// `mha.sdpa`, `mha.concat_heads` and `mha.output_project` (f32 only) to
/// linalg, tensor, arith and math ops on tensors.
void populateMhaToLinalgPatterns(RewritePatternSet &patterns);

/// Adds the pattern that rewrites a `memref.expand_shape` with several
/// dynamic sizes in one reassociation group into
/// `memref.extract_strided_metadata` + `memref.reinterpret_cast` (LLVM 22's
/// expand-strided-metadata crashes on it, llvm/llvm-project#186830).
void populateExpandShapeMetadataPatterns(RewritePatternSet &patterns);

/// Adds the pattern that rewrites `mha.sdpa` (f32) into fused flash-style
/// attention: an `scf.forall` over (batch, head, query tile) around an
/// online softmax over key blocks, with the tile sizes of each op's
/// `mha.tiles` (AttentionStrategy.h) and the selection (`fused` or `auto`)
/// of `options`.
void populateTileAttentionPatterns(RewritePatternSet &patterns,
                                   const MhaTileAttentionOptions &options);

/// Adds the pattern that tiles an f32 `mha.sdpa` whose `mha.tiles` has more
/// than one key range over key ranges too, merging the ranges' online
/// softmax states in a fixed order (`populateTileAttentionPatterns` adds
/// it, with a higher benefit than the query tiling).
void populateSplitKeysPatterns(RewritePatternSet &patterns,
                               const MhaTileAttentionOptions &options);

/// Adds the patterns that fold `mha.split_heads` into the projection that
/// produces it or the per-head projection that reads it, and
/// `mha.concat_heads` into the `mha.output_project` that reads it.
void populateFoldHeadLayoutsPatterns(RewritePatternSet &patterns);

/// Adds the pattern that packs the `mha.project` ops reading one input into
/// one projection by the concatenated weights, plus slices.
void populateFuseProjectionsPatterns(RewritePatternSet &patterns);

/// Adds the pattern that tiles each linalg op marked `mha.projection`
/// into an `scf.forall` over its parallel result dimensions, with the tile
/// sizes of `options`.
void populateTileProjectionsPatterns(RewritePatternSet &patterns,
                                     const MhaTileProjectionsOptions &options);

/// Adds the pattern that lowers `mha.attention_weights` (f32) to the masked,
/// normalized softmax of `mha.sdpa` on tensors.
void populateAttentionWeightsToLinalgPatterns(RewritePatternSet &patterns);

/// The name of the function that `mha-extract-attention-weights` adds for
/// `function`: `<function>_attention_weights`.
std::string getAttentionWeightsFunctionName(llvm::StringRef function);

/// The attribute `mha-split-heads` puts on an argument it narrowed to one
/// rank's heads: `mha.shard = array<i64: dim, offset, size>`, the part of
/// the full argument along `dim` that the rank is given.
llvm::StringRef getShardAttrName();

/// For each argument of `function`, whether `mha-prepare-weights` treats it
/// as a weight: every use of it, through pure ops outside the mha dialect,
/// ends as a weight or bias operand of an mha op (a projection's, or
/// `mha.attention`'s from `w_q` on). Only weights reach the prepare
/// functions, so a runtime may run them once for many values of the other
/// arguments (mha-compile's `NAME_create`).
llvm::SmallVector<bool> getWeightArguments(func::FuncOp function);

/// Adds the pattern that rewrites a memref.copy between buffers that are not
/// both contiguous into linalg.copy (`mha-lower-strided-copies`).
void populateLowerStridedCopiesPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_PASSES_H
