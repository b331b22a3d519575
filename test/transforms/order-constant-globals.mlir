// RUN: mha-opt %s --mha-order-constant-globals | FileCheck %s
// RUN: mha-opt %s --mha-order-constant-globals=alignment=128 | FileCheck %s --check-prefix=ALIGN
// RUN: mha-opt %s --mha-order-constant-globals --one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUFFERIZED
//
// The globals of the tensor constants are made in the module's order (each
// at the top of the module, so the last one made comes first), one per
// value and alignment, and one-shot-bufferize reuses them: without the pass
// it makes them in the order of a DenseMap of functions, which changed from
// run to run.

// CHECK: memref.global "private" constant @__constant_4xi32 : memref<4xi32> = dense<16> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_2x2xf32 : memref<2x2xf32> = dense<1.000000e+00> {alignment = 64 : i64}
// CHECK-NOT: memref.global
// ALIGN: memref.global {{.*}} {alignment = 128 : i64}
// ALIGN-NEXT: memref.global {{.*}} {alignment = 128 : i64}
// BUFFERIZED-COUNT-2: memref.global
// BUFFERIZED-NOT: memref.global
// BUFFERIZED-LABEL: func.func @first
// BUFFERIZED: memref.get_global @__constant_2x2xf32
// BUFFERIZED-LABEL: func.func @second
// BUFFERIZED: memref.get_global @__constant_4xi32
// BUFFERIZED-LABEL: func.func @third
// BUFFERIZED: memref.get_global @__constant_2x2xf32

func.func @first() -> tensor<2x2xf32> {
  %c = arith.constant dense<1.0> : tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}

func.func @second() -> tensor<4xi32> {
  %c = arith.constant dense<16> : tensor<4xi32>
  return %c : tensor<4xi32>
}

func.func @third() -> tensor<2x2xf32> {
  %c = arith.constant dense<1.0> : tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}
