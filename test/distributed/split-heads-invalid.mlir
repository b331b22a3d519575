// What mha-split-heads refuses, with the reason.
// RUN: mha-opt %s --split-input-file --mha-split-heads="rank=0 ranks=2" -verify-diagnostics
// RUN: not mha-opt %s --split-input-file --mha-split-heads="rank=2 ranks=2" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: mha-split-heads needs ranks >= 1 and 0 <= rank < ranks, got rank=2 ranks=2

func.func @odd_heads(%x: tensor<1x4x6xf32>, %w: tensor<6x6xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+1 {{cannot split heads(3) among 2 ranks: the heads must divide evenly}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(3)
      : (tensor<1x4x6xf32>, tensor<6x6xf32>, tensor<6x6xf32>, tensor<6x6xf32>,
         tensor<6x6xf32>) -> tensor<1x4x6xf32>
  return %y : tensor<1x4x6xf32>
}

// -----

// Groups of two query heads per key/value head: three query heads per rank
// would give rank 0 half of the second group.
func.func @cut_group(%x: tensor<1x4x12xf32>, %w: tensor<12x12xf32>,
                     %w_kv: tensor<12x6xf32>) -> tensor<1x4x12xf32> {
  // expected-error @+1 {{cannot split heads(6) kv_heads(3) among 2 ranks: 3 query heads per rank would not cover whole groups of 2 query heads per key/value head}}
  %y = mha.attention %x weights(%w, %w_kv, %w_kv, %w) heads(6) kv_heads(3)
      : (tensor<1x4x12xf32>, tensor<12x12xf32>, tensor<12x6xf32>,
         tensor<12x6xf32>, tensor<12x12xf32>) -> tensor<1x4x12xf32>
  return %y : tensor<1x4x12xf32>
}

// -----

func.func @split_first(%x: tensor<1x4x4xf32>, %w: tensor<2x2x2xf32>,
                       %w_o: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+1 {{mha-split-heads does not split a split-first layer (per-head weights [H, D/H, dk]) yet}}
  %y = mha.attention %x weights(%w, %w, %w, %w_o) heads(2)
      : (tensor<1x4x4xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>,
         tensor<2x2x2xf32>, tensor<4x4xf32>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// Each rank's result is a partial sum: an op that reads it would see only
// the rank's part.
func.func @result_used(%x: tensor<1x4x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+1 {{mha-split-heads needs the layer's result returned as it is: each rank's result is a partial sum that the ranks add up}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2)
      : (tensor<1x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>,
         tensor<4x4xf32>) -> tensor<1x4x4xf32>
  %z = arith.addf %y, %x : tensor<1x4x4xf32>
  return %z : tensor<1x4x4xf32>
}

// -----

// Steps without an mha.sdpa are no layer to split.
func.func @steps(%x: tensor<1x4x4xf32>) -> tensor<1x2x4x2xf32> {
  // expected-error @+1 {{mha-split-heads splits mha.attention layers and layers written as their steps around an mha.sdpa; mha.split_heads is not split yet}}
  %h = mha.split_heads %x heads(2) : tensor<1x4x4xf32> -> tensor<1x2x4x2xf32>
  return %h : tensor<1x2x4x2xf32>
}

// -----

// The steps of a layer: the heads of the sdpa's query must come from one
// projection, through ops that keep each head apart.
func.func @query_argument(%q: tensor<1x2x4x2xf32>, %x: tensor<1x4x4xf32>,
                          %w: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  %k = mha.project %x, %w heads(2) : (tensor<1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x2xf32>
  // expected-error @+1 {{mha-split-heads cannot follow the query heads back to the one projection that makes them (through mha.split_heads, mha.rms_norm, mha.rope, mha.cache_append and casts, each used once)}}
  %o = mha.sdpa %q, %k, %k : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %y = mha.output_project %o, %w : (tensor<1x2x4x2xf32>, tensor<4x4xf32>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// The sdpa's heads must go to the output projection, whose rows the ranks
// share: here the function returns them.
func.func @heads_returned(%x: tensor<1x4x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x2x4x2xf32> {
  %q = mha.project %x, %w heads(2) : (tensor<1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x2xf32>
  // expected-error @+1 {{mha-split-heads needs the heads of mha.sdpa to go to one mha.output_project (through mha.concat_heads), whose rows the ranks share}}
  %o = mha.sdpa %q, %q, %q : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  return %o : tensor<1x2x4x2xf32>
}
