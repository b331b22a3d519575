// RUN: mha-opt %s -mha-stack-scratch -verify-diagnostics
// RUN: %expect-exit 3 mha-opt %s -mha-stack-scratch 2>&1 | FileCheck %s
// RUN: mha-opt %s -mha-stack-scratch=max-bytes=1024 | FileCheck %s --check-prefix=OPTION

// mha-stack-scratch bounds the scratch it puts on the stack by the
// function's record (stack_bytes) or its option; with neither it stops.
// CHECK: error: mha-stack-scratch: no #mha.codegen_sizes record: run mha-strategy first or set max-bytes
// OPTION: memref.alloca() {alignment = 64 : i64} : memref<64xf32>

// expected-error @+1 {{mha-stack-scratch: no #mha.codegen_sizes record: run mha-strategy first or set max-bytes}}
func.func @unrecorded(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    memref.store %f, %row[%c0] : memref<64xf32>
    memref.dealloc %row : memref<64xf32>
    scf.reduce
  }
  return
}
