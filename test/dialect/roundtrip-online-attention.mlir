// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s

// mha.online_attention, the online-softmax update that mha-tile-attention
// makes of one query tile (docs/dialect.md): it prints and parses back, with
// and without its optional operands.

// CHECK-LABEL: func.func @update(
//       CHECK:   %{{.+}}:7 = mha.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}}) query_start(%{{.+}}) key_start(%{{.+}}) scale(1.250000e-01) outs(%{{.+}}, %{{.+}}, %{{.+}}) scratch(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
func.func @update(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>,
                  %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>,
                  %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
                  %nm: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16x6xf32> {
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j)
      scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c)
      : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index,
         tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
         tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return %r#2 : tensor<16x6xf32>
}

// -----

// Every optional operand: Kᵀ, the mask, the causal offset, and bf16 keys
// and values with their widened scratch ([BK, max(dk, dv)]); dynamic rows
// and keys.
// CHECK-LABEL: func.func @update_all(
//       CHECK:   mha.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}}) keys_t(%{{.+}}) mask(%{{.+}}) query_start(%{{.+}}) key_start(%{{.+}}) causal_offset(%{{.+}}) scale(5.000000e-01) causal outs(%{{.+}}, %{{.+}}, %{{.+}}) scratch(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) :
func.func @update_all(%q: tensor<?x8xf32>, %k: tensor<?x8xbf16>, %v: tensor<?x6xbf16>,
                      %kT: tensor<8x?xf32>, %mask: tensor<?x?xi1>, %i: index, %j: index,
                      %o: index, %m: tensor<?xf32>, %l: tensor<?xf32>,
                      %acc: tensor<?x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
                      %nm: tensor<16xf32>, %c: tensor<16xf32>, %vw: tensor<8x8xf32>)
    -> tensor<?x6xf32> {
  %r:8 = mha.online_attention ins(%q, %k, %v) keys_t(%kT) mask(%mask)
      query_start(%i) key_start(%j) causal_offset(%o) scale(0.5) causal
      outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %vw)
      : (tensor<?x8xf32>, tensor<?x8xbf16>, tensor<?x6xbf16>, tensor<8x?xf32>,
         tensor<?x?xi1>, index, index, index, tensor<?xf32>, tensor<?xf32>,
         tensor<?x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>,
         tensor<16xf32>, tensor<8x8xf32>)
      -> (tensor<?xf32>, tensor<?xf32>, tensor<?x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>)
  return %r#2 : tensor<?x6xf32>
}

// -----

// Keys and values packed in bf16 hi and lo pairs (`packed`, the AMX path of
// bf16 layers).
// CHECK-LABEL: func.func @update_packed(
//       CHECK:   mha.online_attention ins(%{{.+}}, %{{.+}}, %{{.+}}) keys_t(%{{.+}}) query_start(%{{.+}}) key_start(%{{.+}}) scale(1.250000e-01) packed outs(
func.func @update_packed(%q: tensor<16x32xf32>, %k: tensor<32x32xf32>, %v: tensor<32x16xf32>,
                         %kT: tensor<32x32xf32>, %i: index, %j: index,
                         %m: tensor<16xf32>, %l: tensor<16xf32>,
                         %acc: tensor<16x16xf32>, %s: tensor<16x32xf32>, %kt: tensor<32x32xf32>,
                         %nm: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16x16xf32> {
  %r:7 = mha.online_attention ins(%q, %k, %v) keys_t(%kT)
      query_start(%i) key_start(%j) scale(0.125) packed
      outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c)
      : (tensor<16x32xf32>, tensor<32x32xf32>, tensor<32x16xf32>, tensor<32x32xf32>,
         index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x32xf32>,
          tensor<32x32xf32>, tensor<16xf32>, tensor<16xf32>)
  return %r#2 : tensor<16x16xf32>
}
