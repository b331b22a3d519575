// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s

// The clauses after an attention op's operands (mask, causal, positions,
// scale) may come in any order; they print in one order.

// CHECK-LABEL: func.func @sdpa_any_order(
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal scale(1.250000e-01) :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal scale(1.250000e-01) :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}}) causal(bottom_right) scale(5.000000e-01) :
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}}) causal(bottom_right) scale(5.000000e-01) :
func.func @sdpa_any_order(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<1x3x5xi1>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %a = mha.sdpa %q, %k, %v scale(0.125) causal : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  %b = mha.sdpa %q, %k, %v causal scale(0.125) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  %c = mha.sdpa %q, %k, %v scale(0.5) causal(bottom_right) mask(%m) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x3x5xi1>) -> tensor<1x2x3x4xf32>
  %d = mha.sdpa %q, %k, %v mask(%m) causal(bottom_right) scale(0.5) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x3x5xi1>) -> tensor<1x2x3x4xf32>
  return %a, %b, %c, %d : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// Positions (a decoding step against a cache) before causal, and the
// attention weights of the same clauses.
// CHECK-LABEL: func.func @positions_first(
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal positions(%{{.+}}) scale(2.500000e-01) :
//       CHECK:   mha.attention_weights %{{.+}}, %{{.+}} causal positions(%{{.+}}) scale(2.500000e-01) :
func.func @positions_first(%q: tensor<2x2x1x4xf32>, %k: tensor<2x2x8x4xf32>, %v: tensor<2x2x8x4xf32>, %len: tensor<2xi64>) -> (tensor<2x2x1x4xf32>, tensor<2x2x1x8xf32>) {
  %o = mha.sdpa %q, %k, %v scale(0.25) positions(%len) causal : (tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2xi64>) -> tensor<2x2x1x4xf32>
  %p = mha.attention_weights %q, %k positions(%len) scale(0.25) causal : (tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2xi64>) -> tensor<2x2x1x8xf32>
  return %o, %p : tensor<2x2x1x4xf32>, tensor<2x2x1x8xf32>
}

// -----

// The whole layer: scale before causal too.
// CHECK-LABEL: func.func @attention_any_order(
//       CHECK:   mha.attention %{{.+}} weights({{.+}}) heads(2) causal scale(5.000000e-01) :
func.func @attention_any_order(%x: tensor<1x3x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x3x4xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) scale(0.5) causal : (tensor<1x3x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

