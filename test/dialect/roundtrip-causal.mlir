// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s
// RUN: mha-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The two causal alignments: `causal` (top-left) and `causal(bottom_right)`,
// stored as the unit attributes causal and causal_bottom_right.

// CHECK-LABEL: func.func @sdpa_alignments(
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal(bottom_right) scale(5.000000e-01) :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} :
// GENERIC-LABEL: sym_name = "sdpa_alignments"
//       GENERIC:   "mha.sdpa"(%{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}>
//       GENERIC:   "mha.sdpa"(%{{.+}}) <{causal, causal_bottom_right, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, scale = 5.000000e-01 : f32}>
//       GENERIC:   "mha.sdpa"(%{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}>
func.func @sdpa_alignments(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %a = mha.sdpa %q, %k, %v causal : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  %b = mha.sdpa %q, %k, %v causal(bottom_right) scale(0.5) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  // top_left may be spelled out; it prints as `causal`.
  %c = mha.sdpa %q, %k, %v causal(top_left) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  %d = mha.sdpa %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  return %a, %b, %c, %d : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// In the generic form, `causal` alone is top-left.
// CHECK-LABEL: func.func @generic_forms(
//       CHECK:   mha.sdpa %{{.+}} mask(%{{.+}}) causal :
//       CHECK:   mha.sdpa %{{.+}} mask(%{{.+}}) causal(bottom_right) :
func.func @generic_forms(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>, %m: tensor<1x4x6xi1>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %a = "mha.sdpa"(%q, %k, %v, %m) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>}> : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>, tensor<1x4x6xi1>) -> tensor<1x1x4x8xf32>
  %b = "mha.sdpa"(%q, %k, %v, %m) <{causal, causal_bottom_right, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>}> : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>, tensor<1x4x6xi1>) -> tensor<1x1x4x8xf32>
  return %a, %b : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention_weights_bottom_right(
//       CHECK:   mha.attention_weights %{{.+}}, %{{.+}} causal(bottom_right) :
func.func @attention_weights_bottom_right(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x9x16xf32>) -> tensor<1x4x1x9xf32> {
  %p = mha.attention_weights %q, %k causal(bottom_right) : (tensor<1x4x1x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x1x9xf32>
  return %p : tensor<1x4x1x9xf32>
}

// -----

// CHECK-LABEL: func.func @attention_bottom_right(
//       CHECK:   mha.attention %{{.+}} kv(%{{.+}}) weights(%{{.+}}) heads(2) causal(bottom_right) scale(2.500000e-01) :
func.func @attention_bottom_right(%x: tensor<1x3x8xf32>, %kv: tensor<1x7x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x3x8xf32> {
  %y = mha.attention %x kv(%kv) weights(%w, %w, %w, %w) heads(2) causal(bottom_right) scale(0.25) : (tensor<1x3x8xf32>, tensor<1x7x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
