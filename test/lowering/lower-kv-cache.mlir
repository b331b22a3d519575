// RUN: mha-opt %s -split-input-file --mha-lower-to-linalg | FileCheck %s

// mha.cache_append: a loop over the sequences that copies each one's rows
// into the carried cache's slice at its length (a linalg.copy, which
// mha-vectorize makes whole-row vector transfers), and skips a sequence
// whose rows do not fit (length < 0 or length + T > C), so no write leaves
// the cache.

// CHECK-LABEL: func.func @append(
//  CHECK-SAME:     %[[NEW:[^:]+]]: tensor<2x2x3x8xf32>, %[[CACHE:[^:]+]]: tensor<2x2x16x8xf32>, %[[LEN:[^:]+]]: tensor<2xi64>)
//   CHECK-DAG:   %[[ROOM:.+]] = arith.subi %{{.+}}, %{{.+}} : i64
//       CHECK:   %[[LOOP:.+]] = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %[[CACHE]])
//       CHECK:     %[[L:.+]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi64>
//       CHECK:     %[[NONNEG:.+]] = arith.cmpi sge, %[[L]], %{{.+}} : i64
//       CHECK:     %[[FITS:.+]] = arith.cmpi sle, %[[L]], %[[ROOM]] : i64
//       CHECK:     %[[OK:.+]] = arith.andi %[[NONNEG]], %[[FITS]]
//       CHECK:     scf.if %[[OK]]
//       CHECK:       %[[OFF:.+]] = arith.index_cast %[[L]] : i64 to index
//       CHECK:       %[[ROWS:.+]] = tensor.extract_slice %[[NEW]][%[[B]], 0, 0, 0] [1, 2, 3, 8]
//       CHECK:       %[[AT:.+]] = tensor.extract_slice %[[C]][%[[B]], 0, %[[OFF]], 0] [1, 2, 3, 8]
//       CHECK:       %[[COPIED:.+]] = linalg.copy ins(%[[ROWS]] : tensor<1x2x3x8xf32>) outs(%[[AT]] : tensor<1x2x3x8xf32>)
//       CHECK:       tensor.insert_slice %[[COPIED]] into %[[C]][%[[B]], 0, %[[OFF]], 0] [1, 2, 3, 8]
//       CHECK:     } else {
//       CHECK:       scf.yield %[[C]]
//       CHECK:   return %[[LOOP]]
func.func @append(%k: tensor<2x2x3x8xf32>, %cache: tensor<2x2x16x8xf32>, %len: tensor<2xi64>) -> tensor<2x2x16x8xf32> {
  %kc = mha.cache_append %k into %cache at %len : tensor<2x2x3x8xf32> into tensor<2x2x16x8xf32> at tensor<2xi64>
  return %kc : tensor<2x2x16x8xf32>
}

// -----

// Dynamic batch, new rows and capacity: the room is C - T from tensor.dim.
// CHECK-LABEL: func.func @append_dynamic(
//   CHECK-DAG:   tensor.dim %{{.+}}, %c2 : tensor<?x2x?x8xf32>
//       CHECK:   scf.for
//       CHECK:     tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, %{{.+}}, 0] [1, 2, %{{.+}}, 8]
func.func @append_dynamic(%k: tensor<?x2x?x8xf32>, %cache: tensor<?x2x?x8xf32>, %len: tensor<?xi64>) -> tensor<?x2x?x8xf32> {
  %kc = mha.cache_append %k into %cache at %len : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32> at tensor<?xi64>
  return %kc : tensor<?x2x?x8xf32>
}

// -----

// sdpa with positions: the row-wise steps read positions[b] (map d0) and
// test key <= position + query; the values past a sequence's keys add
// nothing even where they are NaN (select, not 0 * v).
// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @positions(
//  CHECK-SAME:     %[[LEN:[^:]+]]: tensor<2xi64>)
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[LEN]] : tensor<2x2x3x16xf32>, tensor<2xi64>)
//       CHECK:     %[[Q:.+]] = linalg.index 2
//       CHECK:     %[[K:.+]] = linalg.index 3
//       CHECK:     %[[P:.+]] = arith.index_cast %{{.+}} : i64 to index
//       CHECK:     %[[D:.+]] = arith.addi %[[Q]], %[[P]]
//       CHECK:     arith.cmpi sle, %[[K]], %[[D]]
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[LEN]] :
//       CHECK:     arith.cmpi sle
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
//       CHECK:     %[[PROD:.+]] = arith.mulf
//       CHECK:     %[[UNUSED:.+]] = arith.cmpf oeq
//       CHECK:     arith.select %[[UNUSED]], %{{.+}}, %[[PROD]]
func.func @positions(%q: tensor<2x2x3x8xf32>, %kc: tensor<2x2x16x8xf32>, %len: tensor<2xi64>) -> tensor<2x2x3x8xf32> {
  %o = mha.sdpa %q, %kc, %kc causal positions(%len) : (tensor<2x2x3x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}
