//===- DecodeCheck.h - A decoder's rows against the reference ---*- C++ -*-===//
//
// Private to mha-run's decoder (tools/mha-run/Decode.cpp): `--check` of a
// decoder compares the rows it computed with the causal layer over each
// sequence's tokens, computed by runtime/ReferenceAttention.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_DECODECHECK_H
#define MHA_TOOLS_MHARUN_DECODECHECK_H

#include "runtime/GraphSignature.h"
#include "runtime/Npy.h"
#include "runtime/ReferenceAttention.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace mha {
namespace tools {

/// The rows a decoder computed, and what it computed them from.
struct DecodedRows {
  /// The arguments the inputs were bound to (x of T + N rows per sequence).
  const runtime::GraphSignature &binding;
  /// Their arrays, bf16 ones rounded to the values the graph computes with.
  const std::vector<runtime::NpyArray> &inputs;
  /// For a bf16 layer, the arrays as given (float32), else empty.
  const std::vector<runtime::NpyArray> &givenInputs;
  /// The tokens of the prefill that each sequence kept.
  llvm::ArrayRef<int64_t> lengths;
  /// T and N.
  int64_t prefill, steps;
  /// [B, T + N, D_out]: the prefill's rows, then one row per step.
  const runtime::NpyArray &outputs;
  /// Whether the layer keeps its caches in bf16.
  bool bf16;
};

/// Compares the rows each sequence kept (the prefill's first l_b and every
/// step's) with the reference of `layer` over those tokens, printing the
/// comparison to `os`: within `atol` and `rtol`, or for a bf16 layer the
/// accuracy rule of bf16 layers (runtime::checkStorageError, with
/// `bf16ErrorFactor`). Returns whether every row passed.
llvm::Expected<bool> checkDecodedRows(const runtime::AttentionShape &layer,
                                      const DecodedRows &rows, double atol,
                                      double rtol, double bf16ErrorFactor,
                                      llvm::raw_ostream &os);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_DECODECHECK_H
