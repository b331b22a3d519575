// RUN: mha-opt %s -split-input-file -mha-batch-chunks -mha-stack-scratch -verify-diagnostics | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-batch-chunks="cache-bytes=4194304 min-rows=100" -mha-stack-scratch=max-bytes=131072 | FileCheck %s --check-prefix=OPTIONS

// The single passes read their sizes from the function's mha.codegen
// (written by mha-strategy from the module's target); their options, where
// set, override it, and without either they stop with an error.
//
// Batch chunks with `?` lengths compute the chunk at run time: as many
// sequences as fit in chunk_bytes / 4 floats (262144 / 4 = 65536) and at
// least chunk_rows query rows (128). The stack takes stack_bytes (1024) of
// scratch per parallel loop: the 256-byte row, not the 16 KiB block.
// CHECK-LABEL: func.func @recorded(
//       CHECK:   arith.divui %c65536
//       CHECK:   arith.ceildivui %c128
//       CHECK:   scf.parallel
//  CHECK-NEXT:     memref.alloca() {alignment = 64 : i64} : memref<64xf32>
//       CHECK:     memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// With the options: 4194304 / 4 floats, 100 rows, 128 KiB of stack.
// OPTIONS-LABEL: func.func @recorded(
//       OPTIONS:   arith.divui %c1048576
//       OPTIONS:   arith.ceildivui %c100
//       OPTIONS:   scf.parallel
//  OPTIONS-NEXT:     memref.alloca() {alignment = 64 : i64} : memref<64xf32>
//  OPTIONS-NEXT:     memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
func.func @recorded(%x: tensor<?x?x512xf32>, %w: tensor<512x512xf32>, %n: index, %out: memref<?xf32>)
    -> tensor<?x?x512xf32> attributes {mha.codegen = #mha.codegen_sizes<lanes = 8, register_rows = 6, register_cols = 16, register_unroll = 2, max_vector_length = 64, projection_rows = 16, projection_cols = 16, chunk_bytes = 262144, chunk_rows = 128, stack_bytes = 1024>} {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<?x?x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    memref.store %f, %row[%c0] : memref<64xf32>
    %block = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
    memref.store %f, %block[%i, %c0] : memref<64x64xf32>
    memref.dealloc %block : memref<64x64xf32>
    memref.dealloc %row : memref<64xf32>
    scf.reduce
  }
  return %y : tensor<?x?x512xf32>
}

// -----

// No record: mha-batch-chunks stops at its first size (an error per
// function, exit 3 from mha-opt); with its options set, mha-stack-scratch
// stops at its own.
// expected-error @+1 {{mha-batch-chunks: no #mha.codegen_sizes record: run mha-strategy first or set cache-bytes}}
func.func @unrecorded(%x: tensor<?x?x512xf32>, %w: tensor<512x512xf32>, %n: index)
    -> tensor<?x?x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<?x?x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    memref.store %f, %row[%c0] : memref<64xf32>
    %block = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
    memref.store %f, %block[%i, %c0] : memref<64x64xf32>
    memref.dealloc %block : memref<64x64xf32>
    memref.dealloc %row : memref<64xf32>
    scf.reduce
  }
  return %y : tensor<?x?x512xf32>
}
