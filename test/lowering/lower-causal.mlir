// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg | FileCheck %s

// The decomposed lowering of causal(bottom_right): key s is allowed for
// query t when s <= t + (S - T), compared signed (S - T may be negative),
// in the row maximum and in the exponentials alike. Top-left `causal` keeps
// its unsigned s <= t (lower-to-linalg.mlir).

// S - T = 2, a constant with static sizes.
// CHECK-LABEL: func.func @sdpa_bottom_right(
//       CHECK:   %[[OFFSET:.+]] = arith.constant 2 : index
//       CHECK:   linalg.generic
//       CHECK:     %[[T:.+]] = linalg.index 2 : index
//       CHECK:     %[[S:.+]] = linalg.index 3 : index
//       CHECK:     %[[DIAG:.+]] = arith.addi %[[T]], %[[OFFSET]] : index
//       CHECK:     arith.cmpi sle, %[[S]], %[[DIAG]] : index
//       CHECK:     arith.maxnumf
//       CHECK:   linalg.generic
//       CHECK:     math.exp2
//       CHECK:     %[[T2:.+]] = linalg.index 2 : index
//       CHECK:     %[[S2:.+]] = linalg.index 3 : index
//       CHECK:     %[[DIAG2:.+]] = arith.addi %[[T2]], %[[OFFSET]] : index
//       CHECK:     arith.cmpi sle, %[[S2]], %[[DIAG2]] : index
func.func @sdpa_bottom_right(%q: tensor<1x1x3x8xf32>, %k: tensor<1x1x5x8xf32>, %v: tensor<1x1x5x8xf32>) -> tensor<1x1x3x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<1x1x3x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>) -> tensor<1x1x3x8xf32>
  return %o : tensor<1x1x3x8xf32>
}

// -----

// With `?` sizes the offset is S - T from tensor.dim; attention_weights
// shares the builder.
// CHECK-LABEL: func.func @weights_bottom_right_dynamic(
//  CHECK-SAME:     %[[Q:[^:]+]]: tensor<1x1x?x8xf32>, %[[K:[^:]+]]: tensor<1x1x?x8xf32>
//   CHECK-DAG:   %[[T:.+]] = tensor.dim %[[Q]], %c2{{(_[0-9]+)?}} : tensor<1x1x?x8xf32>
//   CHECK-DAG:   %[[S:.+]] = tensor.dim %[[K]], %c2{{(_[0-9]+)?}} : tensor<1x1x?x8xf32>
//       CHECK:   %[[OFFSET:.+]] = arith.subi %[[S]], %[[T]] : index
//       CHECK:     %[[DIAG:.+]] = arith.addi %{{.+}}, %[[OFFSET]] : index
//       CHECK:     arith.cmpi sle, %{{.+}}, %[[DIAG]] : index
func.func @weights_bottom_right_dynamic(%q: tensor<1x1x?x8xf32>, %k: tensor<1x1x?x8xf32>) -> tensor<1x1x?x?xf32> {
  %p = mha.attention_weights %q, %k causal(bottom_right) : (tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x1x?x?xf32>
  return %p : tensor<1x1x?x?xf32>
}
