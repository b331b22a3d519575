// RUN: mha-opt %s -split-input-file -canonicalize | FileCheck %s

// split_heads and concat_heads only move data: one undoes the other, and an
// output projection reads the heads without a concatenated copy.

// CHECK-LABEL: func.func @split_of_concat
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x128x64xf32>)
// CHECK-NOT: mha.
// CHECK: return %[[X]]
func.func @split_of_concat(%x: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %c = mha.concat_heads %x : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
  %s = mha.split_heads %c heads(8) : tensor<1x128x512xf32> -> tensor<1x8x128x64xf32>
  return %s : tensor<1x8x128x64xf32>
}

// -----

// CHECK-LABEL: func.func @concat_of_split
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>)
// CHECK-NOT: mha.
// CHECK: return %[[X]]
func.func @concat_of_split(%x: tensor<?x?x512xf32>) -> tensor<?x?x512xf32> {
  %s = mha.split_heads %x heads(8) : tensor<?x?x512xf32> -> tensor<?x8x?x64xf32>
  %c = mha.concat_heads %s : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
  return %c : tensor<?x?x512xf32>
}

// -----

// Any head count undoes itself: concat(split(x, 4)) is x as well.
// CHECK-LABEL: func.func @concat_of_split_other_heads
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x96xf32>)
// CHECK-NOT: mha.
// CHECK: return %[[X]], %[[X]]
func.func @concat_of_split_other_heads(%x: tensor<2x16x96xf32>) -> (tensor<2x16x96xf32>, tensor<2x16x96xf32>) {
  %s = mha.split_heads %x heads(4) : tensor<2x16x96xf32> -> tensor<2x4x16x24xf32>
  %c = mha.concat_heads %s : tensor<2x4x16x24xf32> -> tensor<2x16x96xf32>
  %t = mha.split_heads %x heads(3) : tensor<2x16x96xf32> -> tensor<2x3x16x32xf32>
  %d = mha.concat_heads %t : tensor<2x3x16x32xf32> -> tensor<2x16x96xf32>
  return %c, %d : tensor<2x16x96xf32>, tensor<2x16x96xf32>
}

// -----

// CHECK-LABEL: func.func @output_project_of_concat
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x128x64xf32>, %[[W:.+]]: tensor<512x256xf32>, %[[B:.+]]: tensor<256xf32>)
// CHECK-NOT: mha.concat_heads
// CHECK: %[[Y:.+]] = mha.output_project %[[X]], %[[W]] bias(%[[B]]) : (tensor<1x8x128x64xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
// CHECK-NOT: mha.concat_heads
// CHECK: return %[[Y]]
func.func @output_project_of_concat(%x: tensor<1x8x128x64xf32>, %w: tensor<512x256xf32>,
                                    %b: tensor<256xf32>) -> tensor<1x128x256xf32> {
  %c = mha.concat_heads %x : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
  %y = mha.output_project %c, %w bias(%b)
      : (tensor<1x128x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  return %y : tensor<1x128x256xf32>
}

// -----

// The concatenation has another user: it stays for that user, but the
// projection still reads the heads.
// CHECK-LABEL: func.func @output_project_of_shared_concat
// CHECK-SAME: (%[[X:.+]]: tensor<?x4x?x16xf32>, %[[W:.+]]: tensor<64x32xf32>)
// CHECK: %[[C:.+]] = mha.concat_heads %[[X]]
// CHECK: %[[Y:.+]] = mha.output_project %[[X]], %[[W]] : (tensor<?x4x?x16xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
// CHECK: return %[[Y]], %[[C]]
func.func @output_project_of_shared_concat(%x: tensor<?x4x?x16xf32>, %w: tensor<64x32xf32>)
    -> (tensor<?x?x32xf32>, tensor<?x?x64xf32>) {
  %c = mha.concat_heads %x : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
  %y = mha.output_project %c, %w : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  return %y, %c : tensor<?x?x32xf32>, tensor<?x?x64xf32>
}

// -----

// The five steps as mha-expand writes them: after canonicalization the output
// projection reads the attention heads directly.
// CHECK-LABEL: func.func @five_steps
// CHECK: %[[O:.+]] = mha.sdpa
// CHECK-NOT: mha.concat_heads
// CHECK: mha.output_project %[[O]], %{{.+}} : (tensor<1x2x8x2xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
func.func @five_steps(%x: tensor<1x8x4xf32>, %w_q: tensor<4x4xf32>, %w_k: tensor<4x4xf32>,
                      %w_v: tensor<4x4xf32>, %w_o: tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  %q = mha.project %x, %w_q : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %qh = mha.split_heads %q heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %k = mha.project %x, %w_k : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %kh = mha.split_heads %k heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %v = mha.project %x, %w_v : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %vh = mha.split_heads %v heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %o = mha.sdpa %qh, %kh, %vh
      : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
  %c = mha.concat_heads %o : tensor<1x2x8x2xf32> -> tensor<1x8x4xf32>
  %y = mha.output_project %c, %w_o : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// Splitting into a different number of heads than were concatenated is a
// real reshuffle ([1, 8, 128, 64] -> [1, 4, 128, 128]): it must stay.
// CHECK-LABEL: func.func @negative_split_of_concat_other_heads
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x128x64xf32>)
// CHECK: %[[C:.+]] = mha.concat_heads %[[X]] : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
// CHECK: %[[S:.+]] = mha.split_heads %[[C]] heads(4) : tensor<1x128x512xf32> -> tensor<1x4x128x128xf32>
// CHECK: return %[[S]]
func.func @negative_split_of_concat_other_heads(%x: tensor<1x8x128x64xf32>) -> tensor<1x4x128x128xf32> {
  %c = mha.concat_heads %x : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
  %s = mha.split_heads %c heads(4) : tensor<1x128x512xf32> -> tensor<1x4x128x128xf32>
  return %s : tensor<1x4x128x128xf32>
}

// -----

// Same head count, but the split's declared type is more static than the
// concat's input: replacing it would change the type seen by its users.
// CHECK-LABEL: func.func @negative_split_of_concat_refined_type
// CHECK: mha.concat_heads
// CHECK: mha.split_heads
func.func @negative_split_of_concat_refined_type(%x: tensor<?x8x?x64xf32>) -> tensor<2x8x16x64xf32> {
  %c = mha.concat_heads %x : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
  %s = mha.split_heads %c heads(8) : tensor<?x?x512xf32> -> tensor<2x8x16x64xf32>
  return %s : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @negative_concat_of_split_refined_type
// CHECK: mha.split_heads
// CHECK: mha.concat_heads
func.func @negative_concat_of_split_refined_type(%x: tensor<?x?x512xf32>) -> tensor<1x128x512xf32> {
  %s = mha.split_heads %x heads(8) : tensor<?x?x512xf32> -> tensor<1x8x128x64xf32>
  %c = mha.concat_heads %s : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
  return %c : tensor<1x128x512xf32>
}

// -----

// An output projection of something other than concat_heads keeps its input.
// CHECK-LABEL: func.func @negative_output_project_of_argument
// CHECK-SAME: (%[[X:.+]]: tensor<1x128x512xf32>, %[[W:.+]]: tensor<512x512xf32>)
// CHECK: mha.output_project %[[X]], %[[W]] : (tensor<1x128x512xf32>, tensor<512x512xf32>) -> tensor<1x128x512xf32>
func.func @negative_output_project_of_argument(%x: tensor<1x128x512xf32>, %w: tensor<512x512xf32>)
    -> tensor<1x128x512xf32> {
  %y = mha.output_project %x, %w : (tensor<1x128x512xf32>, tensor<512x512xf32>) -> tensor<1x128x512xf32>
  return %y : tensor<1x128x512xf32>
}

// -----

// A projection of split heads is not a split of a projection: nothing folds.
// CHECK-LABEL: func.func @negative_concat_of_per_head_project
// CHECK: mha.split_heads
// CHECK: mha.project
// CHECK: mha.concat_heads
func.func @negative_concat_of_per_head_project(%x: tensor<1x8x4xf32>, %w: tensor<2x2x2xf32>) -> tensor<1x8x4xf32> {
  %s = mha.split_heads %x heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %p = mha.project %s, %w : (tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
  %c = mha.concat_heads %p : tensor<1x2x8x2xf32> -> tensor<1x8x4xf32>
  return %c : tensor<1x8x4xf32>
}
