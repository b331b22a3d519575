// RUN: mha-opt %s | mha-opt | FileCheck %s

// CHECK-LABEL: func.func @paged
// CHECK: %[[P:.+]] = mha.paged_cache_append %{{.*}} into %{{.*}} through %[[T:.+]] at %{{.*}} : tensor<?x2x1x8xbf16> into tensor<?x2x32x8xbf16> through tensor<?x3xi32> at tensor<?xi64>
// CHECK: mha.paged_view %[[P]] through %[[T]] : tensor<?x2x32x8xbf16> through tensor<?x3xi32> -> tensor<?x2x96x8xbf16>
func.func @paged(%k: tensor<?x2x1x8xbf16>, %pool: tensor<?x2x32x8xbf16>, %t: tensor<?x3xi32>, %len: tensor<?xi64>) -> tensor<?x2x96x8xbf16> {
  %p = mha.paged_cache_append %k into %pool through %t at %len : tensor<?x2x1x8xbf16> into tensor<?x2x32x8xbf16> through tensor<?x3xi32> at tensor<?xi64>
  %v = mha.paged_view %p through %t : tensor<?x2x32x8xbf16> through tensor<?x3xi32> -> tensor<?x2x96x8xbf16>
  return %v : tensor<?x2x96x8xbf16>
}
