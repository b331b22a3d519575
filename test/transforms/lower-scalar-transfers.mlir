// RUN: mha-opt %s -split-input-file -mha-lower-scalar-transfers | FileCheck %s

// A read that broadcasts one element of a strided one-element view (which
// LLVM 22's vector-to-llvm cannot lower) becomes a load and a broadcast.
// CHECK-LABEL: func.func @broadcast_read
//  CHECK-SAME:   (%[[M:.+]]: memref<1xf32, strided<[2], offset: ?>>)
//       CHECK:   %[[C0:.+]] = arith.constant 0 : index
//       CHECK:   %[[E:.+]] = memref.load %[[M]][%[[C0]]]
//       CHECK:   %[[V:.+]] = vector.broadcast %[[E]] : f32 to vector<256xf32>
//       CHECK:   return %[[V]]
func.func @broadcast_read(%m: memref<1xf32, strided<[2], offset: ?>>) -> vector<256xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%c0], %pad {in_bounds = [true], permutation_map = affine_map<(d0) -> (0)>} : memref<1xf32, strided<[2], offset: ?>>, vector<256xf32>
  return %v : vector<256xf32>
}

// -----

// A read that transfers a dimension is left alone.
// CHECK-LABEL: func.func @negative_row_read
//       CHECK:   vector.transfer_read
//   CHECK-NOT:   memref.load
func.func @negative_row_read(%m: memref<4x16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%c0, %c0], %pad {in_bounds = [true]} : memref<4x16xf32>, vector<16xf32>
  return %v : vector<16xf32>
}
