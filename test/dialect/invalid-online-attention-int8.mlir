// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The compiler's ops on the codes of an int8 cache: i8 keys or values come
// with their scales, one per key, and only they do.

func.func @key_scales_missing(%q: tensor<16x8xf32>, %k: tensor<32x8xi8>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects key_scales exactly with i8 keys, got none with 'i8' keys}}
  %r:8 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %w) : (tensor<16x8xf32>, tensor<32x8xi8>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>)
  return
}

// -----

func.func @value_scales_with_f32(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %vs: tensor<32xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects value_scales exactly with i8 values, got scales with 'f32' values}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) value_scales(%vs) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @key_scales_length(%q: tensor<16x8xf32>, %k: tensor<32x8xi8>, %ks: tensor<16xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects key_scales to have one entry per row of the keys, got 'tensor<16xf32>' for 'tensor<32x8xi8>'}}
  %r:8 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) key_scales(%ks) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %w) : (tensor<16x8xf32>, tensor<32x8xi8>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>)
  return
}

// -----

func.func @split_value_scales_rows(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xi8>, %vs: tensor<2x2x32xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects value_scales to have one entry per row of the values, got 'tensor<2x2x32xf32>' for 'tensor<2x2x64x64xi8>'}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) value_scales(%vs) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xi8>, tensor<2x2x32xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}
