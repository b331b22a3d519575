//===- AttentionProblem.h - One attention layer with its inputs -*- C++ -*-===//
//
// Connects a graph's `mha.attention` with the plain C++ reference: reads the
// sizes off the op and the bound inputs, so that `mha-run --check` can
// compute the same layer independently, and counts its FLOPs for timing.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_ATTENTIONPROBLEM_H
#define MHA_RUNTIME_ATTENTIONPROBLEM_H

#include "runtime/Npy.h"
#include "runtime/ReferenceAttention.h"
#include "runtime/ReferenceGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mlir::mha {
class AttentionOp;
} // namespace mlir::mha

namespace mha {
namespace runtime {

/// The sizes of one attention layer and pointers into its bound inputs.
struct AttentionProblem {
  /// The sizes, read from the op and the inputs.
  AttentionShape shape;
  /// The inputs; they point into the arrays given to describeAttention.
  AttentionOperands operands;

  /// The multiply-adds of the layer, counted twice: the four projections and
  /// Q·Kᵀ and P·V over every (query, key) pair (masked ones too, so causal
  /// layers report dense-equivalent rates, as the peers do).
  double flops() const;
  /// Whether the function returns the attention's result as it is, so that
  /// the reference's output is the function's (false when the graph computes
  /// more from it, e.g. a projection after the layer).
  bool returnsLayerOutput = false;
  /// The graph op by op, when the reference is not one layer's
  /// (describeGraphReference); `shape` and `operands` are then unused.
  std::shared_ptr<const ReferenceGraph> graph;
};

/// The sizes and flags of `op` with a query [B, T, D] and a key/value
/// source [B, S, D_kv] of these shapes (the query's for self-attention).
AttentionShape describeAttentionShape(mlir::mha::AttentionOp op,
                                      llvm::ArrayRef<int64_t> query,
                                      llvm::ArrayRef<int64_t> keyValueSource);

/// Describes the single `mha.attention` of `func`, whose operands must be
/// function arguments, bound to `inputs` (in argument order).
llvm::Expected<AttentionProblem>
describeAttention(mlir::func::FuncOp func, const std::vector<NpyArray> &inputs);

/// The reference that `mha-run --check` compares the result of `func` with:
/// that of its mha.attention (describeAttention) when the function returns
/// that op's result as it is, else the graph's, op by op (ReferenceGraph.h:
/// any graph of mha ops, the layer's result changed after it, a layer
/// written as its steps). A graph of that one mha.attention and no other
/// mha op keeps describeAttention's error; otherwise the error names the
/// op the graph reference has no reference for.
llvm::Expected<AttentionProblem>
describeGraphReference(mlir::func::FuncOp func,
                       const std::vector<NpyArray> &inputs);

/// Runs the reference on `problem` and returns y [B, T, D_out] (the
/// function's result, for a graph); if `probabilities` is given, it
/// receives the attention weights [B, H, T, S] (of the graph's first
/// mha.sdpa or mha.attention).
NpyArray computeReference(const AttentionProblem &problem,
                          NpyArray *probabilities = nullptr);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_ATTENTIONPROBLEM_H
