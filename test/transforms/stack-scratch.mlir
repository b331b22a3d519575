// RUN: mha-opt %s -split-input-file -mha-strategy -mha-stack-scratch | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-stack-scratch=max-bytes=1024 | FileCheck %s --check-prefix=SMALL

// A tile's scratch of static shape, freed in its own block (here in a
// branch and in an inner loop), becomes one stack buffer at the start of the
// parallel loop's body; its deallocation goes. A `?`-sized buffer stays on
// the heap. With max-bytes=1024 only what fits moves (the 64x64 block of
// 16 KiB stays).
// CHECK-LABEL: func.func @tile_scratch(
//       CHECK:   scf.parallel
//  CHECK-NEXT:     %[[ROW:.+]] = memref.alloca() {alignment = 64 : i64} : memref<64xf32>
//  CHECK-NEXT:     %[[BLOCK:.+]] = memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.+}}, %[[ROW]]
//       CHECK:     scf.for
//       CHECK:       memref.store %{{.+}}, %[[BLOCK]]
//       CHECK:     %[[DYN:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
//       CHECK:     memref.dealloc %[[DYN]]
//   CHECK-NOT:     memref.dealloc
//       CHECK:     scf.reduce
// SMALL-LABEL: func.func @tile_scratch(
//       SMALL:   scf.parallel
//  SMALL-NEXT:     memref.alloca() {alignment = 64 : i64} : memref<64xf32>
//       SMALL:     memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
//       SMALL:     memref.dealloc
func.func @tile_scratch(%n: index, %m: index, %c: i1, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.if %c {
      %row = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
      memref.store %f, %row[%c0] : memref<64xf32>
      %v = memref.load %row[%c0] : memref<64xf32>
      memref.store %v, %out[%i] : memref<?xf32>
      memref.dealloc %row : memref<64xf32>
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %block = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
      memref.store %f, %block[%j, %c0] : memref<64x64xf32>
      %v = memref.load %block[%j, %c0] : memref<64x64xf32>
      memref.store %v, %out[%j] : memref<?xf32>
      memref.dealloc %block : memref<64x64xf32>
    }
    %dyn = memref.alloc(%m) : memref<?xf32>
    memref.store %f, %dyn[%c0] : memref<?xf32>
    memref.dealloc %dyn : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// What stays on the heap: a buffer outside any parallel loop, one of a
// nested parallel loop (its iterations run on other threads), and one freed
// in another block than its own (it may outlive an iteration).
// CHECK-LABEL: func.func @stays(
//   CHECK-NOT:   memref.alloca
//       CHECK:   return
func.func @stays(%n: index, %c: i1, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %outside = memref.alloc() : memref<64xf32>
  memref.store %f, %outside[%c0] : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %inner = memref.alloc() : memref<64xf32>
      memref.store %f, %inner[%c0] : memref<64xf32>
      memref.dealloc %inner : memref<64xf32>
      scf.reduce
    }
    %escapes = memref.alloc() : memref<64xf32>
    memref.store %f, %escapes[%c0] : memref<64xf32>
    scf.if %c {
      memref.dealloc %escapes : memref<64xf32>
    }
    scf.reduce
  }
  memref.dealloc %outside : memref<64xf32>
  return
}
