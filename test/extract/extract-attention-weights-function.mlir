// RUN: mha-opt %s --mha-extract-attention-weights | FileCheck %s
// RUN: mha-opt %s --mha-extract-attention-weights=function=second | FileCheck %s --check-prefix=ONE

// Private functions are helpers, not layers; function=NAME picks one layer.
// CHECK-LABEL: func.func @first(
// CHECK: func.func @first_attention_weights(
// CHECK-LABEL: func.func @second(
// CHECK: func.func @second_attention_weights(
// CHECK-NOT: func.func @helper_attention_weights
// ONE-LABEL: func.func @first(
// ONE-NOT: @first_attention_weights
// ONE-LABEL: func.func @second(
// ONE: func.func @second_attention_weights(
// ONE-NOT: _attention_weights
func.func @first(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %o = mha.sdpa %q, %q, %q : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %o : tensor<1x1x2x2xf32>
}
func.func @second(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %o = mha.sdpa %q, %q, %q causal : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %o : tensor<1x1x2x2xf32>
}
func.func private @helper(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  return %q : tensor<1x1x2x2xf32>
}
