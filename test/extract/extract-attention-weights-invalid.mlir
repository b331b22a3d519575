// RUN: mha-opt %s -split-input-file --mha-extract-attention-weights -verify-diagnostics
// RUN: %expect-exit 3 mha-opt %s --mha-extract-attention-weights=function=missing 2>&1 | FileCheck %s --check-prefix=MISSING

// What mha-extract-attention-weights refuses: a function must have exactly
// one attention, and the name of the new function must be free.

// MISSING: error: no function @missing to extract the attention weights of

// expected-error @+1 {{'func.func' op expects exactly one attention to extract the weights of, found 0}}
func.func @no_attention(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{'func.func' op expects exactly one attention to extract the weights of, found 2}}
func.func @two_attentions(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %o = mha.sdpa %q, %q, %q : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = mha.sdpa %o, %o, %o : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %p : tensor<1x1x2x2xf32>
}

// -----

// expected-error @+1 {{'func.func' op cannot add @taken_attention_weights for its attention weights: the name is taken}}
func.func @taken(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %o = mha.sdpa %q, %q, %q : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %o : tensor<1x1x2x2xf32>
}
func.func private @taken_attention_weights()
