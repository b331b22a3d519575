// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s

// The score_mod region of the attention ops (docs/dialect.md): it prints and
// parses back on mha.sdpa, mha.attention_weights and mha.attention, after
// the clauses, and on the compiler's mha.online_attention (with its score
// inputs) and mha.sdpa_split.

// CHECK-LABEL: func.func @sdpa_table(
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal softcap(3.000000e+01) score_mod {
//  CHECK-NEXT:   ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[P:.+]]: index, %[[J:.+]]: index):
//  CHECK-NEXT:     %[[BACK:.+]] = arith.subi %[[P]], %[[J]] : index
//       CHECK:     %[[BIAS:.+]] = tensor.extract %{{.+}}[%[[H]], %{{.+}}] : tensor<2x32xf32>
//  CHECK-NEXT:     %[[T:.+]] = arith.addf %[[S]], %[[BIAS]] : f32
//  CHECK-NEXT:     mha.yield %[[T]] : f32
//  CHECK-NEXT:   } :
func.func @sdpa_table(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                      %v: tensor<1x2x8x16xf32>, %table: tensor<2x32xf32>)
    -> tensor<1x2x8x16xf32> {
  %o = mha.sdpa %q, %k, %v softcap(30.0) causal score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
    %back = arith.subi %p, %j : index
    %c31 = arith.constant 31 : index
    %bucket = arith.minui %back, %c31 : index
    %bias = tensor.extract %table[%h, %bucket] : tensor<2x32xf32>
    %t = arith.addf %s, %bias : f32
    mha.yield %t : f32
  } : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @weights_and_layer(
//       CHECK:   mha.attention_weights %{{.+}}, %{{.+}} score_mod {
//       CHECK:     mha.yield %{{.+}} : f32
//       CHECK:   mha.attention %{{.+}} weights(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) heads(2) causal score_mod {
//       CHECK:     mha.yield %{{.+}} : f32
func.func @weights_and_layer(%q: tensor<1x2x8x16xf32>, %x: tensor<1x8x32xf32>,
                             %w: tensor<32x32xf32>)
    -> (tensor<1x2x8x8xf32>, tensor<1x8x32xf32>) {
  %p = mha.attention_weights %q, %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    mha.yield %t : f32
  } : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) causal score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    mha.yield %s : f32
  } : (tensor<1x8x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
       tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<1x8x32xf32>
  return %p, %y : tensor<1x2x8x8xf32>, tensor<1x8x32xf32>
}

// -----

// The compiler's form: the region receives the score, one element of each
// score input (a bias block) and the query's and key's positions.
// CHECK-LABEL: func.func @online_attention(
//       CHECK:   mha.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}}) query_start(%{{.+}}) key_start(%{{.+}}) causal_offset(%{{.+}}) scale(1.250000e-01) score_inputs(%{{.+}}) causal outs(%{{.+}}, %{{.+}}, %{{.+}}) scratch(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) score_mod {
//  CHECK-NEXT:   ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: index, %{{.+}}: index):
func.func @online_attention(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>,
                            %bias: tensor<1x32xf32>, %i: index, %j: index, %o: index,
                            %m: tensor<16xf32>, %l: tensor<16xf32>,
                            %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
                            %nm: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16x6xf32> {
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j)
      causal_offset(%o) scale(0.125) score_inputs(%bias) causal
      outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c) score_mod {
  ^bb0(%score: f32, %b: f32, %p: index, %key: index):
    %t = arith.addf %score, %b : f32
    mha.yield %t : f32
  } : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index,
       index, tensor<1x32xf32>, tensor<16xf32>, tensor<16xf32>,
       tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>,
       tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return %r#2 : tensor<16x6xf32>
}

// -----

// CHECK-LABEL: func.func @split(
//       CHECK:   mha.sdpa_split {{.+}} outs(%{{.+}}, %{{.+}}, %{{.+}}) score_mod {
//  CHECK-NEXT:   ^bb0(%{{.+}}: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
func.func @split(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x4096x64xf32>, %v: tensor<2x2x4096x64xf32>,
                 %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>,
                 %l: tensor<2x8x1xf32>) -> tensor<2x8x1x64xf32> {
  %acc_r, %m_r, %l_r = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(64)
      scale(0.125) outs(%acc, %m, %l) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    mha.yield %s : f32
  } : (tensor<2x8x1x64xf32>, tensor<2x2x4096x64xf32>, tensor<2x2x4096x64xf32>,
       index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
      -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return %acc_r : tensor<2x8x1x64xf32>
}
