// RUN: mha-opt %s -split-input-file -verify-diagnostics

// causal_bottom_right says where the causal diagonal lies; without causal
// there is none (a graph that lost its `causal`). Only the generic form can
// write it.

func.func @bottom_right_without_causal(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects causal_bottom_right only together with causal, got causal_bottom_right without causal}}
  %o = "mha.sdpa"(%q, %k, %v) <{causal_bottom_right, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}> : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @weights_bottom_right_without_causal(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>) -> tensor<1x1x4x6xf32> {
  // expected-error @+1 {{'mha.attention_weights' op expects causal_bottom_right only together with causal, got causal_bottom_right without causal}}
  %p = "mha.attention_weights"(%q, %k) <{causal_bottom_right, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0>}> : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x6xf32>
  return %p : tensor<1x1x4x6xf32>
}

// -----

func.func @attention_bottom_right_without_causal(%x: tensor<1x3x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x3x8xf32> {
  // expected-error @+1 {{'mha.attention' op expects causal_bottom_right only together with causal, got causal_bottom_right without causal}}
  %y = "mha.attention"(%x, %w, %w, %w, %w) <{causal_bottom_right, num_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> : (tensor<1x3x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

func.func @unknown_alignment(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects the causal alignment top_left or bottom_right, got bottom_left}}
  %o = mha.sdpa %q, %k, %v causal(bottom_left) : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @empty_alignment(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects the causal alignment top_left or bottom_right, got no keyword}}
  %o = mha.sdpa %q, %k, %v causal() : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// The clauses may come in any order, each once.
func.func @scale_twice(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{`scale` is given twice}}
  %o = mha.sdpa %q, %k, %v scale(0.125) causal scale(0.5) : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @causal_twice(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{`causal` is given twice}}
  %o = mha.sdpa %q, %k, %v causal scale(0.5) causal(bottom_right) : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
