//===- DecodeCheck.cpp - A decoder's rows against the reference -----------===//

#include "tools/mha-run/DecodeCheck.h"

#include "runtime/Comparison.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace ::mha::runtime;

namespace mha::tools {

/// The reference of every kept row, per sequence the causal layer over the
/// tokens it kept of the prefill and its steps, from `inputs` (the binding's
/// arrays): [rows, D_out].
static NpyArray referenceRows(const AttentionShape &layer,
                              const DecodedRows &rows,
                              const std::vector<NpyArray> &inputs,
                              int64_t validRows) {
  int64_t prefill = rows.prefill, steps = rows.steps;
  int64_t outDim = rows.outputs.shape[2];
  NpyArray want = NpyArray::zeros(ElementType::F32, {validRows, outDim});
  auto weight = [&](const char *name) -> const float * {
    int index = rows.binding.findArgument(name);
    return index < 0 ? nullptr : inputs[index].f32();
  };
  const NpyArray &tokensGiven = inputs[rows.binding.findArgument("x")];
  int64_t batch = tokensGiven.shape[0], width = tokensGiven.shape[2];
  AttentionOperands operands;
  operands.wQ = weight("w_q");
  operands.wK = weight("w_k");
  operands.wV = weight("w_v");
  operands.wO = weight("w_o");
  operands.bQ = weight("b_q");
  operands.bK = weight("b_k");
  operands.bV = weight("b_v");
  operands.bO = weight("b_o");
  // The variants' parameters, which describeLayer found under these names.
  operands.qNorm = weight("q_norm");
  operands.kNorm = weight("k_norm");
  operands.ropeInvFreq = weight("rope_inv_freq");
  operands.alibiSlopes = weight("alibi_slopes");
  operands.sinks = weight("sinks");
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kept = rows.lengths[b], total = kept + steps;
    if (total == 0)
      continue;
    std::vector<float> tokens(total * width);
    const float *sequence =
        tokensGiven.f32() + b * tokensGiven.shape[1] * width;
    std::copy(sequence, sequence + kept * width, tokens.begin());
    std::copy(sequence + prefill * width, sequence + (prefill + steps) * width,
              tokens.begin() + kept * width);
    AttentionShape shape = layer;
    shape.batch = 1;
    shape.seqLen = shape.kvSeqLen = total;
    operands.x = tokens.data();
    referenceAttention(shape, operands, want.f32() + row * outDim);
    row += total;
  }
  return want;
}

/// The rows of `rows.outputs` that some sequence kept: [rows, D_out] (a
/// ragged sequence's prefill rows past its length belong to no sequence).
static NpyArray keptRows(const DecodedRows &rows, int64_t validRows) {
  int64_t prefill = rows.prefill, steps = rows.steps;
  int64_t batch = rows.outputs.shape[0], outDim = rows.outputs.shape[2];
  NpyArray got = NpyArray::zeros(ElementType::F32, {validRows, outDim});
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kept = rows.lengths[b], total = kept + steps;
    const float *ours = rows.outputs.f32() + b * (prefill + steps) * outDim;
    std::copy(ours, ours + kept * outDim, got.f32() + row * outDim);
    std::copy(ours + prefill * outDim, ours + (prefill + steps) * outDim,
              got.f32() + (row + kept) * outDim);
    row += total;
  }
  return got;
}

/// The accuracy rule of bf16 layers (checkStorageError): the error against
/// the reference of the float32 inputs as given is at most `factor` times
/// the error of that reference computed on the bf16-rounded inputs, or
/// `atol` where that is larger; never NaN.
static bool checkBF16Rows(const AttentionShape &layer, const DecodedRows &rows,
                          const NpyArray &got, int64_t validRows, double atol,
                          double factor, llvm::raw_ostream &os) {
  NpyArray exact = referenceRows(layer, rows, rows.givenInputs, validRows);
  NpyArray rounded = referenceRows(layer, rows, rows.inputs, validRows);
  StorageErrorCheck check = checkStorageError(
      got.f32(), exact.f32(), rounded.f32(), got.numElements(), factor, atol);
  os << check.summary(factor) << "\n";
  return check.passed;
}

llvm::Expected<bool> checkDecodedRows(const AttentionShape &layer,
                                      const DecodedRows &rows, double atol,
                                      double rtol, double bf16ErrorFactor,
                                      llvm::raw_ostream &os) {
  int64_t validRows = 0;
  for (int64_t length : rows.lengths)
    validRows += length + rows.steps;
  NpyArray got = keptRows(rows, validRows);
  os << llvm::formatv("check {0} rows (the prefill's kept rows and every "
                      "step's) against the C++ reference of the causal "
                      "layer over each sequence: ",
                      validRows);
  if (rows.bf16)
    return checkBF16Rows(layer, rows, got, validRows, atol, bf16ErrorFactor,
                         os);
  NpyArray want = referenceRows(layer, rows, rows.inputs, validRows);
  auto comparison = compareArrays(got, want, atol, rtol);
  if (!comparison)
    return comparison.takeError();
  os << comparison->summary() << "\n";
  return comparison->passed;
}

} // namespace mha::tools
