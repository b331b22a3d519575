// RUN: mha-opt %s -split-input-file --mha-extract-attention-weights | FileCheck %s

// mha-extract-attention-weights adds @<name>_attention_weights beside each
// public function: the same arguments, the weights [B, H, T, S] of its one
// attention as the result, and nothing of the layer that does not feed them.

// A whole layer in one op, masked and causal, with dynamic sizes: the clone
// is expanded, keeps the Q and K projections and returns the weights with the
// same mask, causal and scale; V and the output projection are gone. The
// layer itself is left alone.
// CHECK-LABEL: func.func @layer(
// CHECK: mha.attention
// CHECK-LABEL: func.func @layer_attention_weights
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32> {mha.name = "x"}, %[[M:[^:]+]]: tensor<1x?x?xi1> {mha.name = "mask"}, %[[WQ:[^:]+]]: tensor<8x8xf32> {mha.name = "w_q"}, %[[WK:[^:]+]]: tensor<8x8xf32> {mha.name = "w_k"}, %{{[^:]+}}: tensor<8x8xf32> {mha.name = "w_v"}, %{{[^:]+}}: tensor<8x8xf32> {mha.name = "w_o"}, %[[BQ:[^:]+]]: tensor<8xf32> {mha.name = "b_q"}, %{{[^:]+}}: tensor<8xf32> {mha.name = "b_o"})
// CHECK-SAME: -> tensor<?x2x?x?xf32>
// CHECK-NOT: mha.attention
// CHECK-DAG: %[[Q:.+]] = mha.project %[[X]], %[[WQ]] bias(%[[BQ]])
// CHECK-DAG: %[[QH:.+]] = mha.split_heads %[[Q]] heads(2)
// CHECK-DAG: %[[K:.+]] = mha.project %[[X]], %[[WK]] :
// CHECK-DAG: %[[KH:.+]] = mha.split_heads %[[K]] heads(2)
// CHECK: %[[P:.+]] = mha.attention_weights %[[QH]], %[[KH]] mask(%[[M]]) causal scale(5.000000e-01) : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<1x?x?xi1>) -> tensor<?x2x?x?xf32>
// CHECK-NOT: mha.
// CHECK: return %[[P]] : tensor<?x2x?x?xf32>
func.func @layer(%x: tensor<?x?x8xf32> {mha.name = "x"}, %m: tensor<1x?x?xi1> {mha.name = "mask"},
                 %w_q: tensor<8x8xf32> {mha.name = "w_q"}, %w_k: tensor<8x8xf32> {mha.name = "w_k"},
                 %w_v: tensor<8x8xf32> {mha.name = "w_v"}, %w_o: tensor<8x8xf32> {mha.name = "w_o"},
                 %b_q: tensor<8xf32> {mha.name = "b_q"}, %b_o: tensor<8xf32> {mha.name = "b_o"}) -> tensor<?x?x8xf32> {
  %y = mha.attention %x mask(%m) weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q) bias_o(%b_o) heads(2) causal scale(0.5)
      : (tensor<?x?x8xf32>, tensor<1x?x?xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// A graph written step by step: the sdpa's operands are taken as they are
// (grouped-query: 4 query heads read 2 key heads).
// CHECK-LABEL: func.func @steps_attention_weights
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x3x2xf32>, %[[K:[^:]+]]: tensor<1x2x5x2xf32>, %{{[^:]+}}: tensor<1x2x5x2xf32>) -> tensor<1x4x3x5xf32>
// CHECK-NEXT: %[[P:.+]] = mha.attention_weights %[[Q]], %[[K]] : (tensor<1x4x3x2xf32>, tensor<1x2x5x2xf32>) -> tensor<1x4x3x5xf32>
// CHECK-NEXT: return %[[P]]
func.func @steps(%q: tensor<1x4x3x2xf32>, %k: tensor<1x2x5x2xf32>, %v: tensor<1x2x5x2xf32>) -> tensor<1x3x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x4x3x2xf32>, tensor<1x2x5x2xf32>, tensor<1x2x5x2xf32>) -> tensor<1x4x3x2xf32>
  %c = mha.concat_heads %o : tensor<1x4x3x2xf32> -> tensor<1x3x8xf32>
  return %c : tensor<1x3x8xf32>
}
