// RUN: mha-opt %s -split-input-file -mha-strategy="lanes=8 register-rows=4 register-cols=16 register-unroll=1 max-vector-length=64 projection-row-tile=16 projection-col-tile=0" | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-strategy | FileCheck %s --check-prefix=TARGET
// RUN: mha-opt %s -split-input-file -mha-strategy="register-rows=4 register-cols=16 register-unroll=1" -mha-vectorize | FileCheck %s --check-prefix=BLOCKS
// RUN: mha-opt %s -split-input-file -mha-strategy="projection-row-tile=16 projection-col-tile=0" -mha-tile-projections | FileCheck %s --check-prefix=TILES
// RUN: %expect-exit 2 mha-opt %s -split-input-file -mha-strategy="register-rows=65" 2>&1 | FileCheck %s --check-prefix=BAD

// mha-strategy records the code generation sizes on each function
// with a body (mha.codegen); mha-vectorize and mha-tile-projections read
// them there instead of their options (here at their defaults, 8 x 32
// blocks and 32 x 128 tiles).

// CHECK-LABEL: func.func @matmul(
//  CHECK-SAME:   mha.codegen = #mha.codegen_sizes<lanes = 8, register_rows = 4, register_cols = 16, register_unroll = 1, max_vector_length = 64, projection_rows = 16, projection_cols = 0, chunk_bytes = {{[0-9]+}}, chunk_rows = 128, amx_rows = 64, amx_k_chunk = 16, l1_bytes = {{[0-9]+}}, bf16_lanes = 8, stack_bytes = 131072, outline_steps = 256, query_tile = 64, row_padding = 8, tail_keys = 8, bf16_path = "f32">
// The options left at 0 (-1 for the projection tiles) take the target's
// sizes (Strategy.h): blocks of at most 64 x 64, vectors of 4 to 16 lanes.
// TARGET-LABEL: func.func @matmul(
//  TARGET-SAME:   mha.codegen = #mha.codegen_sizes<lanes = {{4|8|16}}, register_rows = {{[1-9]}}, register_cols = {{[0-9]+}}, register_unroll = {{[1-9]}}, max_vector_length = {{[0-9]+}}, projection_rows = {{[0-9]+}}, projection_cols = {{[0-9]+}}, {{.*}}>
// The blocks recorded, 4 x 16, not the pass's 8 x 32.
// BLOCKS-LABEL: func.func @matmul(
//       BLOCKS:   vector.contract {{.+}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Sizes a function has are kept (the passes' sizes it leaves out stay
// out); a declaration gets none.
// CHECK-LABEL: func.func @by_hand(
//  CHECK-SAME:   mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 2, register_cols = 32, register_unroll = 1, max_vector_length = 32, projection_rows = 8, projection_cols = 0>
// CHECK: func.func private @declared(tensor<4xf32>){{$}}
// The projection's tiles of 8 rows recorded, not the pass's 32.
// TILES-LABEL: func.func @by_hand(
//       TILES:   scf.forall ({{.*}}) = (0, 0) to (64, 2) step (8, 1)
func.func @by_hand(%x: tensor<2x64x16xf32>, %w: tensor<16x12xf32>, %c: tensor<2x64x12xf32>) -> tensor<2x64x12xf32> attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 2, register_cols = 32, register_unroll = 1, max_vector_length = 32, projection_rows = 8, projection_cols = 0>} {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x64x16xf32>, tensor<16x12xf32>) outs(%c : tensor<2x64x12xf32>) attrs = {mha.projection} {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x64x12xf32>
  return %y : tensor<2x64x12xf32>
}
func.func private @declared(tensor<4xf32>)

// BAD: error: mha-strategy: register-rows must be between 0 and 64, got 65
