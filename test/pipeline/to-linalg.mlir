// RUN: mha-opt %s -mha-to-linalg | FileCheck %s --implicit-check-not=mha.

// Stage 1: mha.attention is expanded, canonicalized (the output projection
// reads the heads, so they are never concatenated) and lowered to linalg on
// tensors; dynamic batch and sequence sizes stay dynamic.

//   CHECK-DAG: #[[K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
//   CHECK-DAG: #[[V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
//   CHECK-DAG: #[[HEADS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-LABEL: func.func @mha
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<16x8xf32>, %[[WV:.+]]: tensor<16x8xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>)
// The input is flattened once and shared by the three projections.
//       CHECK:   %[[ROWS:.+]] = tensor.collapse_shape %[[X]]
//       CHECK:   linalg.broadcast ins(%[[BQ]]
//       CHECK:   linalg.matmul ins(%[[ROWS]], %[[WQ]]
//       CHECK:   linalg.transpose {{.+}} permutation = [0, 2, 1, 3]
//       CHECK:   linalg.matmul ins(%[[ROWS]], %[[WK]]
//       CHECK:   linalg.transpose {{.+}} permutation = [0, 2, 1, 3]
//       CHECK:   linalg.matmul ins(%[[ROWS]], %[[WV]]
//       CHECK:   linalg.transpose {{.+}} permutation = [0, 2, 1, 3]
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[K]], #{{.+}}]
//       CHECK:     linalg.index 2
//       CHECK:     math.exp
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[V]], #{{.+}}]
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[WO3:.+]] = tensor.expand_shape %[[WO]] {{\[}}[0, 1], [2]] output_shape [4, 4, 16]
//       CHECK:   %[[Y:.+]] = linalg.generic {indexing_maps = [#[[HEADS]], #{{.+}}, #{{.+}}]
//  CHECK-SAME:     ins(%{{.+}}, %[[WO3]] : tensor<?x4x?x4xf32>, tensor<4x4x16xf32>)
//       CHECK:   return %[[Y]] : tensor<?x?x16xf32>
func.func @mha(%x: tensor<?x?x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x8xf32>,
               %w_v: tensor<16x8xf32>, %w_o: tensor<16x16xf32>,
               %b_q: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q)
      heads(4) kv_heads(2) causal
      : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>,
         tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
