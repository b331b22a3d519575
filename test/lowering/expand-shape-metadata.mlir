// RUN: mha-opt %s -split-input-file -mha-expand-shape-metadata | FileCheck %s

// Rows [B·T, D] back to [B, T, D] with B and T dynamic: two dynamic sizes in
// one group, which LLVM 22's expand-strided-metadata cannot handle. The
// sizes come from output_shape; inside the group the outer stride is the
// inner size times the source stride.
// CHECK-LABEL: func.func @two_dynamic_sizes_in_a_group
//  CHECK-SAME:   (%[[SRC:.+]]: memref<?x4xf32>, %[[B:.+]]: index, %[[T:.+]]: index)
//       CHECK:   %[[C4:.+]] = arith.constant 4 : index
//       CHECK:   %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %[[SRC]]
//       CHECK:   %[[STRIDE:.+]] = arith.muli %[[T]], %[[C4]] : index
//       CHECK:   %[[VIEW:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[T]], 2, 2], strides: [%[[STRIDE]], 4, 2, 1] : memref<f32> to memref<?x?x2x2xf32>
//       CHECK:   return %[[VIEW]]
func.func @two_dynamic_sizes_in_a_group(%src: memref<?x4xf32>, %b: index, %t: index) -> memref<?x?x2x2xf32> {
  %e = memref.expand_shape %src [[0, 1], [2, 3]] output_shape [%b, %t, 2, 2]
      : memref<?x4xf32> into memref<?x?x2x2xf32>
  return %e : memref<?x?x2x2xf32>
}

// -----

// A strided source keeps its strides and offset.
// CHECK-LABEL: func.func @strided_source
//       CHECK:   %[[BASE:.+]], %[[OFFSET:.+]], %{{.+}}:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata
//       CHECK:   %[[OUTER:.+]] = arith.muli %[[STRIDES]]#0, %{{.+}} : index
//       CHECK:   memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [%{{.+}}, %{{.+}}, 8], strides: [%[[OUTER]], %[[STRIDES]]#0, 1]
func.func @strided_source(%src: memref<?x8xf32, strided<[?, 1], offset: ?>>, %b: index, %t: index) -> memref<?x?x8xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %src [[0, 1], [2]] output_shape [%b, %t, 8]
      : memref<?x8xf32, strided<[?, 1], offset: ?>> into memref<?x?x8xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x8xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// At most one dynamic size per group: left to expand-strided-metadata.
// CHECK-LABEL: func.func @negative_one_dynamic_size_per_group
//       CHECK:   memref.expand_shape
//   CHECK-NOT:   memref.reinterpret_cast
func.func @negative_one_dynamic_size_per_group(%src: memref<?x8xf32>, %b: index) -> memref<?x2x8xf32> {
  %e = memref.expand_shape %src [[0, 1], [2]] output_shape [%b, 2, 8]
      : memref<?x8xf32> into memref<?x2x8xf32>
  return %e : memref<?x2x8xf32>
}
