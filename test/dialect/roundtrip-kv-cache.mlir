// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s
// RUN: mha-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A decoding step: append the new keys and values to the caches at each
// sequence's length, attend causally from those positions.

// CHECK-LABEL: func.func @decode_step(
//       CHECK:   %[[KC:.+]] = mha.cache_append %{{.+}} into %{{.+}} at %[[L:[^ ]+]] : tensor<4x2x1x8xf32> into tensor<4x2x64x8xf32> at tensor<4xi64>
//       CHECK:   %[[VC:.+]] = mha.cache_append %{{.+}} into %{{.+}} at %[[L]] : tensor<4x2x1x16xf32> into tensor<4x2x64x16xf32> at tensor<4xi64>
//       CHECK:   mha.sdpa %{{.+}}, %[[KC]], %[[VC]] causal positions(%[[L]]) :
//       CHECK:   mha.attention_weights %{{.+}}, %[[KC]] causal positions(%[[L]]) scale(5.000000e-01) :
// GENERIC-LABEL: sym_name = "decode_step"
//       GENERIC:   "mha.cache_append"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4x2x1x8xf32>, tensor<4x2x64x8xf32>, tensor<4xi64>) -> tensor<4x2x64x8xf32>
//       GENERIC:   "mha.sdpa"(%{{.+}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0>}>
func.func @decode_step(%q: tensor<4x8x1x8xf32>, %k: tensor<4x2x1x8xf32>,
                       %v: tensor<4x2x1x16xf32>, %kcache: tensor<4x2x64x8xf32>,
                       %vcache: tensor<4x2x64x16xf32>, %len: tensor<4xi64>)
    -> (tensor<4x8x1x16xf32>, tensor<4x8x1x64xf32>, tensor<4x2x64x8xf32>, tensor<4x2x64x16xf32>) {
  %kc = mha.cache_append %k into %kcache at %len : tensor<4x2x1x8xf32> into tensor<4x2x64x8xf32> at tensor<4xi64>
  %vc = mha.cache_append %v into %vcache at %len : tensor<4x2x1x16xf32> into tensor<4x2x64x16xf32> at tensor<4xi64>
  %o = mha.sdpa %q, %kc, %vc causal positions(%len)
      : (tensor<4x8x1x8xf32>, tensor<4x2x64x8xf32>, tensor<4x2x64x16xf32>, tensor<4xi64>) -> tensor<4x8x1x16xf32>
  %p = mha.attention_weights %q, %kc causal positions(%len) scale(0.5)
      : (tensor<4x8x1x8xf32>, tensor<4x2x64x8xf32>, tensor<4xi64>) -> tensor<4x8x1x64xf32>
  return %o, %p, %kc, %vc : tensor<4x8x1x16xf32>, tensor<4x8x1x64xf32>, tensor<4x2x64x8xf32>, tensor<4x2x64x16xf32>
}

// -----

// Dynamic batch, new tokens and capacity; a mask goes with the positions.
// CHECK-LABEL: func.func @dynamic(
//       CHECK:   mha.cache_append %{{.+}} into %{{.+}} at %{{.+}} : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32> at tensor<?xi64>
//       CHECK:   mha.sdpa %{{.+}} mask(%{{.+}}) causal positions(%{{.+}}) :
func.func @dynamic(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %cache: tensor<?x2x?x8xf32>,
                   %len: tensor<?xi64>, %m: tensor<1x?x?xi1>) -> tensor<?x2x?x8xf32> {
  %kc = mha.cache_append %k into %cache at %len : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32> at tensor<?xi64>
  %o = mha.sdpa %q, %kc, %kc mask(%m) causal positions(%len)
      : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<1x?x?xi1>, tensor<?xi64>) -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}
