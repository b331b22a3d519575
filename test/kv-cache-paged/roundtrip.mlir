// RUN: mha-opt %s | mha-opt | FileCheck %s

// CHECK-LABEL: func.func @paged
// CHECK: %[[P:.+]] = mha.paged_cache_append %{{.*}} into %{{.*}} through %[[T:.+]] at %{{.*}} : tensor<?x2x1x8xbf16> into tensor<?x2x32x8xbf16> through tensor<?x3xi32> at tensor<?xi64>
// CHECK: mha.paged_view %[[P]] through %[[T]] : tensor<?x2x32x8xbf16> through tensor<?x3xi32> -> tensor<?x2x96x8xbf16>
func.func @paged(%k: tensor<?x2x1x8xbf16>, %pool: tensor<?x2x32x8xbf16>, %t: tensor<?x3xi32>, %len: tensor<?xi64>) -> tensor<?x2x96x8xbf16> {
  %p = mha.paged_cache_append %k into %pool through %t at %len : tensor<?x2x1x8xbf16> into tensor<?x2x32x8xbf16> through tensor<?x3xi32> at tensor<?xi64>
  %v = mha.paged_view %p through %t : tensor<?x2x32x8xbf16> through tensor<?x3xi32> -> tensor<?x2x96x8xbf16>
  return %v : tensor<?x2x96x8xbf16>
}

// An int8 cache in pages: codes and one scale per row, appended together
// and viewed apart (mha.dequantize reads both views).
// CHECK-LABEL: func.func @paged_int8
// CHECK: %[[C:.+]], %[[S:.+]] = mha.paged_cache_append_quantized %{{.*}} into %{{.*}}, %{{.*}} through %[[T:.+]] at %{{.*}} : tensor<2x2x1x8xf32> into tensor<6x2x16x8xi8>, tensor<6x2x16xf32> through tensor<2x3xi32> at tensor<2xi64>
// CHECK: %[[VC:.+]] = mha.paged_view %[[C]] through %[[T]] : tensor<6x2x16x8xi8> through tensor<2x3xi32> -> tensor<2x2x48x8xi8>
// CHECK: %[[VS:.+]] = mha.paged_view %[[S]] through %[[T]] : tensor<6x2x16xf32> through tensor<2x3xi32> -> tensor<2x2x48xf32>
// CHECK: mha.dequantize %[[VC]], %[[VS]]
func.func @paged_int8(%k: tensor<2x2x1x8xf32>, %codes: tensor<6x2x16x8xi8>, %scales: tensor<6x2x16xf32>, %t: tensor<2x3xi32>, %len: tensor<2xi64>) -> tensor<2x2x48x8xf32> {
  %c, %s = mha.paged_cache_append_quantized %k into %codes, %scales through %t at %len : tensor<2x2x1x8xf32> into tensor<6x2x16x8xi8>, tensor<6x2x16xf32> through tensor<2x3xi32> at tensor<2xi64>
  %vc = mha.paged_view %c through %t : tensor<6x2x16x8xi8> through tensor<2x3xi32> -> tensor<2x2x48x8xi8>
  %vs = mha.paged_view %s through %t : tensor<6x2x16xf32> through tensor<2x3xi32> -> tensor<2x2x48xf32>
  %k2 = mha.dequantize %vc, %vs : tensor<2x2x48x8xi8>, tensor<2x2x48xf32> -> tensor<2x2x48x8xf32>
  return %k2 : tensor<2x2x48x8xf32>
}
