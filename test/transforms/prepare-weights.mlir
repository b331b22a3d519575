// RUN: mha-opt %s -split-input-file -mha-prepare-weights -verify-diagnostics | FileCheck %s

// The packed Q|K|V weight and bias of mha-fuse-projections are computed
// once, by two functions with the layer's arguments; the layer takes them
// flat as new last arguments and reshapes the matrix back. The input x and
// w_o, read directly, stay as they are; the zeros of the missing bias go
// with the bias's concatenation.
// CHECK-LABEL: func.func @layer
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<?x?x16xf32> {mha.name = "x"}, %{{.+}}: tensor<16x16xf32> {mha.name = "w_q"}, %{{.+}}: tensor<16x8xf32> {mha.name = "w_k"}, %{{.+}}: tensor<16x8xf32> {mha.name = "w_v"}, %[[WO:[^:]+]]: tensor<16x16xf32> {mha.name = "w_o"}, %{{.+}}: tensor<16xf32> {mha.name = "b_q"},
//  CHECK-SAME:    %[[W:[^:]+]]: tensor<512xf32> {mha.name = "layer_prepare0"}, %[[B:[^:]+]]: tensor<32xf32> {mha.name = "layer_prepare1"})
//  CHECK-SAME:    attributes {mha.prepare_functions = [@layer_prepare0, @layer_prepare1]}
//   CHECK-NOT:   tensor.concat
//       CHECK:   %[[W2:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [16, 32] : tensor<512xf32> into tensor<16x32xf32>
//       CHECK:   mha.project %[[X]], %[[W2]] bias(%[[B]]) heads(8)
//       CHECK:   mha.output_project %{{.+}}, %[[WO]]
//
// CHECK-LABEL: func.func @layer_prepare0
//  CHECK-SAME:   (%{{.+}}: tensor<?x?x16xf32> {mha.name = "x"}, %[[WQ:[^:]+]]: tensor<16x16xf32> {mha.name = "w_q"}, %[[WK:[^:]+]]: tensor<16x8xf32> {mha.name = "w_k"}, %[[WV:[^:]+]]: tensor<16x8xf32> {mha.name = "w_v"}, %{{.+}}: tensor<16x16xf32> {mha.name = "w_o"}, %{{.+}}: tensor<16xf32> {mha.name = "b_q"}) -> tensor<512xf32>
//       CHECK:   %[[C:.+]] = tensor.concat dim(1) %[[WQ]], %[[WK]], %[[WV]]
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1]] : tensor<16x32xf32> into tensor<512xf32>
//       CHECK:   return %[[F]]
//
// CHECK-LABEL: func.func @layer_prepare1
//  CHECK-SAME:   %[[BQ:[^:]+]]: tensor<16xf32> {mha.name = "b_q"}) -> tensor<32xf32>
//       CHECK:   %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
//       CHECK:   %[[C:.+]] = tensor.concat dim(0) %[[BQ]], %[[ZERO]], %[[ZERO]]
//       CHECK:   return %[[C]]
func.func @layer(%x: tensor<?x?x16xf32> {mha.name = "x"}, %w_q: tensor<16x16xf32> {mha.name = "w_q"},
                 %w_k: tensor<16x8xf32> {mha.name = "w_k"}, %w_v: tensor<16x8xf32> {mha.name = "w_v"},
                 %w_o: tensor<16x16xf32> {mha.name = "w_o"}, %b_q: tensor<16xf32> {mha.name = "b_q"})
    -> tensor<?x?x16xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<8xf32>
  %w = tensor.concat dim(1) %w_q, %w_k, %w_v : (tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x32xf32>
  %b = tensor.concat dim(0) %b_q, %zero, %zero : (tensor<16xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32xf32>
  %p = mha.project %x, %w bias(%b) heads(8) : (tensor<?x?x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<?x8x?x4xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %batch = tensor.dim %p, %c0 : tensor<?x8x?x4xf32>
  %seq = tensor.dim %p, %c2 : tensor<?x8x?x4xf32>
  %q = tensor.extract_slice %p[0, 0, 0, 0] [%batch, 4, %seq, 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x4x?x4xf32>
  %k = tensor.extract_slice %p[0, 4, 0, 0] [%batch, 2, %seq, 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x2x?x4xf32>
  %v = tensor.extract_slice %p[0, 6, 0, 0] [%batch, 2, %seq, 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x2x?x4xf32>
  %o = mha.sdpa %q, %k, %v : (tensor<?x4x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x4x?x4xf32>
  %y = mha.output_project %o, %w_o : (tensor<?x4x?x4xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// An argument that is also read as data is not a weight: the concatenation
// that reads it changes from call to call and stays in the layer.
// CHECK-LABEL: func.func @not_weights
//  CHECK-SAME:   (%{{[^:]+}}: tensor<4x4xf32>, %{{[^:]+}}: tensor<4x4xf32>) -> tensor<1x4x8xf32>
//       CHECK:   tensor.concat
//   CHECK-NOT:   func.func @not_weights_prepare
func.func @not_weights(%w_a: tensor<4x4xf32>, %w_b: tensor<4x4xf32>) -> tensor<1x4x8xf32> {
  %w = tensor.concat dim(1) %w_a, %w_b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %x = tensor.expand_shape %w_a [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
  %y = mha.project %x, %w : (tensor<1x4x4xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// The name of a prepare function must be free.
// expected-error @below {{'func.func' op cannot add the prepare function @taken_prepare0: the name is taken}}
func.func @taken(%x: tensor<1x2x4xf32>, %w_a: tensor<4x4xf32>, %w_b: tensor<4x4xf32>) -> tensor<1x2x8xf32> {
  %w = tensor.concat dim(1) %w_a, %w_b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %y = mha.project %x, %w : (tensor<1x2x4xf32>, tensor<4x8xf32>) -> tensor<1x2x8xf32>
  return %y : tensor<1x2x8xf32>
}
func.func @taken_prepare0() {
  return
}
