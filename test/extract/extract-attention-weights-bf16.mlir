// RUN: mha-opt %s --mha-extract-attention-weights | FileCheck %s

// A bf16 layer expands with arith.extf of its inputs: the pass must load the
// arith dialect itself (mha-opt loads only what the input and the passes
// ask for; without it, creating the widening crashed the tool).
// CHECK-LABEL: func.func @mha(
// CHECK-LABEL: func.func @mha_attention_weights(
// CHECK-SAME: -> tensor<2x4x3x3xf32>
// CHECK: arith.extf {{.*}} : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
// CHECK: mha.attention_weights
func.func @mha(%x: tensor<2x3x8xbf16>, %w: tensor<8x8xbf16>) -> tensor<2x3x8xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(4) : (tensor<2x3x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
