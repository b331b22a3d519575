// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg | FileCheck %s

// mha.attention_weights lowers to the softmax of mha.sdpa's lowering, with
// the weights themselves, not weights times values, divided by the row sums.

// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[ROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[PERROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @weights_gqa
//  CHECK-SAME:   (%[[QA:.+]]: tensor<2x4x5x4xf32>, %[[KA:.+]]: tensor<2x2x6x4xf32>)
// The scale 1/sqrt(4) times log2(e): the softmax takes exp2.
//   CHECK-DAG:   %[[SCALE:.+]] = arith.constant 0.72134751 : f32
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//   CHECK-DAG:   %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// Scores: query head h reads key head h floordiv 2.
//       CHECK:   %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #{{.+}}]
//  CHECK-SAME:     ins(%[[QA]], %[[KA]] : tensor<2x4x5x4xf32>, tensor<2x2x6x4xf32>) outs(%{{.+}} : tensor<2x4x5x6xf32>)
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[SCORES]] : tensor<2x4x5x6xf32>) outs(%{{.+}} : tensor<2x4x5xf32>)
//       CHECK:     arith.maxnumf
//       CHECK:   %[[EXP:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[MAX]] : tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
//       CHECK:     arith.subf
//       CHECK:     arith.mulf %{{.+}}, %[[SCALE]] : f32
//       CHECK:     math.exp2
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[EXP]] : tensor<2x4x5x6xf32>) outs(%{{.+}} : tensor<2x4x5xf32>)
//       CHECK:     arith.addf
// No contraction with values: the next op inverts the sums.
//   CHECK-NOT:   iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
//       CHECK:   %[[INV:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2x4x5xf32>)
//       CHECK:     %[[POS:.+]] = arith.cmpf ogt, %[[L:.+]], %[[ZERO]] : f32
//       CHECK:     %[[RCP:.+]] = arith.divf %[[ONE]], %[[L]] : f32
//       CHECK:     arith.select %[[POS]], %[[RCP]], %[[ZERO]] : f32
//       CHECK:   %[[P:.+]] = linalg.generic {indexing_maps = [#[[ROW4]], #[[PERROW4]], #[[ROW4]]]
//  CHECK-SAME:     ins(%[[EXP]], %[[INV]] : tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) outs(%{{.+}} : tensor<2x4x5x6xf32>)
//       CHECK:     arith.mulf
//       CHECK:   return %[[P]] : tensor<2x4x5x6xf32>
func.func @weights_gqa(%q: tensor<2x4x5x4xf32>, %k: tensor<2x2x6x4xf32>) -> tensor<2x4x5x6xf32> {
  %p = mha.attention_weights %q, %k : (tensor<2x4x5x4xf32>, tensor<2x2x6x4xf32>) -> tensor<2x4x5x6xf32>
  return %p : tensor<2x4x5x6xf32>
}

// -----

// Masked and causal with dynamic sizes: disallowed keys get exactly 0 in the
// exponentials, S comes from the key, and the result is cast to the more
// static declared type.
// CHECK-LABEL: func.func @weights_masked_causal
//  CHECK-SAME:   (%[[QA:.+]]: tensor<?x2x?x4xf32>, %[[KA:.+]]: tensor<?x2x?x4xf32>, %[[M:.+]]: tensor<1x?x?xi1>)
//   CHECK-NOT:   mha.
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[M]] : tensor<?x2x?x?xf32>, tensor<1x?x?xi1>)
//       CHECK:     arith.cmpi ule
//       CHECK:     arith.andi
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[M]] : tensor<?x2x?x?xf32>, tensor<?x2x?xf32>, tensor<1x?x?xi1>)
//       CHECK:     %[[E:.+]] = math.exp2
//       CHECK:     %[[ALLOWED:.+]] = arith.andi
//       CHECK:     arith.select %[[ALLOWED]], %[[E]], %{{.+}} : f32
//       CHECK:   %[[P:.+]] = linalg.generic {{.+}} ins(%{{[^,]+}}, %{{[^,]+}} : tensor<?x2x?x?xf32>, tensor<?x2x?xf32>)
//       CHECK:   %[[C:.+]] = tensor.cast %[[P]] : tensor<?x2x?x?xf32> to tensor<3x2x?x?xf32>
//       CHECK:   return %[[C]]
func.func @weights_masked_causal(%q: tensor<?x2x?x4xf32>, %k: tensor<?x2x?x4xf32>, %m: tensor<1x?x?xi1>) -> tensor<3x2x?x?xf32> {
  %p = mha.attention_weights %q, %k mask(%m) causal
      : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<1x?x?xi1>) -> tensor<3x2x?x?xf32>
  return %p : tensor<3x2x?x?xf32>
}
