// RUN: mha-opt %s -split-input-file -mha-fuse-projections | FileCheck %s

// Self-attention with heads written in place: Q, K and V become one
// projection by the weights side by side, packed along the heads; each is
// a slice of whole heads. Missing biases are zeros.
// CHECK-LABEL: func.func @self_attention_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<16x8xf32>, %[[WV:.+]]: tensor<16x8xf32>, %[[BQ:.+]]: tensor<16xf32>)
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
//       CHECK:   %[[W:.+]] = tensor.concat dim(1) %[[WQ]], %[[WK]], %[[WV]] : (tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x32xf32>
//       CHECK:   %[[B:.+]] = tensor.concat dim(0) %[[BQ]], %[[ZERO]], %[[ZERO]] : (tensor<16xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32xf32>
//       CHECK:   %[[P:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) heads(8) : (tensor<?x?x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<?x8x?x4xf32>
//   CHECK-DAG:   %[[BATCH:.+]] = tensor.dim %[[P]], %c0
//   CHECK-DAG:   %[[SEQ:.+]] = tensor.dim %[[P]], %c2
//       CHECK:   %[[Q:.+]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [%[[BATCH]], 4, %[[SEQ]], 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x4x?x4xf32>
//       CHECK:   %[[K:.+]] = tensor.extract_slice %[[P]][0, 4, 0, 0] [%[[BATCH]], 2, %[[SEQ]], 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x2x?x4xf32>
//       CHECK:   %[[V:.+]] = tensor.extract_slice %[[P]][0, 6, 0, 0] [%[[BATCH]], 2, %[[SEQ]], 4] [1, 1, 1, 1] : tensor<?x8x?x4xf32> to tensor<?x2x?x4xf32>
//   CHECK-NOT:   mha.project
//       CHECK:   mha.sdpa %[[Q]], %[[K]], %[[V]]
func.func @self_attention_heads(%x: tensor<?x?x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x8xf32>,
                                %w_v: tensor<16x8xf32>, %b_q: tensor<16xf32>) -> tensor<?x4x?x4xf32> {
  %q = mha.project %x, %w_q bias(%b_q) heads(4) : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x4x?x4xf32>
  %k = mha.project %x, %w_k heads(2) : (tensor<?x?x16xf32>, tensor<16x8xf32>) -> tensor<?x2x?x4xf32>
  %v = mha.project %x, %w_v heads(2) : (tensor<?x?x16xf32>, tensor<16x8xf32>) -> tensor<?x2x?x4xf32>
  %o = mha.sdpa %q, %k, %v : (tensor<?x4x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x4x?x4xf32>
  return %o : tensor<?x4x?x4xf32>
}

// -----

// Cross-attention: K and V read kv and are packed; Q reads x and stays.
// CHECK-LABEL: func.func @cross_attention
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x5x8xf32>, %[[KV:.+]]: tensor<1x7x6xf32>, %[[WQ:.+]]: tensor<6x8xf32>, %[[WK:.+]]: tensor<6x8xf32>, %[[WV:.+]]: tensor<6x8xf32>
//       CHECK:   mha.project %[[X]], %{{.+}} heads(2) : (tensor<1x5x8xf32>, tensor<8x8xf32>) -> tensor<1x2x5x4xf32>
//       CHECK:   %[[W:.+]] = tensor.concat dim(1) %[[WK]], %[[WV]] : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x16xf32>
//       CHECK:   %[[P:.+]] = mha.project %[[KV]], %[[W]] heads(4) : (tensor<1x7x6xf32>, tensor<6x16xf32>) -> tensor<1x4x7x4xf32>
//       CHECK:   tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 2, 7, 4]
//       CHECK:   tensor.extract_slice %[[P]][0, 2, 0, 0] [1, 2, 7, 4]
func.func @cross_attention(%x: tensor<1x5x8xf32>, %kv: tensor<1x7x6xf32>, %w_q: tensor<6x8xf32>,
                           %w_k: tensor<6x8xf32>, %w_v: tensor<6x8xf32>, %w_q2: tensor<8x8xf32>)
    -> tensor<1x2x5x4xf32> {
  %q = mha.project %x, %w_q2 heads(2) : (tensor<1x5x8xf32>, tensor<8x8xf32>) -> tensor<1x2x5x4xf32>
  %k = mha.project %kv, %w_k heads(2) : (tensor<1x7x6xf32>, tensor<6x8xf32>) -> tensor<1x2x7x4xf32>
  %v = mha.project %kv, %w_v heads(2) : (tensor<1x7x6xf32>, tensor<6x8xf32>) -> tensor<1x2x7x4xf32>
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x5x4xf32>, tensor<1x2x7x4xf32>, tensor<1x2x7x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}

// -----

// Projections into [B, T, D_out] are packed along the columns, widths may
// differ.
// CHECK-LABEL: func.func @rows
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>, %[[WA:.+]]: tensor<4x5xf32>, %[[WB:.+]]: tensor<4x7xf32>, %[[BA:.+]]: tensor<5xf32>, %[[BB:.+]]: tensor<7xf32>)
//       CHECK:   %[[W:.+]] = tensor.concat dim(1) %[[WA]], %[[WB]] : (tensor<4x5xf32>, tensor<4x7xf32>) -> tensor<4x12xf32>
//       CHECK:   %[[B:.+]] = tensor.concat dim(0) %[[BA]], %[[BB]] : (tensor<5xf32>, tensor<7xf32>) -> tensor<12xf32>
//       CHECK:   %[[P:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) : (tensor<2x3x4xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
//       CHECK:   %[[A:.+]] = tensor.extract_slice %[[P]][0, 0, 0] [2, 3, 5] [1, 1, 1] : tensor<2x3x12xf32> to tensor<2x3x5xf32>
//       CHECK:   %[[C:.+]] = tensor.extract_slice %[[P]][0, 0, 5] [2, 3, 7] [1, 1, 1] : tensor<2x3x12xf32> to tensor<2x3x7xf32>
//       CHECK:   return %[[A]], %[[C]]
func.func @rows(%x: tensor<2x3x4xf32>, %w_a: tensor<4x5xf32>, %w_b: tensor<4x7xf32>,
                %b_a: tensor<5xf32>, %b_b: tensor<7xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x7xf32>) {
  %a = mha.project %x, %w_a bias(%b_a) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %b = mha.project %x, %w_b bias(%b_b) : (tensor<2x3x4xf32>, tensor<4x7xf32>, tensor<7xf32>) -> tensor<2x3x7xf32>
  return %a, %b : tensor<2x3x5xf32>, tensor<2x3x7xf32>
}

// -----

// Per head (split first): packed along each head's output columns; the
// biases [H·d] are interleaved head by head.
// CHECK-LABEL: func.func @per_head
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x8x4xf32>, %[[WQ:.+]]: tensor<2x2x3xf32>, %[[WK:.+]]: tensor<2x2x3xf32>, %[[BQ:.+]]: tensor<6xf32>)
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
//       CHECK:   %[[W:.+]] = tensor.concat dim(2) %[[WQ]], %[[WK]] : (tensor<2x2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x2x6xf32>
//       CHECK:   %[[BQ2:.+]] = tensor.expand_shape %[[BQ]] {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
//       CHECK:   %[[B2:.+]] = tensor.concat dim(1) %[[BQ2]], %[[ZERO]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
//       CHECK:   %[[B:.+]] = tensor.collapse_shape %[[B2]] {{\[}}[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
//       CHECK:   %[[P:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) : (tensor<1x8x4xf32>, tensor<2x2x6xf32>, tensor<12xf32>) -> tensor<1x2x8x6xf32>
//       CHECK:   tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 2, 8, 3] [1, 1, 1, 1]
//       CHECK:   tensor.extract_slice %[[P]][0, 0, 0, 3] [1, 2, 8, 3] [1, 1, 1, 1]
func.func @per_head(%x: tensor<1x8x4xf32>, %w_q: tensor<2x2x3xf32>, %w_k: tensor<2x2x3xf32>, %b_q: tensor<6xf32>)
    -> (tensor<1x2x8x3xf32>, tensor<1x2x8x3xf32>) {
  %q = mha.project %x, %w_q bias(%b_q) : (tensor<1x8x4xf32>, tensor<2x2x3xf32>, tensor<6xf32>) -> tensor<1x2x8x3xf32>
  %k = mha.project %x, %w_k : (tensor<1x8x4xf32>, tensor<2x2x3xf32>) -> tensor<1x2x8x3xf32>
  return %q, %k : tensor<1x2x8x3xf32>, tensor<1x2x8x3xf32>
}

// -----

// dk != dv: K and Q (head dimension 4) are packed, V (6) is not.
// CHECK-LABEL: func.func @different_head_dims
//       CHECK:   tensor.concat dim(1) %{{.+}}, %{{.+}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
//       CHECK:   mha.project %{{.+}}, %{{.+}} heads(4) : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x4x3x4xf32>
//       CHECK:   mha.project %{{.+}}, %{{.+}} heads(2) : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x2x3x6xf32>
func.func @different_head_dims(%x: tensor<1x3x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x12xf32>)
    -> tensor<1x2x3x6xf32> {
  %q = mha.project %x, %w_q heads(2) : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x2x3x4xf32>
  %k = mha.project %x, %w_k heads(2) : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x2x3x4xf32>
  %v = mha.project %x, %w_v heads(2) : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x2x3x6xf32>
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x6xf32>) -> tensor<1x2x3x6xf32>
  return %o : tensor<1x2x3x6xf32>
}

// -----

// One projection per input: nothing to pack.
// CHECK-LABEL: func.func @negative_one_projection_per_input
//   CHECK-NOT:   tensor.concat
//       CHECK:   mha.project %{{.+}}, %{{.+}} heads(2)
//       CHECK:   mha.project %{{.+}}, %{{.+}} heads(2)
//   CHECK-NOT:   tensor.extract_slice
func.func @negative_one_projection_per_input(%x: tensor<1x3x8xf32>, %y: tensor<1x3x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %a = mha.project %x, %w heads(2) : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x2x3x4xf32>
  %b = mha.project %y, %w heads(2) : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x2x3x4xf32>
  return %a, %b : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// Same input, different forms (one writes heads, one does not): their
// results cannot be slices of one packed result.
// CHECK-LABEL: func.func @negative_different_forms
//   CHECK-NOT:   tensor.concat
//       CHECK:   mha.project %{{.+}}, %{{.+}} heads(2)
//       CHECK:   mha.project %{{.+}}, %{{.+}} :
func.func @negative_different_forms(%x: tensor<1x3x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<1x2x3x4xf32>, tensor<1x3x8xf32>) {
  %a = mha.project %x, %w heads(2) : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x2x3x4xf32>
  %b = mha.project %x, %w : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %a, %b : tensor<1x2x3x4xf32>, tensor<1x3x8xf32>
}

// -----

// The second weight is computed after the first projection: the packed
// weight could not be built where the first projection is.
// CHECK-LABEL: func.func @negative_weight_defined_later
//   CHECK-NOT:   tensor.concat
//       CHECK:   mha.project
//       CHECK:   arith.addf
//       CHECK:   mha.project
func.func @negative_weight_defined_later(%x: tensor<1x3x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<1x3x8xf32>, tensor<1x3x8xf32>) {
  %a = mha.project %x, %w : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  %w2 = arith.addf %w, %w : tensor<8x8xf32>
  %b = mha.project %x, %w2 : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %a, %b : tensor<1x3x8xf32>, tensor<1x3x8xf32>
}

// -----

// Projections in different blocks are not packed.
// CHECK-LABEL: func.func @negative_different_blocks
//   CHECK-NOT:   tensor.concat
func.func @negative_different_blocks(%x: tensor<1x3x8xf32>, %w: tensor<8x8xf32>, %c: i1) -> tensor<1x3x8xf32> {
  %a = mha.project %x, %w : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  %r = scf.if %c -> tensor<1x3x8xf32> {
    %b = mha.project %x, %w : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
    scf.yield %b : tensor<1x3x8xf32>
  } else {
    scf.yield %a : tensor<1x3x8xf32>
  }
  return %r : tensor<1x3x8xf32>
}
