// RUN: mha-opt %s --mha-to-loops="attention=fused" | FileCheck %s --check-prefix=LOOPS
// RUN: mha-opt %s --mha-to-llvm="attention=fused" | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=linalg. --implicit-check-not=cf. \
// RUN:   --implicit-check-not=unrealized_conversion_cast
// RUN: mha-opt %s --mha-to-llvm="attention=decomposed" | FileCheck %s --check-prefix=DECOMPOSED

// The fused path through the pipelines: two parallel loops (scf.parallel,
// then OpenMP), one that transposes each key/value head's keys once and the
// tile loop; everything inside them is sequential, and a tile allocates its
// running state and scratch once, before its key loops: nothing is
// allocated per key block, and no key block is transposed again. The
// scratch of static size is on the stack (mha-stack-scratch), only the
// `?`-sized running state on the heap. Causal
// attention has two key loops, up to the last block wholly below the
// diagonal and the rest, over blocks of 64 keys (the key tile is cut to
// divide the query tile).

// LOOPS-LABEL: func.func @sdpa(
//       LOOPS:   memref.alloc(%{{.+}}, %{{.+}}) {{.*}} : memref<?x2x16x?xf32>
//       LOOPS:   scf.parallel (%{{.+}}, %{{.+}}) = (%c0, %c0) to (%{{.+}}, %c2) step (%c1, %c1) {
//   LOOPS-NOT:     memref.alloc
//       LOOPS:     scf.reduce
//       LOOPS:   %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {{.*}} : memref<?x4x?x16xf32>
//       LOOPS:   scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}) = (%c0, %c0, %c0) to (%{{.+}}, %c4, %{{.+}}) step (%c1, %c1, %c64) {
//       LOOPS:     memref.alloca() {{.*}} : memref<64x64xf32>
//       LOOPS:     memref.alloca() {{.*}} : memref<64xf32>
//       LOOPS:     memref.alloca() {{.*}} : memref<64xf32>
//       LOOPS:     memref.alloc(%[[TQ:.+]]) {{.*}} : memref<?xf32>
//       LOOPS:     memref.alloc(%[[TQ]]) {{.*}} : memref<?xf32>
//   LOOPS-NOT:     memref.alloc
//       LOOPS:     scf.for %{{.+}} = %c0 to %[[FULL:.+]] step %c64 {
//   LOOPS-NOT:     memref.alloc
//       LOOPS:     scf.for %{{.+}} = %[[FULL]] to %{{.+}} step %c64 {
//   LOOPS-NOT:     memref.alloc
//   LOOPS-NOT:     scf.parallel
//       LOOPS:     memref.dealloc
//       LOOPS:     scf.reduce
//       LOOPS:   return %[[OUT]]

// LLVM-LABEL: llvm.func @sdpa(
//       LLVM:   llvm.call @_mlir_memref_to_llvm_alloc
//       LLVM:   omp.parallel {
//  LLVM-NEXT:     omp.wsloop schedule(static) {
//  LLVM-NEXT:       omp.loop_nest (%{{.+}}, %{{.+}}) : i64 = ({{.+}}) to ({{.+}}) step ({{.+}}) collapse(2) {
//       LLVM:     omp.terminator
//       LLVM:   llvm.call @_mlir_memref_to_llvm_alloc
//       LLVM:   omp.parallel {
//  LLVM-NEXT:     omp.wsloop schedule(static) {
//  LLVM-NEXT:       omp.loop_nest (%{{.+}}, %{{.+}}, %{{.+}}) : i64 = ({{.+}}) to ({{.+}}) step ({{.+}}) collapse(3) {
//  LLVM-NEXT:         %[[STACK:.+]] = llvm.intr.stacksave
//       LLVM:         llvm.call @_mlir_memref_to_llvm_alloc
//       LLVM:         llvm.intr.fma
//       LLVM:         llvm.call @_mlir_memref_to_llvm_free
//       LLVM:         llvm.intr.stackrestore %[[STACK]]
//       LLVM:         omp.yield
//       LLVM:     omp.terminator
//       LLVM:   llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_sdpa(

// DECOMPOSED-LABEL: llvm.func @sdpa(
//   DECOMPOSED-NOT:   omp.
//       DECOMPOSED:   llvm.return
func.func @sdpa(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = mha.sdpa %q, %k, %v causal : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
