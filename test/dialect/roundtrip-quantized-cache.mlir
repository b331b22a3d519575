// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s
// RUN: mha-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A decoding step with int8 caches: quantize the new keys and values into
// the codes and scales at each sequence's length, attend to them
// dequantized.

// CHECK-LABEL: func.func @decode_step(
//       CHECK:   %[[KC:[^ ]+]], %[[KS:[^ ]+]] = mha.cache_append_quantized %{{.+}} into %{{.+}}, %{{.+}} at %[[L:[^ ]+]] : tensor<4x2x1x8xf32> into tensor<4x2x64x8xi8>, tensor<4x2x64xf32> at tensor<4xi64>
//       CHECK:   %[[K:.+]] = mha.dequantize %[[KC]], %[[KS]] : tensor<4x2x64x8xi8>, tensor<4x2x64xf32> -> tensor<4x2x64x8xf32>
//       CHECK:   %[[VC:[^ ]+]], %[[VS:[^ ]+]] = mha.cache_append_quantized %{{.+}} into %{{.+}}, %{{.+}} at %{{.+}} : tensor<?x2x?x16xf32> into tensor<?x2x64x16xi8>, tensor<?x2x64xf32> at tensor<?xi64>
//       CHECK:   mha.dequantize %[[VC]], %[[VS]]
//       CHECK:   mha.sdpa %{{.+}}, %[[K]], %{{.+}} causal positions(%[[L]])
// GENERIC-LABEL: sym_name = "decode_step"
//       GENERIC:   "mha.cache_append_quantized"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4x2x1x8xf32>, tensor<4x2x64x8xi8>, tensor<4x2x64xf32>, tensor<4xi64>) -> (tensor<4x2x64x8xi8>, tensor<4x2x64xf32>)
//       GENERIC:   "mha.dequantize"(%{{.+}}, %{{.+}}) : (tensor<4x2x64x8xi8>, tensor<4x2x64xf32>) -> tensor<4x2x64x8xf32>
func.func @decode_step(%q: tensor<4x8x1x8xf32>, %k: tensor<4x2x1x8xf32>,
                       %v: tensor<?x2x?x16xf32>, %kcodes: tensor<4x2x64x8xi8>,
                       %kscales: tensor<4x2x64xf32>, %vcodes: tensor<?x2x64x16xi8>,
                       %vscales: tensor<?x2x64xf32>, %len: tensor<4xi64>)
    -> tensor<4x8x1x16xf32> {
  %kc, %ks = mha.cache_append_quantized %k into %kcodes, %kscales at %len : tensor<4x2x1x8xf32> into tensor<4x2x64x8xi8>, tensor<4x2x64xf32> at tensor<4xi64>
  %kf = mha.dequantize %kc, %ks : tensor<4x2x64x8xi8>, tensor<4x2x64xf32> -> tensor<4x2x64x8xf32>
  %lend = tensor.cast %len : tensor<4xi64> to tensor<?xi64>
  %vc, %vs = mha.cache_append_quantized %v into %vcodes, %vscales at %lend : tensor<?x2x?x16xf32> into tensor<?x2x64x16xi8>, tensor<?x2x64xf32> at tensor<?xi64>
  %vf = mha.dequantize %vc, %vs : tensor<?x2x64x16xi8>, tensor<?x2x64xf32> -> tensor<?x2x64x16xf32>
  %vs4 = tensor.cast %vf : tensor<?x2x64x16xf32> to tensor<4x2x64x16xf32>
  %o = mha.sdpa %q, %kf, %vs4 causal positions(%len) : (tensor<4x8x1x8xf32>, tensor<4x2x64x8xf32>, tensor<4x2x64x16xf32>, tensor<4xi64>) -> tensor<4x8x1x16xf32>
  return %o : tensor<4x8x1x16xf32>
}
