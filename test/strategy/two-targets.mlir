// RUN: sed 's/TARGET/#mha.target<cpu = "", features = ["avx2", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 4>/' %s \
// RUN:   | mha-opt --mha-set-target=cpu=sapphirerapids --mha-strategy | FileCheck %s --check-prefix=AVX2
// RUN: sed 's/TARGET/#mha.target<cpu = "", features = ["avx2", "fma", "avx512f", "avx512bf16", "amx-tile", "amx-bf16"], vector_bits = 512, vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 0, cores = 56>/' %s \
// RUN:   | mha-opt --mha-strategy | FileCheck %s --check-prefix=AVX512
// RUN: sed 's/TARGET/#mha.target<cpu = "", features = ["avx2", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 4>/' %s \
// RUN:   | mha-opt --mha-strategy="register-rows=3 projection-row-tile=16 query-tile=32" | FileCheck %s --check-prefix=OPTIONS

// One graph, two machines pinned in the module (mha.target): mha-strategy
// reads the module's target, never the machine it runs on, and a target
// already there is kept (mha-set-target adds none). The sizes below are
// worked out by hand from the rule (Strategy.h, docs/pipeline.md).
//
// AVX2, 16 ymm of 8 lanes, 32 KiB L1, 256 KiB L2: 2 column registers (16
// columns) and (16 - 2 - 2) / 2 = 6 rows; 12 accumulators, so 2 steps per
// iteration for 16 FMAs; rows of at most 8 registers (64); projection
// tiles of 8 x 6 = 48 rows and 16 columns (a [1024, c] f32 panel in a
// quarter of 256 KiB: c = 16); key blocks of 2 x 16 = 32, query tiles of
// 32768 / (32 x 4) = 256 rows, at most 128; batch chunks in the 256 KiB L2
// with 8 x 48 = 384 rows; vdpbf16ps vectors of 8 lanes; rows padded by
// a vector (8) and tail key blocks of a vector (8); no AVX512_BF16, so
// the bf16 projections stay f32.
// AVX2: module attributes {mha.target = #mha.target<cpu = "", features = ["avx2", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 4>}
// AVX2: func.func @layer({{.*}}) -> tensor<1x2x256x64xf32> attributes {mha.codegen = #mha.codegen_sizes<lanes = 8, register_rows = 6, register_cols = 16, register_unroll = 2, max_vector_length = 64, projection_rows = 48, projection_cols = 16, chunk_bytes = 262144, chunk_rows = 384, amx_rows = 64, amx_k_chunk = 16, l1_bytes = 32768, bf16_lanes = 8, stack_bytes = 131072, outline_steps = 256, query_tile = 128, row_padding = 8, tail_keys = 8, bf16_path = "f32">}
// AVX2: mha.sdpa {{.*}} {mha.tiles = #mha.attention_tiles<query_tile = 128, key_tile = 32, key_splits = 1>}
//
// AVX-512 with AMX, 32 zmm of 16 lanes, 48 KiB L1, 2 MiB L2: 4 column
// registers (64 columns), (32 - 4 - 2) / 4 = 6 rows, 24 accumulators and 2
// steps; rows of at most 16 registers (256); projection tiles of 48 rows
// and 128 columns (2 MiB / 4 / 4096 = 128, within 64 to 4 x 64); key
// blocks of 128, query tiles of 49152 / 512 = 96 rows, down to 64;
// batch chunks in 2 MiB; vdpbf16ps vectors of 16 lanes; padding and tail
// key blocks of 16; AMX-BF16, so the bf16 projections take AMX.
// AVX512: func.func @layer({{.*}}) -> tensor<1x2x256x64xf32> attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128, chunk_bytes = 2097152, chunk_rows = 384, amx_rows = 64, amx_k_chunk = 16, l1_bytes = 49152, bf16_lanes = 16, stack_bytes = 131072, outline_steps = 256, query_tile = 64, row_padding = 16, tail_keys = 16, bf16_path = "amx">}
// AVX512: mha.sdpa {{.*}} {mha.tiles = #mha.attention_tiles<query_tile = 64, key_tile = 128, key_splits = 1>}
//
// Options set by hand take the place of their sizes; the rest stay the
// target's (AVX2 above), and a batch chunk has 8 projection row tiles
// (8 x 16).
// OPTIONS: mha.codegen = #mha.codegen_sizes<lanes = 8, register_rows = 3, register_cols = 16, register_unroll = 2, max_vector_length = 64, projection_rows = 16, projection_cols = 16, chunk_bytes = 262144, chunk_rows = 128, {{.*}}, query_tile = 32, {{.*}}>
// OPTIONS: mha.tiles = #mha.attention_tiles<query_tile = 32, key_tile = 32, key_splits = 1>
module attributes {mha.target = TARGET} {
  func.func @layer(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
    %o = mha.sdpa %q, %k, %v : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
    return %o : tensor<1x2x256x64xf32>
  }
}
