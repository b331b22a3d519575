// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules of mha.cache_append and of the positions of mha.sdpa and
// mha.attention_weights, one function each.

func.func @update_rank(%u: tensor<1x2x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op operand #0 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x2x8xf32>'}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x8xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @cache_rank(%u: tensor<1x2x1x8xf32>, %c: tensor<2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op operand #1 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<2x16x8xf32>'}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x8xf32> into tensor<2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @lengths_rank(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1x1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op operand #2 must be 1D tensor [B] of 64-bit signless integer values, but got 'tensor<1x1xi64>'}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xf32> at tensor<1x1xi64>
  return
}

// -----

func.func @lengths_element_type(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi32>) {
  // expected-error @+1 {{'mha.cache_append' op operand #2 must be 1D tensor [B] of 64-bit signless integer values, but got 'tensor<1xi32>'}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xf32> at tensor<1xi32>
  return
}

// -----

func.func @element_types(%u: tensor<1x2x1x8xf16>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op failed to verify that all of {update, cache} have same element type}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x8xf16> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @batch(%u: tensor<2x2x1x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects update batch to be 1, got 2}}
  %r = mha.cache_append %u into %c at %l : tensor<2x2x1x8xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @lengths_size(%u: tensor<?x2x1x8xf32>, %c: tensor<3x2x16x8xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects lengths size (B) to be 3, got 2}}
  %r = mha.cache_append %u into %c at %l : tensor<?x2x1x8xf32> into tensor<3x2x16x8xf32> at tensor<2xi64>
  return
}

// -----

func.func @heads(%u: tensor<1x4x1x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects update heads (Hkv) to be 2, got 4}}
  %r = mha.cache_append %u into %c at %l : tensor<1x4x1x8xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @row_width(%u: tensor<1x2x1x4xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects update row width (d) to be 8, got 4}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x4xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @dynamic_heads(%u: tensor<1x2x1x8xf32>, %c: tensor<1x?x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects a static head count (dimension 1 of cache), got ?}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x8xf32> into tensor<1x?x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @dynamic_width(%u: tensor<1x2x1x?xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects a static row width (dimension 3 of update), got ?}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x1x?xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @over_capacity(%u: tensor<1x2x17x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op expects the update length (T = 17) to be at most the cache capacity (C = 16)}}
  %r = mha.cache_append %u into %c at %l : tensor<1x2x17x8xf32> into tensor<1x2x16x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @result_type(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append' op failed to verify that all of {cache, result} have same type}}
  %r = "mha.cache_append"(%u, %c, %l) : (tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32>, tensor<1xi64>) -> tensor<1x2x15x8xf32>
  return
}

// -----

func.func @positions_without_causal(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.sdpa' op expects positions only together with causal, got positions without causal}}
  %o = mha.sdpa %q, %k, %k positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> tensor<2x2x1x8xf32>
  return
}

// -----

func.func @positions_bottom_right(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.sdpa' op expects positions with the top-left causal alignment, got causal(bottom_right)}}
  %o = mha.sdpa %q, %k, %k causal(bottom_right) positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> tensor<2x2x1x8xf32>
  return
}

// -----

func.func @positions_rank(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2x1xi64>) {
  // expected-error @+1 {{'mha.sdpa' op operand #3 must be 1D tensor [B] of 64-bit signless integer values, but got 'tensor<2x1xi64>'}}
  %o = mha.sdpa %q, %k, %k causal positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x1xi64>) -> tensor<2x2x1x8xf32>
  return
}

// -----

func.func @positions_size(%q: tensor<?x2x1x8xf32>, %k: tensor<?x2x16x8xf32>, %v: tensor<2x2x16x8xf32>, %l: tensor<3xi64>) {
  // expected-error @+1 {{'mha.sdpa' op expects positions size (B) to be 2, got 3}}
  %o = mha.sdpa %q, %k, %v causal positions(%l) : (tensor<?x2x1x8xf32>, tensor<?x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<3xi64>) -> tensor<?x2x1x8xf32>
  return
}

// -----

func.func @positions_element_type(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2xf32>) {
  // expected-error @+1 {{'mha.sdpa' op operand #3 must be 1D tensor [B] of 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %o = mha.sdpa %q, %k, %k causal positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xf32>) -> tensor<2x2x1x8xf32>
  return
}

// -----

func.func @weights_positions_without_causal(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.attention_weights' op expects positions only together with causal, got positions without causal}}
  %p = mha.attention_weights %q, %k positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> tensor<2x2x1x16xf32>
  return
}

// -----

func.func @weights_positions_bottom_right(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.attention_weights' op expects positions with the top-left causal alignment, got causal(bottom_right)}}
  %p = mha.attention_weights %q, %k causal(bottom_right) positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> tensor<2x2x1x16xf32>
  return
}

// -----

func.func @weights_positions_size(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.attention_weights' op expects positions size (B) to be 2, got 1}}
  %p = mha.attention_weights %q, %k causal positions(%l) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<1xi64>) -> tensor<2x2x1x16xf32>
  return
}
