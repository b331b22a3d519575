// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The attributes the compiler puts on other dialects' ops are the dialect's
// (MhaDialect.td, discardableAttrs) and verified by it: a stale or mistyped
// one is refused where the graph is read, not ignored by a pass.

func.func @projection_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.projection to be a unit attribute, got 1 : i64}}
  %0 = linalg.matmul {mha.projection = 1} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @register_block_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.register_block to be a unit attribute, got "yes"}}
  %0 = linalg.matmul {mha.register_block = "yes"} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{expects mha.prepare_functions to be an array of function symbols, got ["layer_prepare0"]}}
func.func @layer(%x: tensor<4xf32>) attributes {mha.prepare_functions = ["layer_prepare0"]} {
  return
}

// -----

func.func @prepare_functions_not_on_a_function(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.prepare_functions on a function}}
  %0 = linalg.matmul {mha.prepare_functions = [@f]} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{unknown attribute mha.prepared of the mha dialect (on an operation)}}
func.func @unknown(%x: tensor<4xf32>) attributes {mha.prepared = [@f]} {
  return
}

// -----

func.func @name_on_an_operation(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.name on a function argument, not an operation}}
  %0 = linalg.matmul {mha.name = "x"} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @row_part_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.row_part to be a unit attribute, got 2 : i64}}
  %0 = linalg.matmul {mha.row_part = 2} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @block_init_not_unit(%c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{expects mha.block_init to be a unit attribute, got "yes"}}
  %0 = linalg.fill {mha.block_init = "yes"} ins(%zero : f32) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// mha.tiles: an #mha.attention_tiles, on an mha.sdpa (or the mha.sdpa_split of its keys) only, with sizes in
// the options' ranges (MhaDialect.h).
func.func @tiles_not_on_sdpa(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.tiles on an mha.sdpa}}
  %0 = linalg.matmul {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 16, key_splits = 1>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @tiles_not_tiles(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects mha.tiles to be an #mha.attention_tiles, got [16, 16]}}
  %o = mha.sdpa %q, %k, %v {mha.tiles = [16, 16]} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @tiles_zero_queries(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects query_tile between 1 and 4096, got 0}}
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 0, key_tile = 16, key_splits = 1>} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @tiles_huge_keys(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects key_tile between 1 and 4096, got 9223372036854775807}}
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 9223372036854775807, key_splits = 1>} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @tiles_too_many_splits(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expects key_splits between 1 and 1024, got 1025}}
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 16, key_splits = 1025>} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// All three sizes are required.
func.func @tiles_missing_splits(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{expected ','}}
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 16>} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// mha.codegen: an #mha.codegen_sizes, on a function only, with sizes in the
// pipeline options' ranges.
func.func @codegen_not_on_function(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.codegen on a function}}
  %0 = linalg.matmul {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{expects mha.codegen to be an #mha.codegen_sizes, got #mha.attention_tiles<query_tile = 16, key_tile = 16, key_splits = 1>}}
func.func @codegen_not_sizes() attributes {mha.codegen = #mha.attention_tiles<query_tile = 16, key_tile = 16, key_splits = 1>} {
  return
}

// -----

// expected-error @+1 {{expects register_unroll between 1 and 16, got 0}}
func.func @codegen_no_steps() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 0, max_vector_length = 256, projection_rows = 48, projection_cols = 128>} {
  return
}

// -----

// expected-error @+1 {{expects projection_cols between 0 and 4096, got -1}}
func.func @codegen_negative_tile() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = -1>} {
  return
}

// -----

// expected-error @+1 {{expects bf16_path to be "f32", "avx512" or "amx", got "avx2"}}
func.func @codegen_unknown_bf16_path() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, bf16_path = "avx2">} {
  return
}

// -----

// expected-error @+1 {{expects tail_keys to be a power of two, got 12}}
func.func @codegen_tail_keys_not_power_of_two() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, tail_keys = 12>} {
  return
}

// -----

// expected-error @+1 {{expects row_padding between 1 and 64, got 65}}
func.func @codegen_row_padding_too_long() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, row_padding = 65>} {
  return
}
