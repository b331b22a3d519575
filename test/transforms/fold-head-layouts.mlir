// RUN: mha-opt %s -split-input-file -mha-fold-head-layouts | FileCheck %s

// A projection split into heads writes the heads itself.
// CHECK-LABEL: func.func @split_of_project
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x16xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<8xf32>)
//       CHECK:   %[[H:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) heads(2) : (tensor<?x?x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<?x2x?x4xf32>
//   CHECK-NOT:   mha.split_heads
//       CHECK:   return %[[H]]
func.func @split_of_project(%x: tensor<?x?x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<?x2x?x4xf32> {
  %p = mha.project %x, %w bias(%b) : (tensor<?x?x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %h = mha.split_heads %p heads(2) : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  return %h : tensor<?x2x?x4xf32>
}

// -----

// The split knows the batch that the projection leaves open: the result is
// cast to the split's type.
// CHECK-LABEL: func.func @split_more_static
//       CHECK:   %[[H:.+]] = mha.project %{{.+}}, %{{.+}} heads(2) : (tensor<?x3x16xf32>, tensor<16x8xf32>) -> tensor<?x2x3x4xf32>
//       CHECK:   %[[C:.+]] = tensor.cast %[[H]] : tensor<?x2x3x4xf32> to tensor<1x2x3x4xf32>
//       CHECK:   return %[[C]]
func.func @split_more_static(%x: tensor<?x3x16xf32>, %w: tensor<16x8xf32>) -> tensor<1x2x3x4xf32> {
  %p = mha.project %x, %w : (tensor<?x3x16xf32>, tensor<16x8xf32>) -> tensor<?x3x8xf32>
  %h = mha.split_heads %p heads(2) : tensor<?x3x8xf32> -> tensor<1x2x3x4xf32>
  return %h : tensor<1x2x3x4xf32>
}

// -----

// Split first: the per-head projections read their slices of x in place.
// CHECK-LABEL: func.func @per_head_of_split
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x8x4xf32>, %[[WQ:.+]]: tensor<2x2x2xf32>, %[[WK:.+]]: tensor<2x2x2xf32>)
//   CHECK-NOT:   mha.split_heads
//       CHECK:   %[[Q:.+]] = mha.project %[[X]], %[[WQ]] : (tensor<1x8x4xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
//       CHECK:   %[[K:.+]] = mha.project %[[X]], %[[WK]] : (tensor<1x8x4xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
//       CHECK:   return %[[Q]], %[[K]]
func.func @per_head_of_split(%x: tensor<1x8x4xf32>, %w_q: tensor<2x2x2xf32>, %w_k: tensor<2x2x2xf32>)
    -> (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) {
  %s = mha.split_heads %x heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %q = mha.project %s, %w_q : (tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
  %k = mha.project %s, %w_k : (tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
  return %q, %k : tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>
}

// -----

// The output projection reads the heads instead of their concatenation.
// CHECK-LABEL: func.func @output_project_of_concat
//  CHECK-SAME:   (%[[O:.+]]: tensor<1x2x5x4xf32>, %[[W:.+]]: tensor<8x6xf32>)
//   CHECK-NOT:   mha.concat_heads
//       CHECK:   mha.output_project %[[O]], %[[W]] : (tensor<1x2x5x4xf32>, tensor<8x6xf32>) -> tensor<1x5x6xf32>
func.func @output_project_of_concat(%o: tensor<1x2x5x4xf32>, %w: tensor<8x6xf32>) -> tensor<1x5x6xf32> {
  %c = mha.concat_heads %o : tensor<1x2x5x4xf32> -> tensor<1x5x8xf32>
  %y = mha.output_project %c, %w : (tensor<1x5x8xf32>, tensor<8x6xf32>) -> tensor<1x5x6xf32>
  return %y : tensor<1x5x6xf32>
}

// -----

// The layer after mha-expand: no split and no concat is left.
// CHECK-LABEL: func.func @layer
//   CHECK-NOT:   mha.split_heads
//   CHECK-NOT:   mha.concat_heads
//       CHECK:   %[[Q:.+]] = mha.project %{{.+}}, %{{.+}} heads(4)
//       CHECK:   %[[K:.+]] = mha.project %{{.+}}, %{{.+}} heads(2)
//       CHECK:   %[[V:.+]] = mha.project %{{.+}}, %{{.+}} heads(2)
//       CHECK:   %[[O:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]]
//       CHECK:   mha.output_project %[[O]]
func.func @layer(%x: tensor<?x?x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x8xf32>,
                 %w_v: tensor<16x8xf32>, %w_o: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %0 = mha.project %x, %w_q : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %1 = mha.split_heads %0 heads(4) : tensor<?x?x16xf32> -> tensor<?x4x?x4xf32>
  %2 = mha.project %x, %w_k : (tensor<?x?x16xf32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %3 = mha.split_heads %2 heads(2) : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %4 = mha.project %x, %w_v : (tensor<?x?x16xf32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %5 = mha.split_heads %4 heads(2) : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %6 = mha.sdpa %1, %3, %5 causal : (tensor<?x4x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x4x?x4xf32>
  %7 = mha.concat_heads %6 : tensor<?x4x?x4xf32> -> tensor<?x?x16xf32>
  %8 = mha.output_project %7, %w_o : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %8 : tensor<?x?x16xf32>
}

// -----

// The projection's [B, T, D_out] result is also returned: writing heads
// would compute it twice, so the split stays.
// CHECK-LABEL: func.func @negative_projection_used_twice
//       CHECK:   %[[P:.+]] = mha.project %{{.+}}, %{{.+}} : (tensor<1x3x16xf32>, tensor<16x8xf32>) -> tensor<1x3x8xf32>
//       CHECK:   mha.split_heads %[[P]] heads(2)
func.func @negative_projection_used_twice(%x: tensor<1x3x16xf32>, %w: tensor<16x8xf32>)
    -> (tensor<1x3x8xf32>, tensor<1x2x3x4xf32>) {
  %p = mha.project %x, %w : (tensor<1x3x16xf32>, tensor<16x8xf32>) -> tensor<1x3x8xf32>
  %h = mha.split_heads %p heads(2) : tensor<1x3x8xf32> -> tensor<1x2x3x4xf32>
  return %p, %h : tensor<1x3x8xf32>, tensor<1x2x3x4xf32>
}

// -----

// A split of something that is not a projection is a real copy.
// CHECK-LABEL: func.func @negative_split_of_argument
//       CHECK:   mha.split_heads
func.func @negative_split_of_argument(%x: tensor<1x3x8xf32>) -> tensor<1x2x3x4xf32> {
  %h = mha.split_heads %x heads(2) : tensor<1x3x8xf32> -> tensor<1x2x3x4xf32>
  return %h : tensor<1x2x3x4xf32>
}

// -----

// A split of heads that are already split (per-head projection result).
// CHECK-LABEL: func.func @negative_split_of_per_head_project
//       CHECK:   %[[P:.+]] = mha.project
//       CHECK:   %[[C:.+]] = mha.concat_heads %[[P]]
//       CHECK:   mha.split_heads %[[C]] heads(4)
func.func @negative_split_of_per_head_project(%x: tensor<1x2x3x2xf32>, %w: tensor<2x2x4xf32>) -> tensor<1x4x3x2xf32> {
  %p = mha.project %x, %w : (tensor<1x2x3x2xf32>, tensor<2x2x4xf32>) -> tensor<1x2x3x4xf32>
  %c = mha.concat_heads %p : tensor<1x2x3x4xf32> -> tensor<1x3x8xf32>
  %h = mha.split_heads %c heads(4) : tensor<1x3x8xf32> -> tensor<1x4x3x2xf32>
  return %h : tensor<1x4x3x2xf32>
}

// -----

// Concatenated heads that are returned, not projected, stay concatenated.
// CHECK-LABEL: func.func @negative_concat_returned
//       CHECK:   mha.concat_heads
func.func @negative_concat_returned(%o: tensor<1x2x5x4xf32>) -> tensor<1x5x8xf32> {
  %c = mha.concat_heads %o : tensor<1x2x5x4xf32> -> tensor<1x5x8xf32>
  return %c : tensor<1x5x8xf32>
}
