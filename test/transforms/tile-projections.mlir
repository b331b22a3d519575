// RUN: mha-opt %s -split-input-file -mha-tile-projections="row-tile=16 col-tile=0" | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-tile-projections="row-tile=16 col-tile=8" | FileCheck %s --check-prefix=COLS
// RUN: %expect-exit 2 mha-opt %s -split-input-file -mha-tile-projections="row-tile=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: mha-tile-projections: row-tile must be between 0 and 4096, got -1

// A projection that writes heads: one tile per (head, 16 rows, batch), the
// batch innermost so that the tiles of one head's weights follow each other
// on one thread (which then reads them once). The
// bias broadcast is computed per tile, and the tile, rid of its unit
// dimensions, is a linalg.matmul of 16 rows of x by the head's columns.
// The broadcast loses the same unit dimensions first (a generic): the
// matmul's accumulator is its result, read by the matmul alone, which
// mha-vectorize fuses into the register blocks.
// The reduction over the input width (16) is never tiled.
// CHECK-LABEL: func.func @project_writes_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64x16xf32>, %[[W:.+]]: tensor<16x12xf32>, %[[B:.+]]: tensor<12xf32>)
//       CHECK:   %[[W3:.+]] = tensor.expand_shape %[[W]]
//       CHECK:   %[[B2:.+]] = tensor.expand_shape %[[B]]
//       CHECK:   %[[Y:.+]] = scf.forall (%[[H:.+]], %[[T:.+]], %[[I:.+]]) = (0, 0, 0) to (3, 64, 2) step (1, 16, 1) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<2x3x64x4xf32>)
//   CHECK-DAG:     tensor.extract_slice %[[X]][%[[I]], %[[T]], 0] [1, 16, 16] [1, 1, 1] : tensor<2x64x16xf32> to tensor<1x16x16xf32>
//   CHECK-DAG:     tensor.extract_slice %[[W3]][0, %[[H]], 0] [16, 1, 4] [1, 1, 1] : tensor<16x3x4xf32> to tensor<16x1x4xf32>
//   CHECK-DAG:     %[[BT:.+]] = tensor.extract_slice %[[B2]][%[[H]], 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
//   CHECK-DAG:     %[[OT:.+]] = tensor.extract_slice %[[OUT]][%[[I]], %[[H]], %[[T]], 0] [1, 1, 16, 4] [1, 1, 1, 1]
//       CHECK:     %[[B1:.+]] = tensor.extract_slice %[[BT]][0, 0] [1, 4] [1, 1] : tensor<1x4xf32> to tensor<4xf32>
//       CHECK:     %[[O2:.+]] = tensor.extract_slice %[[OT]][0, 0, 0, 0] [1, 1, 16, 4] [1, 1, 1, 1] : tensor<1x1x16x4xf32> to tensor<16x4xf32>
//       CHECK:     %[[INIT:.+]] = linalg.generic {{.+}} ins(%[[B1]] : tensor<4xf32>) outs(%[[O2]] : tensor<16x4xf32>)
//       CHECK:     %[[XT:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [1, 16, 16] [1, 1, 1] : tensor<1x16x16xf32> to tensor<16x16xf32>
//       CHECK:     %[[WT:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [16, 1, 4] [1, 1, 1] : tensor<16x1x4xf32> to tensor<16x4xf32>
//       CHECK:     %[[MM:.+]] = linalg.matmul ins(%[[XT]], %[[WT]] : tensor<16x16xf32>, tensor<16x4xf32>) outs(%[[INIT]] : tensor<16x4xf32>)
//       CHECK:     %[[TILE:.+]] = tensor.insert_slice %[[MM]] into %[[OT]][0, 0, 0, 0] [1, 1, 16, 4]
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[TILE]] into %[[OUT]][%[[I]], %[[H]], %[[T]], 0] [1, 1, 16, 4]
//       CHECK:   return %[[Y]]
// The columns (4 per head) are fewer than col-tile=8: not tiled.
// COLS-LABEL: func.func @project_writes_heads
//       COLS:   scf.forall (%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}) = (0, 0, 0) to (3, 64, 2) step (1, 16, 1) shared_outs
//       COLS:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<16x16xf32>, tensor<16x4xf32>)
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d4, d1, d3)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @project_writes_heads(%x: tensor<2x64x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>) -> tensor<2x3x64x4xf32> {
  %w3 = tensor.expand_shape %w [[0], [1, 2]] output_shape [16, 3, 4] : tensor<16x12xf32> into tensor<16x3x4xf32>
  %b2 = tensor.expand_shape %b [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  %empty = tensor.empty() : tensor<2x3x64x4xf32>
  %init = linalg.broadcast ins(%b2 : tensor<3x4xf32>) outs(%empty : tensor<2x3x64x4xf32>) dimensions = [0, 2]
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w3 : tensor<2x64x16xf32>, tensor<16x3x4xf32>) outs(%init : tensor<2x3x64x4xf32>) attrs = {mha.projection} {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x64x4xf32>
  return %y : tensor<2x3x64x4xf32>
}

// -----

// A projection over rows [B·T, D] (dynamic): tiles of 16 rows (the last one
// may be shorter) times all columns; with col-tile=8 also 8 columns, the
// column tiles outermost (each thread's contiguous range of tiles is then
// whole columns of row tiles).
// CHECK-LABEL: func.func @project_rows
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x16xf32>, %[[W:.+]]: tensor<16x12xf32>, %[[B:.+]]: tensor<12xf32>)
//       CHECK:   scf.forall (%[[R:.+]]) = (0) to (%{{.+}}) step (16)
//       CHECK:     %[[N:.+]] = affine.min
//       CHECK:     %[[XT:.+]] = tensor.extract_slice %[[X]][%[[R]], 0] [%[[N]], 16] [1, 1]
//       CHECK:     %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<12xf32>) outs(%{{.+}} : tensor<?x12xf32>)
//       CHECK:     linalg.matmul ins(%[[XT]], %[[W]] : tensor<?x16xf32>, tensor<16x12xf32>) outs(%[[INIT]] : tensor<?x12xf32>)
//   CHECK-NOT:   mha.projection
// COLS-LABEL: func.func @project_rows
//       COLS:   scf.forall (%[[C:.+]], %{{.+}}) = (0, 0) to (12, %{{.+}}) step (8, 16)
//       COLS:     linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x16xf32>, tensor<16x?xf32>) outs(%{{.+}} : tensor<?x?xf32>)
func.func @project_rows(%x: tensor<?x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>) -> tensor<?x12xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x16xf32>
  %empty = tensor.empty(%rows) : tensor<?x12xf32>
  %init = linalg.broadcast ins(%b : tensor<12xf32>) outs(%empty : tensor<?x12xf32>) dimensions = [0]
  %y = linalg.matmul {mha.projection} ins(%x, %w : tensor<?x16xf32>, tensor<16x12xf32>) outs(%init : tensor<?x12xf32>) -> tensor<?x12xf32>
  return %y : tensor<?x12xf32>
}

// -----

// The output projection of the heads: one tile per (16 tokens, batch), the
// batch innermost for the same reason; the
// tile sums over heads and value columns in that order, which is what
// linalg.batch_reduce_matmul does. Its zero fill, without the unit batch
// dimension (a generic), is the accumulator it alone reads.
// CHECK-LABEL: func.func @output_project_heads
//  CHECK-SAME:   (%[[O:.+]]: tensor<?x3x?x4xf32>, %[[W:.+]]: tensor<12x16xf32>)
//       CHECK:   %[[W3:.+]] = tensor.expand_shape %[[W]]
//       CHECK:   scf.forall (%[[T:.+]], %[[I:.+]]) = (0, 0) to (%{{.+}}, %{{.+}}) step (16, 1)
//       CHECK:     %[[N:.+]] = affine.min
//       CHECK:     %[[OT4:.+]] = tensor.extract_slice %[[O]][%[[I]], 0, %[[T]], 0] [1, 3, %[[N]], 4] [1, 1, 1, 1] : tensor<?x3x?x4xf32> to tensor<1x3x?x4xf32>
//       CHECK:     %[[ZERO:.+]] = linalg.generic {{.+}} ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x16xf32>)
//       CHECK:     %[[OT:.+]] = tensor.extract_slice %[[OT4]][0, 0, 0, 0] [1, 3, %[[N]], 4] [1, 1, 1, 1] : tensor<1x3x?x4xf32> to tensor<3x?x4xf32>
//       CHECK:     linalg.batch_reduce_matmul ins(%[[OT]], %[[W3]] : tensor<3x?x4xf32>, tensor<3x4x16xf32>) outs(%{{.+}} : tensor<?x16xf32>)
// COLS-LABEL: func.func @output_project_heads
//       COLS:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (16, %{{.+}}, %{{.+}}) step (8, 16, 1)
//       COLS:     linalg.batch_reduce_matmul ins(%{{.+}}, %{{.+}} : tensor<3x?x4xf32>, tensor<3x4x8xf32>) outs(%{{.+}} : tensor<?x8xf32>)
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#wo = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
#yo = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func @output_project_heads(%o: tensor<?x3x?x4xf32>, %w: tensor<12x16xf32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %w3 = tensor.expand_shape %w [[0, 1], [2]] output_shape [3, 4, 16] : tensor<12x16xf32> into tensor<3x4x16xf32>
  %batch = tensor.dim %o, %c0 : tensor<?x3x?x4xf32>
  %tokens = tensor.dim %o, %c2 : tensor<?x3x?x4xf32>
  %empty = tensor.empty(%batch, %tokens) : tensor<?x?x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %y = linalg.generic {indexing_maps = [#o, #wo, #yo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %w3 : tensor<?x3x?x4xf32>, tensor<3x4x16xf32>) outs(%init : tensor<?x?x16xf32>) attrs = {mha.projection} {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// Without the mark a contraction is not a projection (attention's own
// contractions are left to the attention passes).
// CHECK-LABEL: func.func @negative_unmarked_matmul
//   CHECK-NOT:   scf.forall
//       CHECK:   linalg.matmul ins
// COLS-LABEL: func.func @negative_unmarked_matmul
//   COLS-NOT:   scf.forall
func.func @negative_unmarked_matmul(%a: tensor<64x16xf32>, %b: tensor<16x8xf32>, %c: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<64x16xf32>, tensor<16x8xf32>) outs(%c : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %y : tensor<64x8xf32>
}

// -----

// A marked op on buffers is not tiled (the pass runs on tensors).
// CHECK-LABEL: func.func @negative_buffers
//   CHECK-NOT:   scf.forall
//       CHECK:   linalg.matmul {mha.projection}
func.func @negative_buffers(%a: memref<64x16xf32>, %b: memref<16x8xf32>, %c: memref<64x8xf32>) {
  linalg.matmul {mha.projection} ins(%a, %b : memref<64x16xf32>, memref<16x8xf32>) outs(%c : memref<64x8xf32>)
  return
}

// -----

// A projection smaller than one tile in every tiled dimension (8 rows < 16,
// 4 columns < 8) stays one op: a loop of one iteration would only cost.
// CHECK-LABEL: func.func @negative_smaller_than_a_tile
//   CHECK-NOT:   scf.forall
//       CHECK:   linalg.matmul {mha.projection}
// COLS-LABEL: func.func @negative_smaller_than_a_tile
//   COLS-NOT:   scf.forall
//       COLS:   linalg.matmul {mha.projection}
func.func @negative_smaller_than_a_tile(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = linalg.matmul {mha.projection} ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// The output projection of heads of width 1: once the unit dimensions are
// dropped, the tile reads the heads transposed ([H, T] against W_O [H, N]).
// LLVM 22 would "specialize" that to a plain linalg.matmul without the
// transpose (a wrong result); the tile stays a generic that keeps its maps.
// CHECK-LABEL: func.func @negative_transposed_tile_stays_generic
//   CHECK-NOT:   linalg.matmul
//       CHECK:   linalg.generic {indexing_maps = [#[[HEADS:.+]], #[[WO:.+]], #[[OUT:.+]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>)
//   CHECK-NOT:   linalg.matmul
// COLS-LABEL: func.func @negative_transposed_tile_stays_generic
//   COLS-NOT:   linalg.matmul
#heads = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#wo = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func @negative_transposed_tile_stays_generic(%heads: tensor<1x4x4x1xf32>, %wo: tensor<4x1x4xf32>, %init: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %y = linalg.generic {indexing_maps = [#heads, #wo, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%heads, %wo : tensor<1x4x4x1xf32>, tensor<4x1x4xf32>) outs(%init : tensor<1x4x4xf32>) attrs = {mha.projection} {
  ^bb0(%h: f32, %w: f32, %acc: f32):
    %p = arith.mulf %h, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}
