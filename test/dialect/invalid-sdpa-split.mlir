// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules of mha.sdpa_split, one function each.

// The queries are [B, H, T, dk].
func.func @query_rank(%q: tensor<8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects query to have rank 4 ([B, H, T, dk]), got rank 3}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// The head count is static.
func.func @dynamic_heads(%q: tensor<2x?x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x?x1x64xf32>, %m: tensor<2x?x1xf32>, %l: tensor<2x?x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects a static head count (H) (dimension 1 of query), got ?}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x?x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x?x1x64xf32>, tensor<2x?x1xf32>, tensor<2x?x1xf32>) -> (tensor<2x?x1x64xf32>, tensor<2x?x1xf32>, tensor<2x?x1xf32>)
  return
}

// -----

// Grouped heads: Hkv divides H.
func.func @kv_heads_divide(%q: tensor<2x8x1x64xf32>, %k: tensor<2x3x64x64xf32>, %v: tensor<2x3x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects the key/value head count (Hkv) (3) to divide the query head count (H) (8)}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x3x64x64xf32>, tensor<2x3x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// Keys have the queries' head dimension.
func.func @key_dim(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x32xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects key head dimension (dk) to be 64, got 32}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// As many values as keys.
func.func @value_length(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x32x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects value length (S) to be 64, got 32}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x32x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// A mask of the batch or of one row for all.
func.func @mask_batch(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %mask: tensor<3x1x64xi1>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects mask batch (B or 1) to be 2, got 3}}
  %r:3 = mha.sdpa_split %q, %k, %v mask(%mask) split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, tensor<3x1x64xi1>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// A mask column per key.
func.func @mask_length(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %mask: tensor<1x1x65xi1>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects mask length (S) to be 64, got 65}}
  %r:3 = mha.sdpa_split %q, %k, %v mask(%mask) split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, tensor<1x1x65xi1>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// A position per sequence.
func.func @positions_size(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %len: tensor<3xi64>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects positions size (B) to be 2, got 3}}
  %r:3 = mha.sdpa_split %q, %k, %v positions(%len) split(%p) splits(4) key_block(16) scale(0.125) causal outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, tensor<3xi64>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// Positions only with top-left causal attention.
func.func @positions_causal(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %len: tensor<2xi64>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects positions only with top-left causal attention (causal without causal_bottom_right)}}
  %r:3 = mha.sdpa_split %q, %k, %v positions(%len) split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, tensor<2xi64>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// causal_bottom_right refines causal.
func.func @bottom_right_alone(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects causal_bottom_right only together with causal}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) causal_bottom_right outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// The accumulator has dv columns.
func.func @acc_columns(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x32xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects acc columns (dv) to be 64, got 32}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x32xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x32xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// A maximum per query.
func.func @max_rows(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x2xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects max rows (T) to be 1, got 2}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x2xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x2xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// The scale is positive.
func.func @scale(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op expects scale to be positive and finite, got 0}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(16) scale(0.0) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// At least two splits.
func.func @splits(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op attribute 'splits' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(1) key_block(16) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}

// -----

// Blocks of at least one key.
func.func @key_block(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf32>, %v: tensor<2x2x64x64xf32>, %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa_split' op attribute 'key_block' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(0) scale(0.125) outs(%acc, %m, %l) : (tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return
}
