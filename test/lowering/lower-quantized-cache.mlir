// RUN: mha-opt %s -split-input-file --mha-lower-to-linalg | FileCheck %s

// mha.cache_append_quantized: each new row's scale max|x| / 127 (a
// reduction over the row), its codes clamp(roundeven(x / scale), -127, 127)
// (0 where the scale is 0), then the loop over the sequences that every
// append shares, here carrying the codes and the scales and skipping a
// sequence without room for both.

// CHECK-LABEL: func.func @append(
//  CHECK-SAME:     %[[NEW:[^:]+]]: tensor<2x2x3x8xf32>, %[[CODES:[^:]+]]: tensor<2x2x16x8xi8>, %[[SCALES:[^:]+]]: tensor<2x2x16xf32>, %[[LEN:[^:]+]]: tensor<2xi64>)
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[NEW]] : tensor<2x2x3x8xf32>) outs(%{{.+}} : tensor<2x2x3xf32>)
//       CHECK:     math.absf
//       CHECK:     arith.maximumf
//       CHECK:   %[[S:.+]] = linalg.generic {{.*}} ins(%[[MAX]] : tensor<2x2x3xf32>)
//       CHECK:     arith.divf %{{.+}}, %{{.+}} : f32
//       CHECK:   %[[Q:.+]] = linalg.generic {{.*}} ins(%[[NEW]], %[[S]] : tensor<2x2x3x8xf32>, tensor<2x2x3xf32>) outs(%{{.+}} : tensor<2x2x3x8xi8>)
//       CHECK:     arith.cmpf oeq
//       CHECK:     arith.divf
//       CHECK:     math.roundeven
//       CHECK:     arith.minimumf
//       CHECK:     arith.maximumf
//       CHECK:     arith.select
//       CHECK:     arith.fptosi %{{.+}} : f32 to i8
//       CHECK:   %[[LOOP:.+]]:2 = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %[[CODES]], %[[SC:.+]] = %[[SCALES]])
//       CHECK:     %[[L:.+]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi64>
//       CHECK:     scf.if %{{.+}} -> (tensor<2x2x16x8xi8>, tensor<2x2x16xf32>)
//       CHECK:       %[[OFF:.+]] = arith.index_cast %[[L]] : i64 to index
//       CHECK:       tensor.extract_slice %[[Q]][%[[B]], 0, 0, 0] [1, 2, 3, 8]
//       CHECK:       tensor.extract_slice %[[C]][%[[B]], 0, %[[OFF]], 0] [1, 2, 3, 8]
//       CHECK:       linalg.copy
//       CHECK:       tensor.insert_slice %{{.+}} into %[[C]][%[[B]], 0, %[[OFF]], 0] [1, 2, 3, 8]
//       CHECK:       tensor.extract_slice %[[S]][%[[B]], 0, 0] [1, 2, 3]
//       CHECK:       tensor.extract_slice %[[SC]][%[[B]], 0, %[[OFF]]] [1, 2, 3]
//       CHECK:       linalg.copy
//       CHECK:       tensor.insert_slice %{{.+}} into %[[SC]][%[[B]], 0, %[[OFF]]] [1, 2, 3]
//       CHECK:     } else {
//       CHECK:       scf.yield %[[C]], %[[SC]]
//       CHECK:   return %[[LOOP]]#0, %[[LOOP]]#1
func.func @append(%new: tensor<2x2x3x8xf32>, %codes: tensor<2x2x16x8xi8>,
                  %scales: tensor<2x2x16xf32>, %len: tensor<2xi64>)
    -> (tensor<2x2x16x8xi8>, tensor<2x2x16xf32>) {
  %c, %s = mha.cache_append_quantized %new into %codes, %scales at %len : tensor<2x2x3x8xf32> into tensor<2x2x16x8xi8>, tensor<2x2x16xf32> at tensor<2xi64>
  return %c, %s : tensor<2x2x16x8xi8>, tensor<2x2x16xf32>
}

// -----

// mha.dequantize: code · scale, elementwise, the scale broadcast along the
// row.

// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @dequantize(
//  CHECK-SAME:     %[[CODES:[^:]+]]: tensor<?x2x16x8xi8>, %[[SCALES:[^:]+]]: tensor<?x2x16xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CODES]], %[[SCALES]] : tensor<?x2x16x8xi8>, tensor<?x2x16xf32>) outs(%{{.+}} : tensor<?x2x16x8xf32>)
//       CHECK:   ^bb0(%[[CODE:.+]]: i8, %[[SCALE:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[WIDE:.+]] = arith.sitofp %[[CODE]] : i8 to f32
//       CHECK:     %[[X:.+]] = arith.mulf %[[WIDE]], %[[SCALE]] : f32
//       CHECK:     linalg.yield %[[X]] : f32
func.func @dequantize(%codes: tensor<?x2x16x8xi8>, %scales: tensor<?x2x16xf32>)
    -> tensor<?x2x16x8xf32> {
  %k = mha.dequantize %codes, %scales : tensor<?x2x16x8xi8>, tensor<?x2x16xf32> -> tensor<?x2x16x8xf32>
  return %k : tensor<?x2x16x8xf32>
}
