// mha-omp-schedule sets the schedule of every omp.wsloop that
// convert-scf-to-openmp made; the pipelines take it as omp-schedule, and a
// value that is no schedule is refused where the option is parsed.

// RUN: mha-opt %s --convert-scf-to-openmp --mha-omp-schedule=schedule=dynamic | FileCheck %s --check-prefix=DYNAMIC
// RUN: mha-opt %s --convert-scf-to-openmp --mha-omp-schedule=schedule=guided | FileCheck %s --check-prefix=GUIDED
// RUN: mha-opt %s --convert-scf-to-openmp --mha-omp-schedule | FileCheck %s --check-prefix=STATIC
// RUN: not mha-opt %s --mha-omp-schedule=schedule=sometimes 2>&1 | FileCheck %s --check-prefix=BAD

// DYNAMIC-LABEL: func.func @two_loops
// DYNAMIC: omp.wsloop schedule(dynamic)
// DYNAMIC: omp.wsloop schedule(dynamic)
// GUIDED: omp.wsloop schedule(guided)
// STATIC: omp.wsloop schedule(static)
// BAD: mha-omp-schedule expects schedule=static, dynamic, guided or runtime, got 'sometimes'
func.func @two_loops(%out: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %out[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %out[%i] : memref<64xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
