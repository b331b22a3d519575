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
// constant, cosines and sines of [T, R/2] from the positions in one generic
// (the angle reduced to [-pi/4, pi/4] in f64, polynomials, no libm call),
// then one scf.forall iteration per row of [B*H] heads: a 2-D generic over
// [T, R/2] that reads the head's features 0..3 (member 0) and 4..7
// (member 1) and writes both members.
// CHECK-LABEL: func.func @rope_half
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x5x8xf32>)
// CHECK: %[[F:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[F]] : tensor<4xf64>) outs(%{{.+}}, %{{.+}} : tensor<5x4xf32>, tensor<5x4xf32>)
// CHECK: linalg.index 0
// CHECK: math.floor
// CHECK-NOT: math.cos
// CHECK-NOT: math.sin
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2], [3]] : tensor<1x2x5x8xf32> into tensor<2x5x8xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[I:.+]]) in (2) shared_outs(%[[ACC:.+]] = %{{.+}}) -> (tensor<2x5x8xf32>)
// CHECK: %[[HEAD:.+]] = tensor.extract_slice %[[ROWS]][%[[I]], 0, 0] [1, 5, 8] [1, 1, 1] : tensor<2x5x8xf32> to tensor<5x8xf32>
// CHECK: %[[OUT:.+]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0] [1, 5, 8] [1, 1, 1]
// CHECK: %[[O0:.+]] = tensor.extract_slice %[[OUT]][0, 0] [5, 4] [1, 1]
// CHECK: %[[O1:.+]] = tensor.extract_slice %[[OUT]][0, 4] [5, 4] [1, 1]
// CHECK: %[[A:.+]] = tensor.extract_slice %[[HEAD]][0, 0] [5, 4] [1, 1]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[HEAD]][0, 4] [5, 4] [1, 1]
// CHECK: %[[G:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]], %[[T]]#0, %[[T]]#1 : {{.+}}) outs(%[[O0]], %[[O1]] : tensor<5x4xf32>, tensor<5x4xf32>)
// CHECK: %[[Y0:.+]] = tensor.insert_slice %[[G]]#0 into %[[OUT]][0, 0] [5, 4] [1, 1]
// CHECK: %[[Y1:.+]] = tensor.insert_slice %[[G]]#1 into %[[Y0]][0, 4] [5, 4] [1, 1]
// CHECK: tensor.parallel_insert_slice %[[Y1]] into %[[ACC]][%[[I]], 0, 0] [1, 5, 8] [1, 1, 1]
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 5, 8] : tensor<2x5x8xf32> into tensor<1x2x5x8xf32>
// CHECK-NOT: mha.rope
func.func @rope_half(%x: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %y = mha.rope %x layout("half") rotary_dim(8) base(1.0e4) scale(1.0) mscale(1.0)
      : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %y : tensor<1x2x5x8xf32>
}

// -----

// Interleaved pairs (2i, 2i + 1) of the first 4 of 8 features, the
// frequencies and offsets given: tables of [B, T, R/2], one scf.forall
// iteration per row of [B*H], whose generic reads the tables of its
// sequence (row / H) and the members through stride-2 slices; the input's
// last 4 features are copied into the result (not written into the input,
// which may be the caller's buffer).
// CHECK-LABEL: func.func @rope_interleaved
// CHECK-SAME: (%[[X:.+]]: tensor<?x2x?x8xf32>, %[[L:.+]]: tensor<?xi64>, %[[F:.+]]: tensor<2xf32>)
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[F]], %[[L]] : tensor<2xf32>, tensor<?xi64>) outs(%{{.+}}, %{{.+}} : tensor<?x?x2xf32>, tensor<?x?x2xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2], [3]] : tensor<?x2x?x8xf32> into tensor<?x?x8xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[I:.+]]) in (%{{.+}}) shared_outs(%[[ACC:.+]] = %{{.+}}) -> (tensor<?x?x8xf32>)
// CHECK: %[[HEAD:.+]] = tensor.extract_slice %[[ROWS]][%[[I]], 0, 0]
// CHECK: %[[OUT:.+]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0]
// CHECK: %[[SEQ:.+]] = arith.divui %[[I]], %{{.+}} : index
// CHECK: %[[COS:.+]] = tensor.extract_slice %[[T]]#0[%[[SEQ]], 0, 0] [1, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x2xf32> to tensor<?x2xf32>
// CHECK: %[[SIN:.+]] = tensor.extract_slice %[[T]]#1[%[[SEQ]], 0, 0] [1, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x2xf32> to tensor<?x2xf32>
// CHECK: %[[O0:.+]] = tensor.extract_slice %[[OUT]][0, 0] [%{{.+}}, 2] [1, 2]
// CHECK: %[[O1:.+]] = tensor.extract_slice %[[OUT]][0, 1] [%{{.+}}, 2] [1, 2]
// CHECK: %[[A:.+]] = tensor.extract_slice %[[HEAD]][0, 0] [%{{.+}}, 2] [1, 2]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[HEAD]][0, 1] [%{{.+}}, 2] [1, 2]
// CHECK: %[[G:.+]]:2 = linalg.generic {{.+}} ins(%[[A]], %[[B]], %[[COS]], %[[SIN]] : {{.+}}) outs(%[[O0]], %[[O1]] : {{.+}})
// CHECK: %[[Y0:.+]] = tensor.insert_slice %[[G]]#0 into %[[OUT]][0, 0] [%{{.+}}, 2] [1, 2]
// CHECK: %[[Y1:.+]] = tensor.insert_slice %[[G]]#1 into %[[Y0]][0, 1] [%{{.+}}, 2] [1, 2]
// CHECK: %[[PASS:.+]] = tensor.extract_slice %[[HEAD]][0, 4] [%{{.+}}, 4] [1, 1]
// CHECK: %[[Y2:.+]] = tensor.insert_slice %[[PASS]] into %[[Y1]][0, 4] [%{{.+}}, 4] [1, 1]
// CHECK: tensor.parallel_insert_slice %[[Y2]] into %[[ACC]][%[[I]], 0, 0]
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1], [2], [3]]
// CHECK-NOT: mha.rope
func.func @rope_interleaved(%x: tensor<?x2x?x8xf32>, %len: tensor<?xi64>, %f: tensor<2xf32>) -> tensor<?x2x?x8xf32> {
  %y = mha.rope %x offsets(%len) inv_freq(%f) layout("interleaved") rotary_dim(4)
      base(1.0e4) scale(1.0) mscale(1.0)
      : (tensor<?x2x?x8xf32>, tensor<?xi64>, tensor<2xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}
