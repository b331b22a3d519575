// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules of the score_mod region, one function each.

// The block receives (score, batch, head, query position, key).
func.func @arguments(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects the score_mod region's arguments to have the types ('f32', 'index', 'index', 'index', 'index'), got ('f32', 'index', 'index')}}
  %o = mha.sdpa %q, %q, %q score_mod {
  ^bb0(%s: f32, %h: index, %j: index):
    mha.yield %s : f32
  } : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// It yields one f32.
func.func @yield_type(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'mha.attention_weights' op expects the score_mod region to end with mha.yield of one f32 (the modified score)}}
  %p = mha.attention_weights %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    mha.yield %s, %s : f32, f32
  } : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  return %p : tensor<1x2x8x8xf32>
}

// -----

// Its ops have no side effects: the paths run it any number of times.
func.func @side_effects(%q: tensor<1x2x8x16xf32>, %buffer: memref<4xf32>) -> tensor<1x2x8x16xf32> {
  %o = mha.sdpa %q, %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'memref.load' op has side effects, which a score_mod region may not hold}}
    %x = memref.load %buffer[%h] : memref<4xf32>
    mha.yield %x : f32
  } : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The compiler's form: one f32 per score input before the positions.
func.func @online_arguments(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %bias: tensor<16x32xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects the score_mod region's arguments to have the types ('f32', 'f32', 'index', 'index'), got ('f32', 'index', 'index')}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) score_inputs(%bias) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) score_mod {
  ^bb0(%score: f32, %p: index, %key: index):
    mha.yield %score : f32
  } : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Score inputs are read only by a region.
func.func @inputs_without_region(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %bias: tensor<16x32xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects score_inputs only with a score_mod region, got 1 without one}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) score_inputs(%bias) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// A score input is [tq or 1, n].
func.func @input_length(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %bias: tensor<16x30xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects score input length (n) to be 32, got 30}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) score_inputs(%bias) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) score_mod {
  ^bb0(%score: f32, %b: f32, %p: index, %key: index):
    mha.yield %score : f32
  } : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16x30xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}
