// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg | FileCheck %s

// RMSNorm on the rows of the heads flattened to [B·H·T, d]: the sum of
// squares of each row (a reduction), 1 / sqrt(mean + eps) of each row, then
// each element times it and the weight.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x2x?x8xf32>, %[[W:.+]]: tensor<8xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<?x2x?x8xf32> into tensor<?x8xf32>
// CHECK: %[[SUMS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<?x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[INV:.+]] = linalg.generic {{.+}} ins(%[[SUMS]] : tensor<?xf32>)
// CHECK: math.rsqrt
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[INV]], %[[W]] : tensor<?x8xf32>, tensor<?xf32>, tensor<8xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1, 2], [3]]
// CHECK-NOT: mha.rms_norm
func.func @rms_norm(%x: tensor<?x2x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x2x?x8xf32> {
  %y = mha.rms_norm %x, %w eps(1.0e-6) : (tensor<?x2x?x8xf32>, tensor<8xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}

// -----

// Half layout on all 8 features: the frequencies base^(-2i/R) folded into a
// constant, cosines and sines of [T, R/2] from the positions, and one
// generic over [B, H, T, 2, R/2] that reads member c of pair i
// (feature 4c + i) and its partner (feature 4(1 − c) + i).
// CHECK-DAG: #[[MEMBER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 * 4 + d4)>
// CHECK-DAG: #[[PARTNER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, (-d3 + 1) * 4 + d4)>
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// CHECK-LABEL: func.func @rope_half
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x5x8xf32>)
// CHECK: %[[F:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>
// CHECK: %[[COS:.+]] = linalg.generic {{.+}} ins(%[[F]] : tensor<4xf64>) outs(%{{.+}} : tensor<5x4xf32>)
// CHECK: linalg.index 0
// CHECK: math.cos
// CHECK: %[[SIN:.+]] = linalg.generic {{.+}} ins(%[[F]] : tensor<4xf64>) outs(%{{.+}} : tensor<5x4xf32>)
// CHECK: math.sin
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[MEMBER]], #[[PARTNER]], #[[TABLE]], #[[TABLE]], #{{.+}}], {{.+}} ins(%[[X]], %[[X]], %[[COS]], %[[SIN]] : {{.+}}) outs(%{{.+}} : tensor<1x2x5x2x4xf32>)
// CHECK: tensor.collapse_shape %[[R]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x5x2x4xf32> into tensor<1x2x5x8xf32>
// CHECK-NOT: mha.rope
func.func @rope_half(%x: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %y = mha.rope %x layout("half") rotary_dim(8) base(1.0e4) scale(1.0) mscale(1.0)
      : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %y : tensor<1x2x5x8xf32>
}

// -----

// Interleaved pairs (2i, 2i + 1) of the first 4 of 8 features, the
// frequencies and offsets given: tables of [B, T, R/2], the rotated
// features [B, H, T, R/2, 2] and the input's last 4 written into a new
// tensor (not into the input, which may be the caller's buffer).
// CHECK-DAG: #[[MEMBER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 * 2 + d4)>
// CHECK-DAG: #[[PARTNER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 * 2 + -d4 + 1)>
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @rope_interleaved
// CHECK-SAME: (%[[X:.+]]: tensor<?x2x?x8xf32>, %[[L:.+]]: tensor<?xi64>, %[[F:.+]]: tensor<2xf32>)
// CHECK: %[[COS:.+]] = linalg.generic {{.+}} ins(%[[F]], %[[L]] : tensor<2xf32>, tensor<?xi64>) outs(%{{.+}} : tensor<?x?x2xf32>)
// CHECK: math.cos
// CHECK: %[[SIN:.+]] = linalg.generic {{.+}} ins(%[[F]], %[[L]] : tensor<2xf32>, tensor<?xi64>) outs(%{{.+}} : tensor<?x?x2xf32>)
// CHECK: math.sin
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[MEMBER]], #[[PARTNER]], #[[TABLE]], #[[TABLE]], #{{.+}}], {{.+}} ins(%[[X]], %[[X]], %[[COS]], %[[SIN]] : {{.+}}) outs(%{{.+}} : tensor<?x2x?x2x2xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[R]] {{\[}}[0], [1], [2], [3, 4]] : tensor<?x2x?x2x2xf32> into tensor<?x2x?x4xf32>
// CHECK: %[[PASS:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 4] [%{{.+}}, 2, %{{.+}}, 4] [1, 1, 1, 1]
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: %[[Y:.+]] = tensor.insert_slice %[[PASS]] into %[[E]][0, 0, 0, 4] [%{{.+}}, 2, %{{.+}}, 4] [1, 1, 1, 1]
// CHECK: tensor.insert_slice %[[C]] into %[[Y]][0, 0, 0, 0] [%{{.+}}, 2, %{{.+}}, 4] [1, 1, 1, 1]
// CHECK-NOT: mha.rope
func.func @rope_interleaved(%x: tensor<?x2x?x8xf32>, %len: tensor<?xi64>, %f: tensor<2xf32>) -> tensor<?x2x?x8xf32> {
  %y = mha.rope %x offsets(%len) inv_freq(%f) layout("interleaved") rotary_dim(4)
      base(1.0e4) scale(1.0) mscale(1.0)
      : (tensor<?x2x?x8xf32>, tensor<?xi64>, tensor<2xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}
