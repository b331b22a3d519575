// RUN: mha-opt %s -split-input-file --mha-expand | FileCheck %s

// mha-expand rewrites mha.attention into the five steps of the layer:
// project (Q, K, V), split_heads, sdpa, concat_heads, output_project.

// Standard self-attention with every bias: K and V come from the input too.
// CHECK-LABEL: func.func @self_attention
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x128x512xf32>, %[[WQ:[^:]+]]: tensor<512x512xf32>, %[[WK:[^:]+]]: tensor<512x512xf32>, %[[WV:[^:]+]]: tensor<512x512xf32>, %[[WO:[^:]+]]: tensor<512x256xf32>, %[[BQ:[^:]+]]: tensor<512xf32>, %[[BK:[^:]+]]: tensor<512xf32>, %[[BV:[^:]+]]: tensor<512xf32>, %[[BO:[^:]+]]: tensor<256xf32>)
// CHECK-NOT: mha.attention
// CHECK: %[[Q:.+]] = mha.project %[[X]], %[[WQ]] bias(%[[BQ]]) : (tensor<1x128x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<1x128x512xf32>
// CHECK: %[[QH:.+]] = mha.split_heads %[[Q]] heads(8) : tensor<1x128x512xf32> -> tensor<1x8x128x64xf32>
// CHECK: %[[K:.+]] = mha.project %[[X]], %[[WK]] bias(%[[BK]])
// CHECK: %[[KH:.+]] = mha.split_heads %[[K]] heads(8)
// CHECK: %[[V:.+]] = mha.project %[[X]], %[[WV]] bias(%[[BV]])
// CHECK: %[[VH:.+]] = mha.split_heads %[[V]] heads(8)
// CHECK: %[[O:.+]] = mha.sdpa %[[QH]], %[[KH]], %[[VH]] : (tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32>
// CHECK: %[[C:.+]] = mha.concat_heads %[[O]] : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
// CHECK: %[[Y:.+]] = mha.output_project %[[C]], %[[WO]] bias(%[[BO]]) : (tensor<1x128x512xf32>, tensor<512x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
// CHECK-NOT: mha.attention
// CHECK: return %[[Y]]
func.func @self_attention(%x: tensor<1x128x512xf32>, %w_q: tensor<512x512xf32>,
                          %w_k: tensor<512x512xf32>, %w_v: tensor<512x512xf32>,
                          %w_o: tensor<512x256xf32>, %b_q: tensor<512xf32>,
                          %b_k: tensor<512xf32>, %b_v: tensor<512xf32>,
                          %b_o: tensor<256xf32>) -> tensor<1x128x256xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(8)
      : (tensor<1x128x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x256xf32>, tensor<512xf32>,
         tensor<512xf32>, tensor<512xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  return %y : tensor<1x128x256xf32>
}

// -----

// Cross-attention: Q from x, K and V from kv (width 32, length 11); no bias.
// CHECK-LABEL: func.func @cross_attention
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x5x48xf32>, %[[KV:[^:]+]]: tensor<1x11x32xf32>, %[[WQ:[^:]+]]: tensor<48x48xf32>, %[[WK:[^:]+]]: tensor<32x48xf32>, %[[WV:[^:]+]]: tensor<32x48xf32>, %[[WO:[^:]+]]: tensor<48x48xf32>)
// CHECK: %[[Q:.+]] = mha.project %[[X]], %[[WQ]] : (tensor<1x5x48xf32>, tensor<48x48xf32>) -> tensor<1x5x48xf32>
// CHECK: %[[QH:.+]] = mha.split_heads %[[Q]] heads(4) : tensor<1x5x48xf32> -> tensor<1x4x5x12xf32>
// CHECK: %[[K:.+]] = mha.project %[[KV]], %[[WK]] : (tensor<1x11x32xf32>, tensor<32x48xf32>) -> tensor<1x11x48xf32>
// CHECK: %[[KH:.+]] = mha.split_heads %[[K]] heads(4) : tensor<1x11x48xf32> -> tensor<1x4x11x12xf32>
// CHECK: %[[V:.+]] = mha.project %[[KV]], %[[WV]]
// CHECK: %[[VH:.+]] = mha.split_heads %[[V]] heads(4)
// CHECK: %[[O:.+]] = mha.sdpa %[[QH]], %[[KH]], %[[VH]] : ({{.*}}) -> tensor<1x4x5x12xf32>
// CHECK: %[[C:.+]] = mha.concat_heads %[[O]]
// CHECK: %[[Y:.+]] = mha.output_project %[[C]], %[[WO]] : (tensor<1x5x48xf32>, tensor<48x48xf32>) -> tensor<1x5x48xf32>
// CHECK: return %[[Y]]
func.func @cross_attention(%x: tensor<1x5x48xf32>, %kv: tensor<1x11x32xf32>,
                           %w_q: tensor<48x48xf32>, %w_k: tensor<32x48xf32>,
                           %w_v: tensor<32x48xf32>, %w_o: tensor<48x48xf32>) -> tensor<1x5x48xf32> {
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(4)
      : (tensor<1x5x48xf32>, tensor<1x11x32xf32>, tensor<48x48xf32>, tensor<32x48xf32>,
         tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<1x5x48xf32>
  return %y : tensor<1x5x48xf32>
}

// -----

// Grouped-query: 8 query heads, K and V split into 2 key/value heads.
// CHECK-LABEL: func.func @grouped_query
// CHECK-SAME: %[[BK:[^:]+]]: tensor<16xf32>, %[[BV:[^:]+]]: tensor<16xf32>)
// CHECK: mha.split_heads %{{.+}} heads(8) : tensor<1x10x64xf32> -> tensor<1x8x10x8xf32>
// CHECK: %[[K:.+]] = mha.project %{{.+}}, %{{.+}} bias(%[[BK]]) : (tensor<1x10x64xf32>, tensor<64x16xf32>, tensor<16xf32>) -> tensor<1x10x16xf32>
// CHECK: %[[KH:.+]] = mha.split_heads %[[K]] heads(2) : tensor<1x10x16xf32> -> tensor<1x2x10x8xf32>
// CHECK: %[[V:.+]] = mha.project %{{.+}}, %{{.+}} bias(%[[BV]])
// CHECK: %[[VH:.+]] = mha.split_heads %[[V]] heads(2) : tensor<1x10x16xf32> -> tensor<1x2x10x8xf32>
// CHECK: mha.sdpa %{{.+}}, %[[KH]], %[[VH]] : (tensor<1x8x10x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x8xf32>) -> tensor<1x8x10x8xf32>
func.func @grouped_query(%x: tensor<1x10x64xf32>, %w_q: tensor<64x64xf32>,
                         %w_k: tensor<64x16xf32>, %w_v: tensor<64x16xf32>,
                         %w_o: tensor<64x64xf32>, %b_k: tensor<16xf32>,
                         %b_v: tensor<16xf32>) -> tensor<1x10x64xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_k(%b_k) bias_v(%b_v)
      heads(8) kv_heads(2)
      : (tensor<1x10x64xf32>, tensor<64x64xf32>, tensor<64x16xf32>, tensor<64x16xf32>,
         tensor<64x64xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x10x64xf32>
  return %y : tensor<1x10x64xf32>
}

// -----

// Split first (the worked example): the input is split into head slices once,
// and Q, K and V each project those slices with per-head matrices.
// CHECK-LABEL: func.func @split_first
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x8x4xf32>, %[[WQ:[^:]+]]: tensor<2x2x2xf32>, %[[WK:[^:]+]]: tensor<2x2x2xf32>, %[[WV:[^:]+]]: tensor<2x2x2xf32>, %[[WO:[^:]+]]: tensor<4x4xf32>)
// CHECK: %[[XH:.+]] = mha.split_heads %[[X]] heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
// CHECK-NOT: mha.split_heads
// CHECK: %[[Q:.+]] = mha.project %[[XH]], %[[WQ]] : (tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
// CHECK-NOT: mha.split_heads
// CHECK: %[[K:.+]] = mha.project %[[XH]], %[[WK]]
// CHECK-NOT: mha.split_heads
// CHECK: %[[V:.+]] = mha.project %[[XH]], %[[WV]]
// CHECK-NOT: mha.split_heads
// CHECK: %[[O:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]] : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
// CHECK: %[[C:.+]] = mha.concat_heads %[[O]] : tensor<1x2x8x2xf32> -> tensor<1x8x4xf32>
// CHECK: %[[Y:.+]] = mha.output_project %[[C]], %[[WO]] : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
// CHECK: return %[[Y]]
func.func @split_first(%x: tensor<1x8x4xf32>, %w_q: tensor<2x2x2xf32>, %w_k: tensor<2x2x2xf32>,
                       %w_v: tensor<2x2x2xf32>, %w_o: tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x8x4xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>,
         tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// Split first with grouped-query cross-attention and biases: x is split into
// H = 4 slices for Q, kv once into Hkv = 2 slices shared by K and V.
// CHECK-LABEL: func.func @split_first_cross_gqa
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x8x16xf32>, %[[KV:[^:]+]]: tensor<1x6x12xf32>, %[[WQ:[^:]+]]: tensor<4x4x3xf32>, %[[WK:[^:]+]]: tensor<2x6x3xf32>, %[[WV:[^:]+]]: tensor<2x6x5xf32>, %[[WO:[^:]+]]: tensor<20x16xf32>, %[[BQ:[^:]+]]: tensor<12xf32>, %[[BK:[^:]+]]: tensor<6xf32>, %[[BV:[^:]+]]: tensor<10xf32>)
// CHECK: %[[XH:.+]] = mha.split_heads %[[X]] heads(4) : tensor<1x8x16xf32> -> tensor<1x4x8x4xf32>
// CHECK: %[[Q:.+]] = mha.project %[[XH]], %[[WQ]] bias(%[[BQ]]) : (tensor<1x4x8x4xf32>, tensor<4x4x3xf32>, tensor<12xf32>) -> tensor<1x4x8x3xf32>
// CHECK: %[[KVH:.+]] = mha.split_heads %[[KV]] heads(2) : tensor<1x6x12xf32> -> tensor<1x2x6x6xf32>
// CHECK-NOT: mha.split_heads
// CHECK: %[[K:.+]] = mha.project %[[KVH]], %[[WK]] bias(%[[BK]]) : (tensor<1x2x6x6xf32>, tensor<2x6x3xf32>, tensor<6xf32>) -> tensor<1x2x6x3xf32>
// CHECK: %[[V:.+]] = mha.project %[[KVH]], %[[WV]] bias(%[[BV]]) : (tensor<1x2x6x6xf32>, tensor<2x6x5xf32>, tensor<10xf32>) -> tensor<1x2x6x5xf32>
// CHECK: %[[O:.+]] = mha.sdpa %[[Q]], %[[K]], %[[V]] : ({{.*}}) -> tensor<1x4x8x5xf32>
// CHECK: %[[C:.+]] = mha.concat_heads %[[O]] : tensor<1x4x8x5xf32> -> tensor<1x8x20xf32>
// CHECK: mha.output_project %[[C]], %[[WO]] :
func.func @split_first_cross_gqa(%x: tensor<1x8x16xf32>, %kv: tensor<1x6x12xf32>,
                                 %w_q: tensor<4x4x3xf32>, %w_k: tensor<2x6x3xf32>,
                                 %w_v: tensor<2x6x5xf32>, %w_o: tensor<20x16xf32>,
                                 %b_q: tensor<12xf32>, %b_k: tensor<6xf32>,
                                 %b_v: tensor<10xf32>) -> tensor<1x8x16xf32> {
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) heads(4) kv_heads(2)
      : (tensor<1x8x16xf32>, tensor<1x6x12xf32>, tensor<4x4x3xf32>, tensor<2x6x3xf32>,
         tensor<2x6x5xf32>, tensor<20x16xf32>, tensor<12xf32>, tensor<6xf32>,
         tensor<10xf32>) -> tensor<1x8x16xf32>
  return %y : tensor<1x8x16xf32>
}

// -----

// Mask, causal and scale go to mha.sdpa unchanged.
// CHECK-LABEL: func.func @mask_causal_scale
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x16x16xi1>
// CHECK: mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]]) causal scale(2.500000e-01) : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x16x16xi1>) -> tensor<2x4x16x16xf32>
func.func @mask_causal_scale(%x: tensor<2x16x64xf32>, %m: tensor<2x16x16xi1>,
                             %w: tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  %y = mha.attention %x mask(%m) weights(%w, %w, %w, %w) heads(4) causal scale(0.25)
      : (tensor<2x16x64xf32>, tensor<2x16x16xi1>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Without causal, mask or scale the sdpa has none either (scale stays the
// default 1/sqrt(dk) rather than a materialized constant).
// CHECK-LABEL: func.func @no_options
// CHECK: mha.sdpa %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : (
func.func @no_options(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(4)
      : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Dynamic batch and sequence sizes stay dynamic through every step.
// CHECK-LABEL: func.func @dynamic
// CHECK: mha.project %{{.+}} -> tensor<?x?x64xf32>
// CHECK: mha.split_heads %{{.+}} heads(4) : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
// CHECK: mha.project %{{.+}} : (tensor<?x?x32xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>
// CHECK: mha.sdpa %{{.+}} mask(%{{.+}}) : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x?x?xi1>) -> tensor<?x4x?x16xf32>
// CHECK: mha.concat_heads %{{.+}} : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
// CHECK: mha.output_project %{{.+}} -> tensor<?x?x64xf32>
func.func @dynamic(%x: tensor<?x?x64xf32>, %kv: tensor<?x?x32xf32>, %m: tensor<?x?x?xi1>,
                   %w_q: tensor<64x64xf32>, %w_k: tensor<32x64xf32>, %w_v: tensor<32x64xf32>,
                   %w_o: tensor<64x64xf32>) -> tensor<?x?x64xf32> {
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(4)
      : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x?xi1>, tensor<64x64xf32>,
         tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Two layers in a row: each is expanded, the second reads the first's output.
// CHECK-LABEL: func.func @two_layers
// CHECK: %[[Y1:.+]] = mha.output_project
// CHECK: mha.project %[[Y1]],
// CHECK: %[[Y2:.+]] = mha.output_project
// CHECK-NOT: mha.attention
// CHECK: return %[[Y2]]
func.func @two_layers(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  %a = mha.attention %x weights(%w, %w, %w, %w) heads(2)
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
         tensor<16x16xf32>) -> tensor<1x8x16xf32>
  %b = mha.attention %a weights(%w, %w, %w, %w) heads(4) causal
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
         tensor<16x16xf32>) -> tensor<1x8x16xf32>
  return %b : tensor<1x8x16xf32>
}

// -----

// A function without mha.attention is left as it is, five steps included.
// CHECK-LABEL: func.func @no_attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[W:[^:]+]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[O:.+]] = mha.sdpa %[[Q]], %[[Q]], %[[Q]] causal :
// CHECK-NEXT: %[[C:.+]] = mha.concat_heads %[[O]] :
// CHECK-NEXT: %[[Y:.+]] = mha.output_project %[[C]], %[[W]] :
// CHECK-NEXT: return %[[Y]]
func.func @no_attention(%q: tensor<1x2x8x4xf32>, %w: tensor<8x8xf32>) -> tensor<1x8x8xf32> {
  %o = mha.sdpa %q, %q, %q causal
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %c = mha.concat_heads %o : tensor<1x2x8x4xf32> -> tensor<1x8x8xf32>
  %y = mha.output_project %c, %w : (tensor<1x8x8xf32>, tensor<8x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}
