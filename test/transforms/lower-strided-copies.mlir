// RUN: mha-opt %s -split-input-file -mha-lower-strided-copies | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-lower-strided-copies -finalize-memref-to-llvm | FileCheck %s --check-prefix=LLVM

// What the pass is for: after it, finalize-memref-to-llvm calls no
// `memrefCopy` (a C runner utility that mha-run and mha-compile do not link);
// the copies it leaves become a memcpy intrinsic.

// A copy between two strided tiles (rows of 8 out of rows of 16) is not
// contiguous: it becomes a linalg.copy of the same views.
// CHECK-LABEL: func.func @strided_subviews
//       CHECK:   %[[S:.+]] = memref.subview
//       CHECK:   %[[T:.+]] = memref.subview
//   CHECK-NOT:   memref.copy
//       CHECK:   linalg.copy ins(%[[S]] : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%[[T]] : memref<4x8xf32, strided<[16, 1], offset: ?>>)
//   CHECK-NOT:   memref.copy
//       CHECK:   return
// LLVM-LABEL: func.func @strided_subviews
//   LLVM-NOT:   memrefCopy
//       LLVM:   linalg.copy
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @strided_subviews(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %i: index, %j: index) {
  %s = memref.subview %a[%i, 0] [4, 8] [1, 1] : memref<16x16xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
  %t = memref.subview %b[0, %j] [4, 8] [1, 1] : memref<16x16xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
  memref.copy %s, %t : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32, strided<[16, 1], offset: ?>>
  return
}

// -----

// One strided side is enough: a strided tile copied into a dense buffer.
// CHECK-LABEL: func.func @strided_source
//  CHECK-SAME:   (%[[S:.+]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[T:.+]]: memref<4x8xf32>)
//   CHECK-NOT:   memref.copy
//       CHECK:   linalg.copy ins(%[[S]] : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%[[T]] : memref<4x8xf32>)
// LLVM-LABEL: func.func @strided_source
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @strided_source(%s: memref<4x8xf32, strided<[16, 1], offset: ?>>, %t: memref<4x8xf32>) {
  memref.copy %s, %t : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32>
  return
}

// -----

// Row-major strides with a dynamic row count: contiguous in fact, but only a
// static shape lets finalize-memref-to-llvm use a memcpy, so it becomes a
// linalg.copy too.
// CHECK-LABEL: func.func @dynamic_rows
//  CHECK-SAME:   (%[[S:.+]]: memref<?x8xf32, strided<[8, 1], offset: ?>>, %[[T:.+]]: memref<?x8xf32>)
//   CHECK-NOT:   memref.copy
//       CHECK:   linalg.copy ins(%[[S]] : memref<?x8xf32, strided<[8, 1], offset: ?>>) outs(%[[T]] : memref<?x8xf32>)
// LLVM-LABEL: func.func @dynamic_rows
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @dynamic_rows(%s: memref<?x8xf32, strided<[8, 1], offset: ?>>, %t: memref<?x8xf32>) {
  memref.copy %s, %t : memref<?x8xf32, strided<[8, 1], offset: ?>> to memref<?x8xf32>
  return
}

// -----

// Identity layouts, static or dynamic: a memcpy.
// CHECK-LABEL: func.func @negative_identity
//  CHECK-SAME:   (%[[S:.+]]: memref<4x8xf32>, %[[T:.+]]: memref<4x8xf32>, %[[DS:.+]]: memref<?x8xf32>, %[[DT:.+]]: memref<?x8xf32>)
//   CHECK-NOT:   linalg.copy
//       CHECK:   memref.copy %[[S]], %[[T]] : memref<4x8xf32> to memref<4x8xf32>
//       CHECK:   memref.copy %[[DS]], %[[DT]] : memref<?x8xf32> to memref<?x8xf32>
//   CHECK-NOT:   linalg.copy
// LLVM-LABEL: func.func @negative_identity
//   LLVM-NOT:   memrefCopy
//       LLVM:   llvm.intr.memcpy
//       LLVM:   llvm.intr.memcpy
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @negative_identity(%s: memref<4x8xf32>, %t: memref<4x8xf32>, %ds: memref<?x8xf32>, %dt: memref<?x8xf32>) {
  memref.copy %s, %t : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %ds, %dt : memref<?x8xf32> to memref<?x8xf32>
  return
}

// -----

// A static strided layout that is row-major and dense (strides [8, 1] for 8
// columns, at an offset) is contiguous: it stays a memref.copy.
// CHECK-LABEL: func.func @negative_static_contiguous
//  CHECK-SAME:   (%[[S:.+]]: memref<4x8xf32, strided<[8, 1], offset: 16>>, %[[T:.+]]: memref<4x8xf32, strided<[8, 1], offset: 16>>)
//   CHECK-NOT:   linalg.copy
//       CHECK:   memref.copy %[[S]], %[[T]] : memref<4x8xf32, strided<[8, 1], offset: 16>> to memref<4x8xf32, strided<[8, 1], offset: 16>>
//   CHECK-NOT:   linalg.copy
// LLVM-LABEL: func.func @negative_static_contiguous
//   LLVM-NOT:   memrefCopy
//       LLVM:   llvm.intr.memcpy
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @negative_static_contiguous(%s: memref<4x8xf32, strided<[8, 1], offset: 16>>, %t: memref<4x8xf32, strided<[8, 1], offset: 16>>) {
  memref.copy %s, %t : memref<4x8xf32, strided<[8, 1], offset: 16>> to memref<4x8xf32, strided<[8, 1], offset: 16>>
  return
}

// -----

// One row of a wider matrix (a unit outer dimension, whose stride does not
// matter) at a dynamic offset is contiguous too.
// CHECK-LABEL: func.func @negative_one_row
//  CHECK-SAME:   (%[[S:.+]]: memref<1x8xf32, strided<[16, 1], offset: ?>>, %[[T:.+]]: memref<1x8xf32>)
//   CHECK-NOT:   linalg.copy
//       CHECK:   memref.copy %[[S]], %[[T]] : memref<1x8xf32, strided<[16, 1], offset: ?>> to memref<1x8xf32>
// LLVM-LABEL: func.func @negative_one_row
//   LLVM-NOT:   memrefCopy
//       LLVM:   llvm.intr.memcpy
//   LLVM-NOT:   memrefCopy
//       LLVM:   return
func.func @negative_one_row(%s: memref<1x8xf32, strided<[16, 1], offset: ?>>, %t: memref<1x8xf32>) {
  memref.copy %s, %t : memref<1x8xf32, strided<[16, 1], offset: ?>> to memref<1x8xf32>
  return
}

// -----

// Unranked buffers are left alone (linalg.copy needs ranked operands).
// CHECK-LABEL: func.func @negative_unranked
//       CHECK:   memref.copy %{{.+}}, %{{.+}} : memref<*xf32> to memref<*xf32>
func.func @negative_unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}

// -----

// A strided buffer with no elements is not copied by memcpy in
// finalize-memref-to-llvm: it becomes linalg.copy too.
// CHECK-LABEL: func.func @empty_strided
//       CHECK:   linalg.copy
func.func @empty_strided(%a: memref<0x8xf32, strided<[8, 1], offset: 4>>, %b: memref<0x8xf32>) {
  memref.copy %a, %b : memref<0x8xf32, strided<[8, 1], offset: 4>> to memref<0x8xf32>
  return
}
