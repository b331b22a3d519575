// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s
// RUN: mha-opt %s -split-input-file -mlir-print-op-generic | mha-opt -split-input-file | FileCheck %s

// Every op and every optional operand and attribute of the mha dialect prints
// back in a form that parses to the same op. The second RUN goes through the
// generic form, so the properties (num_heads, causal, scale, the operand
// segments of mha.attention) survive that too.

//===----------------------------------------------------------------------===//
// mha.project
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @project_shared_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x512xf32>, %[[W:.+]]: tensor<512x256xf32>, %[[B:.+]]: tensor<256xf32>)
// CHECK: %[[P:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) : (tensor<2x16x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<2x16x256xf32>
// CHECK: return %[[P]]
func.func @project_shared_bias(%x: tensor<2x16x512xf32>, %w: tensor<512x256xf32>,
                               %b: tensor<256xf32>) -> tensor<2x16x256xf32> {
  %p = mha.project %x, %w bias(%b)
      : (tensor<2x16x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<2x16x256xf32>
  return %p : tensor<2x16x256xf32>
}

// -----

// CHECK-LABEL: func.func @project_shared_no_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x512xf32>, %[[W:.+]]: tensor<512x256xf32>)
// CHECK: mha.project %[[X]], %[[W]] : (tensor<2x16x512xf32>, tensor<512x256xf32>) -> tensor<2x16x256xf32>
// CHECK-NOT: bias
func.func @project_shared_no_bias(%x: tensor<2x16x512xf32>, %w: tensor<512x256xf32>) -> tensor<2x16x256xf32> {
  %p = mha.project %x, %w : (tensor<2x16x512xf32>, tensor<512x256xf32>) -> tensor<2x16x256xf32>
  return %p : tensor<2x16x256xf32>
}

// -----

// A rank-2 input [T, D_in]: the shared form contracts the last dimension only.
// CHECK-LABEL: func.func @project_shared_rank2
// CHECK-SAME: (%[[X:.+]]: tensor<7x48xf32>, %[[W:.+]]: tensor<48x32xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK: mha.project %[[X]], %[[W]] bias(%[[B]]) : (tensor<7x48xf32>, tensor<48x32xf32>, tensor<32xf32>) -> tensor<7x32xf32>
func.func @project_shared_rank2(%x: tensor<7x48xf32>, %w: tensor<48x32xf32>,
                                %b: tensor<32xf32>) -> tensor<7x32xf32> {
  %p = mha.project %x, %w bias(%b) : (tensor<7x48xf32>, tensor<48x32xf32>, tensor<32xf32>) -> tensor<7x32xf32>
  return %p : tensor<7x32xf32>
}

// -----

// CHECK-LABEL: func.func @project_shared_dynamic
// CHECK: mha.project %{{.+}}, %{{.+}} : (tensor<?x?x512xf32>, tensor<512x64xf32>) -> tensor<?x?x64xf32>
func.func @project_shared_dynamic(%x: tensor<?x?x512xf32>, %w: tensor<512x64xf32>) -> tensor<?x?x64xf32> {
  %p = mha.project %x, %w : (tensor<?x?x512xf32>, tensor<512x64xf32>) -> tensor<?x?x64xf32>
  return %p : tensor<?x?x64xf32>
}

// -----

// Per head: weight [H, w, d], head h projects its own slice of the input.
// CHECK-LABEL: func.func @project_per_head
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x8x2xf32>, %[[W:.+]]: tensor<2x2x3xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK: %[[A:.+]] = mha.project %[[X]], %[[W]] : (tensor<1x2x8x2xf32>, tensor<2x2x3xf32>) -> tensor<1x2x8x3xf32>
// CHECK: %[[C:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) : (tensor<1x2x8x2xf32>, tensor<2x2x3xf32>, tensor<6xf32>) -> tensor<1x2x8x3xf32>
// CHECK: return %[[A]], %[[C]]
func.func @project_per_head(%x: tensor<1x2x8x2xf32>, %w: tensor<2x2x3xf32>, %b: tensor<6xf32>)
    -> (tensor<1x2x8x3xf32>, tensor<1x2x8x3xf32>) {
  %a = mha.project %x, %w : (tensor<1x2x8x2xf32>, tensor<2x2x3xf32>) -> tensor<1x2x8x3xf32>
  %c = mha.project %x, %w bias(%b)
      : (tensor<1x2x8x2xf32>, tensor<2x2x3xf32>, tensor<6xf32>) -> tensor<1x2x8x3xf32>
  return %a, %c : tensor<1x2x8x3xf32>, tensor<1x2x8x3xf32>
}

// -----

// Per head from the unsplit input [B, T, H*w]: head h reads its columns.
// CHECK-LABEL: func.func @project_per_head_unsplit
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4xf32>, %[[W:.+]]: tensor<2x2x3xf32>)
// CHECK: %[[P:.+]] = mha.project %[[X]], %[[W]] : (tensor<?x?x4xf32>, tensor<2x2x3xf32>) -> tensor<?x2x?x3xf32>
// CHECK: return %[[P]]
func.func @project_per_head_unsplit(%x: tensor<?x?x4xf32>, %w: tensor<2x2x3xf32>) -> tensor<?x2x?x3xf32> {
  %p = mha.project %x, %w : (tensor<?x?x4xf32>, tensor<2x2x3xf32>) -> tensor<?x2x?x3xf32>
  return %p : tensor<?x2x?x3xf32>
}

// -----

// The shared form writing heads [B, H, T, D_out / H].
// CHECK-LABEL: func.func @project_writes_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x16x512xf32>, %[[W:.+]]: tensor<512x256xf32>, %[[B:.+]]: tensor<256xf32>)
// CHECK: %[[P:.+]] = mha.project %[[X]], %[[W]] bias(%[[B]]) heads(4) : (tensor<?x16x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<?x4x16x64xf32>
// CHECK: %[[Q:.+]] = mha.project %[[X]], %[[W]] heads(8) : (tensor<?x16x512xf32>, tensor<512x256xf32>) -> tensor<2x8x16x32xf32>
// CHECK: return %[[P]], %[[Q]]
func.func @project_writes_heads(%x: tensor<?x16x512xf32>, %w: tensor<512x256xf32>, %b: tensor<256xf32>)
    -> (tensor<?x4x16x64xf32>, tensor<2x8x16x32xf32>) {
  %p = mha.project %x, %w bias(%b) heads(4)
      : (tensor<?x16x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<?x4x16x64xf32>
  %q = mha.project %x, %w heads(8) : (tensor<?x16x512xf32>, tensor<512x256xf32>) -> tensor<2x8x16x32xf32>
  return %p, %q : tensor<?x4x16x64xf32>, tensor<2x8x16x32xf32>
}

// -----

// f16 and bf16 parse and verify like f32.
// CHECK-LABEL: func.func @project_element_types
// CHECK: mha.project %{{.+}}, %{{.+}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK: mha.project %{{.+}}, %{{.+}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
func.func @project_element_types(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>,
                                 %y: tensor<4x8xbf16>, %v: tensor<8x8xbf16>)
    -> (tensor<4x8xf16>, tensor<4x8xbf16>) {
  %a = mha.project %x, %w : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %b = mha.project %y, %v : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  return %a, %b : tensor<4x8xf16>, tensor<4x8xbf16>
}

//===----------------------------------------------------------------------===//
// mha.split_heads and mha.concat_heads
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @split_heads
// CHECK-SAME: (%[[X:.+]]: tensor<1x128x512xf32>, %[[D:.+]]: tensor<?x?x512xf32>)
// CHECK: mha.split_heads %[[X]] heads(8) : tensor<1x128x512xf32> -> tensor<1x8x128x64xf32>
// CHECK: mha.split_heads %[[D]] heads(4) : tensor<?x?x512xf32> -> tensor<?x4x?x128xf32>
func.func @split_heads(%x: tensor<1x128x512xf32>, %d: tensor<?x?x512xf32>)
    -> (tensor<1x8x128x64xf32>, tensor<?x4x?x128xf32>) {
  %a = mha.split_heads %x heads(8) : tensor<1x128x512xf32> -> tensor<1x8x128x64xf32>
  %b = mha.split_heads %d heads(4) : tensor<?x?x512xf32> -> tensor<?x4x?x128xf32>
  return %a, %b : tensor<1x8x128x64xf32>, tensor<?x4x?x128xf32>
}

// -----

// CHECK-LABEL: func.func @concat_heads
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x128x64xf32>, %[[D:.+]]: tensor<?x4x?x10xf32>)
// CHECK: mha.concat_heads %[[X]] : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
// CHECK: mha.concat_heads %[[D]] : tensor<?x4x?x10xf32> -> tensor<?x?x40xf32>
func.func @concat_heads(%x: tensor<1x8x128x64xf32>, %d: tensor<?x4x?x10xf32>)
    -> (tensor<1x128x512xf32>, tensor<?x?x40xf32>) {
  %a = mha.concat_heads %x : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
  %b = mha.concat_heads %d : tensor<?x4x?x10xf32> -> tensor<?x?x40xf32>
  return %a, %b : tensor<1x128x512xf32>, tensor<?x?x40xf32>
}

//===----------------------------------------------------------------------===//
// mha.sdpa
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @sdpa_plain
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x16x64xf32>, %[[K:.+]]: tensor<2x8x16x64xf32>, %[[V:.+]]: tensor<2x8x16x64xf32>)
// CHECK: %[[O:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]] : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32>
// CHECK-NOT: causal
// CHECK-NOT: scale
// CHECK: return %[[O]]
func.func @sdpa_plain(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x64xf32>,
                      %v: tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %o = mha.sdpa %q, %k, %v
      : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// The tiles mha-strategy records (#mha.attention_tiles).
// CHECK-LABEL: func.func @sdpa_tiles
// CHECK: mha.sdpa {{.*}} {mha.tiles = #mha.attention_tiles<query_tile = 64, key_tile = 128, key_splits = 2>} :
func.func @sdpa_tiles(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x64xf32>,
                      %v: tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 64, key_tile = 128, key_splits = 2>}
      : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x16x64xf32>, %[[K:.+]]: tensor<2x8x16x64xf32>, %[[V:.+]]: tensor<2x8x16x64xf32>, %[[M:.+]]: tensor<2x16x16xi1>)
// CHECK: mha.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]]) : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x16x16xi1>) -> tensor<2x8x16x64xf32>
func.func @sdpa_mask(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x64xf32>,
                     %v: tensor<2x8x16x64xf32>, %m: tensor<2x16x16xi1>) -> tensor<2x8x16x64xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m)
      : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x16x16xi1>)
      -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// A mask with batch 1 broadcasts over the batch.
// CHECK-LABEL: func.func @sdpa_mask_broadcast
// CHECK: mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}}) : ({{.*}}, tensor<1x16x16xi1>) -> tensor<2x8x16x64xf32>
func.func @sdpa_mask_broadcast(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x64xf32>,
                               %v: tensor<2x8x16x64xf32>, %m: tensor<1x16x16xi1>) -> tensor<2x8x16x64xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m)
      : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<1x16x16xi1>)
      -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_causal
// CHECK: mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal : (
// CHECK-NOT: scale
func.func @sdpa_causal(%q: tensor<1x4x37x16xf32>, %k: tensor<1x4x37x16xf32>,
                       %v: tensor<1x4x37x16xf32>) -> tensor<1x4x37x16xf32> {
  %o = mha.sdpa %q, %k, %v causal
      : (tensor<1x4x37x16xf32>, tensor<1x4x37x16xf32>, tensor<1x4x37x16xf32>) -> tensor<1x4x37x16xf32>
  return %o : tensor<1x4x37x16xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_scale
// CHECK: mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} scale(1.250000e-01) : (
func.func @sdpa_scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>,
                      %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = mha.sdpa %q, %k, %v scale(0.125)
      : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Everything at once: grouped-query (8 query heads over 2 key/value heads),
// dk = 64 != dv = 32, S = 24 != T = 16, mask, causal and scale.
// CHECK-LABEL: func.func @sdpa_all
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x16x64xf32>, %[[K:.+]]: tensor<2x2x24x64xf32>, %[[V:.+]]: tensor<2x2x24x32xf32>, %[[M:.+]]: tensor<1x16x24xi1>)
// CHECK: mha.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]]) causal scale(1.250000e-01) : (tensor<2x8x16x64xf32>, tensor<2x2x24x64xf32>, tensor<2x2x24x32xf32>, tensor<1x16x24xi1>) -> tensor<2x8x16x32xf32>
func.func @sdpa_all(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x24x64xf32>,
                    %v: tensor<2x2x24x32xf32>, %m: tensor<1x16x24xi1>) -> tensor<2x8x16x32xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) causal scale(0.125)
      : (tensor<2x8x16x64xf32>, tensor<2x2x24x64xf32>, tensor<2x2x24x32xf32>, tensor<1x16x24xi1>)
      -> tensor<2x8x16x32xf32>
  return %o : tensor<2x8x16x32xf32>
}

// -----

// Grouped-query attention alone: H = 8 query heads share Hkv = 2.
// CHECK-LABEL: func.func @sdpa_gqa
// CHECK: mha.sdpa %{{.+}} : (tensor<1x8x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x8x5x4xf32>
func.func @sdpa_gqa(%q: tensor<1x8x5x4xf32>, %k: tensor<1x2x5x4xf32>,
                    %v: tensor<1x2x5x4xf32>) -> tensor<1x8x5x4xf32> {
  %o = mha.sdpa %q, %k, %v
      : (tensor<1x8x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x8x5x4xf32>
  return %o : tensor<1x8x5x4xf32>
}

// -----

// dk = 4, dv = 10: the result takes the value dimension.
// CHECK-LABEL: func.func @sdpa_dk_ne_dv
// CHECK: mha.sdpa %{{.+}} : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x10xf32>) -> tensor<1x2x6x10xf32>
func.func @sdpa_dk_ne_dv(%q: tensor<1x2x6x4xf32>, %k: tensor<1x2x6x4xf32>,
                         %v: tensor<1x2x6x10xf32>) -> tensor<1x2x6x10xf32> {
  %o = mha.sdpa %q, %k, %v
      : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x10xf32>) -> tensor<1x2x6x10xf32>
  return %o : tensor<1x2x6x10xf32>
}

// -----

// Cross-attention shapes: 5 queries over 11 keys.
// CHECK-LABEL: func.func @sdpa_s_ne_t
// CHECK: mha.sdpa %{{.+}} : (tensor<1x4x5x12xf32>, tensor<1x4x11x12xf32>, tensor<1x4x11x12xf32>) -> tensor<1x4x5x12xf32>
func.func @sdpa_s_ne_t(%q: tensor<1x4x5x12xf32>, %k: tensor<1x4x11x12xf32>,
                       %v: tensor<1x4x11x12xf32>) -> tensor<1x4x5x12xf32> {
  %o = mha.sdpa %q, %k, %v
      : (tensor<1x4x5x12xf32>, tensor<1x4x11x12xf32>, tensor<1x4x11x12xf32>) -> tensor<1x4x5x12xf32>
  return %o : tensor<1x4x5x12xf32>
}

// -----

// Dynamic batch and sequence sizes; a dynamic mask.
// CHECK-LABEL: func.func @sdpa_dynamic
// CHECK: mha.sdpa %{{.+}} mask(%{{.+}}) causal : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32>, tensor<?x?x?xi1>) -> tensor<?x8x?x32xf32>
func.func @sdpa_dynamic(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                        %v: tensor<?x2x?x32xf32>, %m: tensor<?x?x?xi1>) -> tensor<?x8x?x32xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) causal
      : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32>, tensor<?x?x?xi1>)
      -> tensor<?x8x?x32xf32>
  return %o : tensor<?x8x?x32xf32>
}

// -----

// The generic form parses and prints in the custom form.
// CHECK-LABEL: func.func @sdpa_generic
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[M:.+]]: tensor<1x4x4xi1>)
// CHECK: %[[A:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]] : (
// CHECK: %[[B:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]]) causal scale(5.000000e-01) : (
// CHECK: return %[[A]], %[[B]]
func.func @sdpa_generic(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                        %v: tensor<1x2x4x8xf32>, %m: tensor<1x4x4xi1>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %a = "mha.sdpa"(%q, %k, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}>
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %b = "mha.sdpa"(%q, %k, %v, %m) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>, scale = 5.000000e-01 : f32}>
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4x4xi1>)
      -> tensor<1x2x4x8xf32>
  return %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

//===----------------------------------------------------------------------===//
// mha.output_project
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @output_project_concatenated
// CHECK-SAME: (%[[X:.+]]: tensor<1x128x512xf32>, %[[W:.+]]: tensor<512x256xf32>, %[[B:.+]]: tensor<256xf32>)
// CHECK: %[[Y:.+]] = mha.output_project %[[X]], %[[W]] bias(%[[B]]) : (tensor<1x128x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
// CHECK: mha.output_project %[[X]], %[[W]] : (tensor<1x128x512xf32>, tensor<512x256xf32>) -> tensor<1x128x256xf32>
func.func @output_project_concatenated(%x: tensor<1x128x512xf32>, %w: tensor<512x256xf32>,
                                       %b: tensor<256xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x256xf32>) {
  %y = mha.output_project %x, %w bias(%b)
      : (tensor<1x128x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  %z = mha.output_project %x, %w : (tensor<1x128x512xf32>, tensor<512x256xf32>) -> tensor<1x128x256xf32>
  return %y, %z : tensor<1x128x256xf32>, tensor<1x128x256xf32>
}

// -----

// The heads [B, H, T, dv] directly: 8 heads of 64 against 512 weight rows.
// CHECK-LABEL: func.func @output_project_heads
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x128x64xf32>, %[[W:.+]]: tensor<512x512xf32>, %[[B:.+]]: tensor<512xf32>, %[[D:.+]]: tensor<?x8x?x64xf32>)
// CHECK: mha.output_project %[[X]], %[[W]] bias(%[[B]]) : (tensor<1x8x128x64xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1x128x512xf32>
// CHECK: mha.output_project %[[D]], %[[W]] : (tensor<?x8x?x64xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
func.func @output_project_heads(%x: tensor<1x8x128x64xf32>, %w: tensor<512x512xf32>,
                                %b: tensor<512xf32>, %d: tensor<?x8x?x64xf32>)
    -> (tensor<1x128x512xf32>, tensor<?x?x512xf32>) {
  %y = mha.output_project %x, %w bias(%b)
      : (tensor<1x8x128x64xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1x128x512xf32>
  %z = mha.output_project %d, %w : (tensor<?x8x?x64xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  return %y, %z : tensor<1x128x512xf32>, tensor<?x?x512xf32>
}

//===----------------------------------------------------------------------===//
// mha.attention
//===----------------------------------------------------------------------===//

// -----

// Self-attention with every bias.
// CHECK-LABEL: func.func @attention_self
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x128x512xf32>, %[[WQ:[^:]+]]: tensor<512x512xf32>, %[[WK:[^:]+]]: tensor<512x512xf32>, %[[WV:[^:]+]]: tensor<512x512xf32>, %[[WO:[^:]+]]: tensor<512x512xf32>, %[[BQ:[^:]+]]: tensor<512xf32>, %[[BK:[^:]+]]: tensor<512xf32>, %[[BV:[^:]+]]: tensor<512xf32>, %[[BO:[^:]+]]: tensor<512xf32>)
// CHECK: %[[Y:.+]] = mha.attention %[[X]] weights(%[[WQ]], %[[WK]], %[[WV]], %[[WO]]) bias_q(%[[BQ]]) bias_k(%[[BK]]) bias_v(%[[BV]]) bias_o(%[[BO]]) heads(8) : (
// CHECK-SAME: -> tensor<1x128x512xf32>
// CHECK: return %[[Y]]
func.func @attention_self(%x: tensor<1x128x512xf32>, %w_q: tensor<512x512xf32>,
                          %w_k: tensor<512x512xf32>, %w_v: tensor<512x512xf32>,
                          %w_o: tensor<512x512xf32>, %b_q: tensor<512xf32>,
                          %b_k: tensor<512xf32>, %b_v: tensor<512xf32>,
                          %b_o: tensor<512xf32>) -> tensor<1x128x512xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(8)
      : (tensor<1x128x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32>,
         tensor<512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<1x128x512xf32>
  return %y : tensor<1x128x512xf32>
}

// -----

// No bias at all; the output width differs from the model width.
// CHECK-LABEL: func.func @attention_no_bias
// CHECK: mha.attention %{{[^ ]+}} weights(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) heads(4) : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
// CHECK-NOT: bias_
func.func @attention_no_bias(%x: tensor<2x16x64xf32>, %w_q: tensor<64x64xf32>,
                             %w_k: tensor<64x64xf32>, %w_v: tensor<64x64xf32>,
                             %w_o: tensor<64x32xf32>) -> tensor<2x16x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}

// -----

// Each bias alone: the operand segments keep them apart.
// CHECK-LABEL: func.func @attention_each_bias
// CHECK-SAME: %[[B:[^:]+]]: tensor<64xf32>)
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) bias_q(%[[B]]) heads(4) :
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) bias_k(%[[B]]) heads(4) :
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) bias_v(%[[B]]) heads(4) :
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) bias_o(%[[B]]) heads(4) :
func.func @attention_each_bias(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>)
    -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  %q = mha.attention %x weights(%w, %w, %w, %w) bias_q(%b) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %k = mha.attention %x weights(%w, %w, %w, %w) bias_k(%b) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %v = mha.attention %x weights(%w, %w, %w, %w) bias_v(%b) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %o = mha.attention %x weights(%w, %w, %w, %w) bias_o(%b) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %q, %k, %v, %o : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// -----

// Cross-attention: 5 queries of width 48 over 11 keys of width 32.
// CHECK-LABEL: func.func @attention_cross
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x5x48xf32>, %[[KV:[^:]+]]: tensor<1x11x32xf32>
// CHECK: mha.attention %[[X]] kv(%[[KV]]) weights({{.*}}) heads(4) : (tensor<1x5x48xf32>, tensor<1x11x32xf32>, tensor<48x48xf32>, tensor<32x48xf32>, tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<1x5x48xf32>
func.func @attention_cross(%x: tensor<1x5x48xf32>, %kv: tensor<1x11x32xf32>,
                           %w_q: tensor<48x48xf32>, %w_k: tensor<32x48xf32>,
                           %w_v: tensor<32x48xf32>, %w_o: tensor<48x48xf32>) -> tensor<1x5x48xf32> {
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(4)
      : (tensor<1x5x48xf32>, tensor<1x11x32xf32>, tensor<48x48xf32>, tensor<32x48xf32>,
         tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<1x5x48xf32>
  return %y : tensor<1x5x48xf32>
}

// -----

// A padding mask [B, T, S] and causal, together with kv (so kv and mask are
// both present: the segments must not swap them).
// CHECK-LABEL: func.func @attention_mask_causal_cross
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x5x48xf32>, %[[KV:[^:]+]]: tensor<2x11x32xf32>, %[[M:[^:]+]]: tensor<2x5x11xi1>
// CHECK: mha.attention %[[X]] kv(%[[KV]]) mask(%[[M]]) weights({{.*}}) heads(4) causal : (
func.func @attention_mask_causal_cross(%x: tensor<2x5x48xf32>, %kv: tensor<2x11x32xf32>,
                                       %m: tensor<2x5x11xi1>, %w_q: tensor<48x48xf32>,
                                       %w_k: tensor<32x48xf32>, %w_v: tensor<32x48xf32>,
                                       %w_o: tensor<48x48xf32>) -> tensor<2x5x48xf32> {
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(4) causal
      : (tensor<2x5x48xf32>, tensor<2x11x32xf32>, tensor<2x5x11xi1>, tensor<48x48xf32>,
         tensor<32x48xf32>, tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<2x5x48xf32>
  return %y : tensor<2x5x48xf32>
}

// -----

// CHECK-LABEL: func.func @attention_mask
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x16x16xi1>
// CHECK: mha.attention %{{[^ ]+}} mask(%[[M]]) weights({{.*}}) heads(4) : (
// CHECK-NOT: causal
func.func @attention_mask(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>,
                          %m: tensor<1x16x16xi1>) -> tensor<2x16x64xf32> {
  %y = mha.attention %x mask(%m) weights(%w, %w, %w, %w) heads(4)
      : (tensor<2x16x64xf32>, tensor<1x16x16xi1>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @attention_causal_scale
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) heads(4) causal : (
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) heads(4) scale(2.500000e-01) : (
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) heads(4) causal scale(2.500000e-01) : (
func.func @attention_causal_scale(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>)
    -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  %a = mha.attention %x weights(%w, %w, %w, %w) heads(4) causal
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %b = mha.attention %x weights(%w, %w, %w, %w) heads(4) scale(0.25)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %c = mha.attention %x weights(%w, %w, %w, %w) heads(4) causal scale(0.25)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>) -> tensor<2x16x64xf32>
  return %a, %b, %c : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// -----

// Grouped-query: 8 query heads share 2 key/value heads (w_k, w_v: 2*dk columns).
// CHECK-LABEL: func.func @attention_kv_heads
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) heads(8) kv_heads(2) : (tensor<1x10x64xf32>, tensor<64x64xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x64xf32>) -> tensor<1x10x64xf32>
func.func @attention_kv_heads(%x: tensor<1x10x64xf32>, %w_q: tensor<64x64xf32>,
                              %w_k: tensor<64x16xf32>, %w_v: tensor<64x16xf32>,
                              %w_o: tensor<64x64xf32>) -> tensor<1x10x64xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(8) kv_heads(2)
      : (tensor<1x10x64xf32>, tensor<64x64xf32>, tensor<64x16xf32>, tensor<64x16xf32>,
         tensor<64x64xf32>) -> tensor<1x10x64xf32>
  return %y : tensor<1x10x64xf32>
}

// -----

// Split first: rank-3 per-head weights [H, D/H, d] (the worked example).
// CHECK-LABEL: func.func @attention_split_first
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) heads(2) : (tensor<1x8x4xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
func.func @attention_split_first(%x: tensor<1x8x4xf32>, %w_q: tensor<2x2x2xf32>,
                                 %w_k: tensor<2x2x2xf32>, %w_v: tensor<2x2x2xf32>,
                                 %w_o: tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x8x4xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>,
         tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// Split first with biases, dk != dv and grouped-query: b_q [H*dk], b_k
// [Hkv*dk], b_v [Hkv*dv].
// CHECK-LABEL: func.func @attention_split_first_bias_gqa
// CHECK: mha.attention %{{[^ ]+}} weights({{.*}}) bias_q(%{{.+}}) bias_k(%{{.+}}) bias_v(%{{.+}}) bias_o(%{{.+}}) heads(4) kv_heads(2) : (tensor<1x8x16xf32>, tensor<4x4x3xf32>, tensor<2x8x3xf32>, tensor<2x8x5xf32>, tensor<20x16xf32>, tensor<12xf32>, tensor<6xf32>, tensor<10xf32>, tensor<16xf32>) -> tensor<1x8x16xf32>
func.func @attention_split_first_bias_gqa(
    %x: tensor<1x8x16xf32>, %w_q: tensor<4x4x3xf32>, %w_k: tensor<2x8x3xf32>,
    %w_v: tensor<2x8x5xf32>, %w_o: tensor<20x16xf32>, %b_q: tensor<12xf32>,
    %b_k: tensor<6xf32>, %b_v: tensor<10xf32>, %b_o: tensor<16xf32>) -> tensor<1x8x16xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(4) kv_heads(2)
      : (tensor<1x8x16xf32>, tensor<4x4x3xf32>, tensor<2x8x3xf32>, tensor<2x8x5xf32>,
         tensor<20x16xf32>, tensor<12xf32>, tensor<6xf32>, tensor<10xf32>,
         tensor<16xf32>) -> tensor<1x8x16xf32>
  return %y : tensor<1x8x16xf32>
}

// -----

// Dynamic batch and sequence lengths, cross-attention with a mask.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: mha.attention %{{[^ ]+}} kv(%{{.+}}) mask(%{{.+}}) weights({{.*}}) heads(4) causal : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x?xi1>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
func.func @attention_dynamic(%x: tensor<?x?x64xf32>, %kv: tensor<?x?x32xf32>,
                             %m: tensor<?x?x?xi1>, %w_q: tensor<64x64xf32>,
                             %w_k: tensor<32x64xf32>, %w_v: tensor<32x64xf32>,
                             %w_o: tensor<64x64xf32>) -> tensor<?x?x64xf32> {
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(4) causal
      : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x?xi1>, tensor<64x64xf32>,
         tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// The generic form of mha.attention names its operand segments.
// CHECK-LABEL: func.func @attention_generic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8xf32>, %[[W:[^:]+]]: tensor<8x8xf32>, %[[WKV:[^:]+]]: tensor<8x4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK: mha.attention %[[X]] weights(%[[W]], %[[WKV]], %[[WKV]], %[[W]]) bias_v(%[[B]]) heads(2) kv_heads(1) causal : (
func.func @attention_generic(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %w_kv: tensor<8x4xf32>,
                             %b: tensor<4xf32>) -> tensor<1x4x8xf32> {
  %y = "mha.attention"(%x, %w, %w_kv, %w_kv, %w, %b)
      <{causal, num_heads = 2 : i64, num_kv_heads = 1 : i64,
        operandSegmentSizes = array<i32: 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>}>
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>,
         tensor<8x8xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// The attention weights of an sdpa: mask, causal and scale as in mha.sdpa;
// grouped-query heads and dynamic sizes.
// CHECK-LABEL: func.func @attention_weights
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x8x?x16xf32>, %[[K:[^:]+]]: tensor<?x2x?x16xf32>, %[[M:[^:]+]]: tensor<1x?x?xi1>)
// CHECK: %[[P:.+]] = mha.attention_weights %[[Q]], %[[K]] mask(%[[M]]) causal scale(2.500000e-01) : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<1x?x?xi1>) -> tensor<?x8x?x?xf32>
// CHECK: %[[R:.+]] = mha.attention_weights %[[Q]], %[[K]] : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x8x?x?xf32>
// CHECK: return %[[P]], %[[R]]
func.func @attention_weights(%q: tensor<?x8x?x16xf32>, %k: tensor<?x2x?x16xf32>, %m: tensor<1x?x?xi1>)
    -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) {
  %p = mha.attention_weights %q, %k mask(%m) causal scale(0.25)
      : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<1x?x?xi1>) -> tensor<?x8x?x?xf32>
  %r = mha.attention_weights %q, %k : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x8x?x?xf32>
  return %p, %r : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>
}
