// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg -verify-diagnostics

// Only f32 is lowered; other float types verify but are refused here.
func.func @negative_f16_project(%x: tensor<2x3x8xf16>, %w: tensor<8x6xf16>) -> tensor<2x3x6xf16> {
  // expected-error @below {{'mha.project' op expects f32 elements to lower to linalg, got 'f16'}}
  %y = mha.project %x, %w : (tensor<2x3x8xf16>, tensor<8x6xf16>) -> tensor<2x3x6xf16>
  return %y : tensor<2x3x6xf16>
}

// -----

func.func @negative_bf16_sdpa(%q: tensor<1x2x5x4xbf16>, %k: tensor<1x2x5x4xbf16>, %v: tensor<1x2x5x4xbf16>) -> tensor<1x2x5x4xbf16> {
  // expected-error @below {{'mha.sdpa' op expects f32 elements to lower to linalg, got 'bf16'}}
  %o = mha.sdpa %q, %k, %v
      : (tensor<1x2x5x4xbf16>, tensor<1x2x5x4xbf16>, tensor<1x2x5x4xbf16>) -> tensor<1x2x5x4xbf16>
  return %o : tensor<1x2x5x4xbf16>
}

// -----

// mha.attention is lowered through its five steps: mha-expand must run first
// (the mha-to-linalg pipeline does).
func.func @negative_attention_not_expanded(%x: tensor<1x8x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  // expected-error @below {{'mha.attention' op must be expanded before lowering to linalg (run mha-expand first)}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2)
      : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
