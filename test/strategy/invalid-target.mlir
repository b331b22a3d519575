// RUN: mha-opt %s -split-input-file -verify-diagnostics

// #mha.target is checked where the graph is read: mha-strategy's sizes
// would otherwise be for a CPU that does not exist.

// expected-error @+1 {{unknown feature "sse9"}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx2", "sse9"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects vector_bits = 512 exactly with avx512f, got 256}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx512f"], vector_bits = 256, vector_registers = 32, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects 32 vector_registers with avx512f, got 16}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx512f"], vector_bits = 512, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects amx-tile with amx-bf16}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx2", "fma", "avx512f", "amx-bf16"], vector_bits = 512, vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects avx512f with avx512bf16}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx2", "avx512bf16"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects each feature once, got "fma" twice}}
module attributes {mha.target = #mha.target<cpu = "", features = ["fma", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects vector_bits to be 128, 256 or 512, got 384}}
module attributes {mha.target = #mha.target<cpu = "", features = [], vector_bits = 384, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {}

// -----

// An L2 smaller than the L1.
// expected-error @+1 {{expects l2_bytes between 32768 and 1073741824, got 16384}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx2"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 16384, l3_bytes = 0, cores = 0>} {}

// -----

// expected-error @+1 {{expects cores between 0 and 65536, got -1}}
module attributes {mha.target = #mha.target<cpu = "", features = ["avx2"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = -1>} {}

// -----

// expected-error @+1 {{expects mha.target on a module}}
func.func @f() attributes {mha.target = #mha.target<cpu = "", features = ["avx2"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {
  return
}

// -----

// expected-error @+1 {{expects mha.target to be an #mha.target, got "haswell"}}
module attributes {mha.target = "haswell"} {}

// -----

// The passes' sizes of #mha.codegen_sizes: 0 (not recorded) or in range.
// expected-error @+1 {{expects bf16_lanes to be 4, 8 or 16, got 12}}
func.func @g() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, bf16_lanes = 12>} {
  return
}

// -----

// expected-error @+1 {{expects amx_rows to be a multiple of 16, got 40}}
func.func @h() attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, amx_rows = 40>} {
  return
}
