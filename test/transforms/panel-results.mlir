// RUN: mha-opt %s -split-input-file -mha-tile-projections="row-tile=16 col-tile=8" | FileCheck %s

// A projection whose result is in panels of 8 columns ([B, T, N/8, 8], as
// mha-weight-layouts reads the output projection): it accumulates into an
// expand_shape of its bias broadcast. The reshape moves onto the bias
// (compiler/codegen/PanelResults.h), and each tile starts from its slice of
// the bias in panels, computed in the tile: no broadcast fills the whole
// result before the parallel loop, whose shared output is a tensor.empty.
// CHECK-LABEL: func.func @bias_in_panels
//  CHECK-SAME:   (%{{.+}}: tensor<1x64x16xf32>, %{{.+}}: tensor<2x16x8xf32>, %[[B:.+]]: tensor<16xf32>)
//   CHECK-NOT:   linalg.broadcast
//   CHECK-DAG:   %[[PANELS:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
//   CHECK-DAG:   %[[EMPTY:.+]] = tensor.empty() : tensor<1x64x2x8xf32>
//       CHECK:   scf.forall {{.+}} shared_outs(%{{.+}} = %[[EMPTY]])
//       CHECK:     tensor.extract_slice %[[PANELS]]
//       CHECK:     linalg.generic {{.+}} ins(%{{.+}} : tensor<8xf32>) outs(%{{.+}} : tensor<16x8xf32>)
//       CHECK:     linalg.matmul
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4, d3)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @bias_in_panels(%x: tensor<1x64x16xf32>, %w: tensor<2x16x8xf32>, %b: tensor<16xf32>) -> tensor<1x64x16xf32> {
  %empty = tensor.empty() : tensor<1x64x16xf32>
  %bias = linalg.broadcast ins(%b : tensor<16xf32>) outs(%empty : tensor<1x64x16xf32>) dimensions = [0, 1]
  %init = tensor.expand_shape %bias [[0], [1], [2, 3]] output_shape [1, 64, 2, 8] : tensor<1x64x16xf32> into tensor<1x64x2x8xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x64x16xf32>, tensor<2x16x8xf32>) outs(%init : tensor<1x64x2x8xf32>) attrs = {mha.projection} {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x64x2x8xf32>
  %r = tensor.collapse_shape %y [[0], [1], [2, 3]] : tensor<1x64x2x8xf32> into tensor<1x64x16xf32>
  return %r : tensor<1x64x16xf32>
}

// -----

// A chunk of the batch (mha-batch-chunks) inserts its result, collapsed
// from panels, into the layer's: the insert goes into the layer's result in
// panels instead (an expand_shape at the start of the loop's body), and the
// collapse follows it, so that eliminate-empty-tensors can make the chunk's
// tensor.empty a slice of the layer's result.
// CHECK-LABEL: func.func @chunk_result
//       CHECK:   scf.for %[[I:.+]] = {{.+}} iter_args(%[[ALL:.+]] = %{{.+}}) -> (tensor<?x64x16xf32>)
//  CHECK-NEXT:     %[[N:.+]] = tensor.dim %[[ALL]], %{{.+}} : tensor<?x64x16xf32>
//  CHECK-NEXT:     %[[ALLP:.+]] = tensor.expand_shape %[[ALL]] {{\[}}[0], [1], [2, 3]] output_shape [%[[N]], 64, 2, 8] : tensor<?x64x16xf32> into tensor<?x64x2x8xf32>
//       CHECK:     %[[IN:.+]] = tensor.insert_slice %{{.+}} into %[[ALLP]][%[[I]], 0, 0, 0] [1, 64, 2, 8] [1, 1, 1, 1] : tensor<1x64x2x8xf32> into tensor<?x64x2x8xf32>
//       CHECK:     %[[BACK:.+]] = tensor.collapse_shape %[[IN]] {{\[}}[0], [1], [2, 3]] : tensor<?x64x2x8xf32> into tensor<?x64x16xf32>
//       CHECK:     scf.yield %[[BACK]]
func.func @chunk_result(%chunk: tensor<1x64x2x8xf32>, %all: tensor<?x64x16xf32>, %n: index) -> tensor<?x64x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %all) -> (tensor<?x64x16xf32>) {
    %flat = tensor.collapse_shape %chunk [[0], [1], [2, 3]] : tensor<1x64x2x8xf32> into tensor<1x64x16xf32>
    %next = tensor.insert_slice %flat into %acc[%i, 0, 0] [1, 64, 16] [1, 1, 1] : tensor<1x64x16xf32> into tensor<?x64x16xf32>
    scf.yield %next : tensor<?x64x16xf32>
  }
  return %r : tensor<?x64x16xf32>
}

// -----

// An insert that covers only part of a merged dimension (8 of its 16
// columns) has no slice in panels of 8 × 2: it stays as it is.
// CHECK-LABEL: func.func @part_of_a_panel_row
//       CHECK:   %[[FLAT:.+]] = tensor.collapse_shape
//       CHECK:   tensor.insert_slice %[[FLAT]] into %{{.+}}[0, 0, 8] [1, 64, 8] [1, 1, 1]
//   CHECK-NOT:   tensor.expand_shape
func.func @part_of_a_panel_row(%half: tensor<1x64x2x4xf32>, %all: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
  %flat = tensor.collapse_shape %half [[0], [1], [2, 3]] : tensor<1x64x2x4xf32> into tensor<1x64x8xf32>
  %r = tensor.insert_slice %flat into %all[0, 0, 8] [1, 64, 8] [1, 1, 1] : tensor<1x64x8xf32> into tensor<1x64x16xf32>
  return %r : tensor<1x64x16xf32>
}
