//===- AttentionPath.h - Fused or decomposed attention ----------*- C++ -*-===//
//
// The compiler lowers `mha.sdpa` one of two ways: decomposed (the whole
// score matrix in memory, then softmax, then the values) or fused (tiled,
// online softmax, in parallel). This file names the choice and holds the
// per-shape rule that `attention=auto` applies, so that the pass that tiles
// and the tool that reports the choice agree.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_STRATEGY_ATTENTIONPATH_H
#define MHA_COMPILER_STRATEGY_ATTENTIONPATH_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
namespace mha {
class SdpaOp;

/// Default of the most key ranges run in parallel when there are fewer
/// query tiles (mha-strategy `key-splits`): two, the fewest that
/// use a second core; more pay off only with more threads, and every range
/// adds a partial output to merge.
constexpr int64_t kDefaultKeySplits = 2;

/// What the user asks for: a path, or `Auto` for the per-shape rule.
enum class AttentionMode { Fused, Decomposed, Auto };

/// Parses `fused`, `decomposed` or `auto`.
std::optional<AttentionMode> parseAttentionMode(llvm::StringRef text);

/// The spelling `parseAttentionMode` accepts.
llvm::StringRef stringifyAttentionMode(AttentionMode mode);

/// The sizes of one attention the rule looks at; `ShapedType::kDynamic`
/// where only the data knows them.
struct AttentionShape {
  int64_t batch;
  int64_t heads;
  int64_t queries;
  int64_t keys;
};

/// The sizes of an `mha.sdpa` or `mha.attention`; nullopt for other ops.
std::optional<AttentionShape> getAttentionShape(Operation *op);

/// True when every operand and the result of `op` are f32.
bool isF32Attention(SdpaOp op);

/// The path one attention takes, and why (for `mha-run` to print).
struct AttentionPathChoice {
  bool fused;
  std::string reason;
};

/// The fewest scores per head (T·S) for which `auto` picks the fused path:
/// below it, the fused path's fixed costs (a parallel region, a tile's
/// setup) outweigh what it saves. Vectorized, the fused path wins from
/// T·S = 16 on (T=1, S=16 and T=S=4), the decomposed one at T·S <= 8
/// (measured on 2 cores, docs/pipeline.md).
constexpr int64_t kAutoFusedMinScores = 16;

/// Applies `mode` to an attention of `shape`: a forced path as asked, and
/// for `Auto` the fused path when the query or key length is dynamic (the
/// data may be long) or when T·S >= `kAutoFusedMinScores`, else the
/// decomposed one.
AttentionPathChoice chooseAttentionPath(const AttentionShape &shape,
                                        AttentionMode mode);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_STRATEGY_ATTENTIONPATH_H
