// RUN: mha-opt %s -mha-to-loops="batch-chunk=0" | FileCheck %s \
// RUN:   --implicit-check-not=mha. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=bufferization.

// Stage 2: bufferized with identity layouts at the function boundary,
// temporaries freed, linalg lowered to scf loops. The returned buffer is
// allocated by the function and never freed by it: the caller owns it.
// exp is upstream's polynomial approximation (math.fma steps), as in the
// vectorized tiles. batch-chunk=0: the whole batch in one layer, no chunk
// loop (test/tiling/batch-chunks.mlir).

// CHECK-LABEL: func.func @mha
//  CHECK-SAME:   (%{{.+}}: memref<?x?x8xf32>, %{{.+}}: memref<8x8xf32>, %{{.+}}: memref<8x8xf32>, %{{.+}}: memref<8x8xf32>, %{{.+}}: memref<8x8xf32>) -> memref<?x?x8xf32>
//       CHECK:   scf.for
//       CHECK:   math.fma
//       CHECK:   %[[RESULT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {{.*}}: memref<?x?x8xf32>
//   CHECK-NOT:   memref.dealloc %[[RESULT]]
//       CHECK:   memref.dealloc
//   CHECK-NOT:   memref.dealloc %[[RESULT]]
//       CHECK:   return %[[RESULT]] : memref<?x?x8xf32>
func.func @mha(%x: tensor<?x?x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>,
               %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
