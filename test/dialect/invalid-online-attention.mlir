// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules of mha.online_attention, one function each.

// The query tile is [tq, dk].
func.func @query_rank(%q: tensor<1x16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects query to have rank 2 ([tq, dk]), got rank 3}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<1x16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The accumulator is [tq, dv].
func.func @acc_rank(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects acc to have rank 2 ([tq, dv]), got rank 1}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The running maximum is [tq].
func.func @max_rank(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16x1xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects max to have rank 1 ([tq]), got rank 2}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16x1xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x1xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The scores scratch is [BQ, BK].
func.func @scores_rank(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects the scores scratch to have rank 2 ([BQ, BK]), got rank 1}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// dk is static: the blocks are vectorized along it.
func.func @dynamic_head_dimension(%q: tensor<16x?xf32>, %k: tensor<32x?xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects a static head dimension (dimension 1 of query), got ?}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x?xf32>, tensor<32x?xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// dv is static.
func.func @dynamic_value_dimension(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x?xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x?xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects a static value dimension (dimension 1 of value), got ?}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x?xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x?xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x?xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The keys have the queries' dk.
func.func @key_head_dimension(%q: tensor<16x8xf32>, %k: tensor<32x4xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects key head dimension (dk) to be 8, got 4}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x4xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// As many values as keys.
func.func @value_length(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<16x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects value length (n) to be 32, got 16}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<16x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Kᵀ is [dk, n].
func.func @keys_t_head_dimension(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %kT: tensor<4x32xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects keys_t head dimension (dk) to be 8, got 4}}
  %r:7 = mha.online_attention ins(%q, %k, %v) keys_t(%kT) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, tensor<4x32xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Kᵀ has every key.
func.func @keys_t_length(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %kT: tensor<8x16xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects keys_t length (n) to be 32, got 16}}
  %r:7 = mha.online_attention ins(%q, %k, %v) keys_t(%kT) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, tensor<8x16xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The mask has the tile's rows.
func.func @mask_rows(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %mask: tensor<8x32xi1>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects mask rows (tq) to be 16, got 8}}
  %r:7 = mha.online_attention ins(%q, %k, %v) mask(%mask) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, tensor<8x32xi1>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The mask has every key.
func.func @mask_length(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %mask: tensor<16x16xi1>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects mask length (n) to be 32, got 16}}
  %r:7 = mha.online_attention ins(%q, %k, %v) mask(%mask) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, tensor<16x16xi1>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The accumulator has the tile's rows.
func.func @acc_rows(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<8x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects acc rows (tq) to be 16, got 8}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The accumulator has dv columns.
func.func @acc_columns(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x4xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects acc columns (dv) to be 6, got 4}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// One maximum per row.
func.func @max_size(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<8xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects max size (tq) to be 16, got 8}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<8xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// One sum per row.
func.func @sum_size(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<8xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects sum size (tq) to be 16, got 8}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<8xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<8xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The diagonal's offset means nothing without causal.
func.func @causal_offset_without_causal(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %o: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects causal_offset only together with causal, window or score_mod, got causal_offset alone}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) causal_offset(%o) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// The scale is positive.
func.func @scale_negative(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects scale to be positive and finite, got -1}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(-1.0) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// f32 keys and values are read in place: no scratch to widen them into.
func.func @widened_scratch_f32(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>, %vw: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects a widened scratch exactly with bf16 or i8 keys or values, got one with 'f32' keys and 'f32' values}}
  %r:8 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %vw) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>)
  return
}

// -----

// bf16 values are widened into a scratch.
func.func @widened_scratch_missing(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xbf16>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects a widened scratch exactly with bf16 or i8 keys or values, got none with 'f32' keys and 'bf16' values}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xbf16>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// bf16 keys are widened into the scratch too: it needs dk = 8 columns,
// more than dv = 6.
func.func @widened_scratch_narrow(%q: tensor<16x8xf32>, %k: tensor<32x8xbf16>, %v: tensor<32x6xbf16>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>, %vw: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects the widened scratch to have at least max(dk, dv) = 8 columns, got 6}}
  %r:8 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %vw) : (tensor<16x8xf32>, tensor<32x8xbf16>, tensor<32x6xbf16>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x6xf32>)
  return
}

// -----

// Packed keys and values are read from keys_t.
func.func @packed_without_keys_t(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>, %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>, %nm: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'mha.online_attention' op expects packed with keys_t, an even head dimension and f32 values, got dk = 8, no keys_t, values of 'f32'}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j) scale(0.125) packed outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}
