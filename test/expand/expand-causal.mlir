// RUN: mha-opt %s -mha-expand | FileCheck %s
// RUN: mha-opt %s -mha-expand -mha-extract-attention-weights | FileCheck %s --check-prefix=WEIGHTS

// mha-expand carries the causal alignment from mha.attention to mha.sdpa,
// and mha-extract-attention-weights from mha.sdpa to mha.attention_weights.
// CHECK-LABEL: func.func @attention_bottom_right(
//       CHECK:   mha.sdpa {{.*}} causal(bottom_right) :
// WEIGHTS:   mha.attention_weights {{.*}} causal(bottom_right) :
func.func @attention_bottom_right(%x: tensor<1x3x8xf32>, %kv: tensor<1x7x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x3x8xf32> {
  %y = mha.attention %x kv(%kv) weights(%w, %w, %w, %w) heads(2) causal(bottom_right) : (tensor<1x3x8xf32>, tensor<1x7x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
