// RUN: mha-opt %s --mha-approximate-exp --convert-vector-to-scf --convert-scf-to-cf \
// RUN:     --convert-vector-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --finalize-memref-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     --shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: mlir-runner, avx512f

// The exp2 that softmax runs (its scale takes log2(e) along), AVX-512's
// form, on vectors of 64 (VSCALEFPS by its intrinsic on each register) and
// of 8 (llvm.ldexp), against libm's exp2 in f64, for 16384 arguments from
// -160 to 140: within 1.5 ulp (1.8e-7) where the result is a normal f32,
// within one step of the smallest subnormal below that, and +inf above
// FLT_MAX. Then the edges: -inf, +inf, NaN, ±0, the last argument with a
// finite result and the first that overflows, the least subnormal, a tie
// that rounds to 0, and 0.

// Vectors of 64, then of 8: the largest relative error, whether it is
// within 1.8e-7, results below FLT_MIN off by more than 2^-149, results
// above FLT_MAX not +inf.
// CHECK: {{[0-9]\.[0-9]+e-0[78]}}
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: {{[0-9]\.[0-9]+e-0[78]}}
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// exp2(-inf) = 0, exp2(+inf) = +inf, exp2(NaN) = NaN, exp2(±0) = 1;
// exp2(127.99) is finite, exp2(128) is +inf; exp2(-149) is 2^-149,
// exp2(-150) (half of it, a tie to even) and exp2(-160) are 0.
// CHECK-NEXT: ( 0, inf, nan, 1, 1, 3.37{{[0-9]*}}e+38, inf, 1.4013e-45, 0, 0 )

func.func @worst(%x: memref<16384xf32>, %y: memref<16384xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %count = arith.constant 16384 : index
  %zero = arith.constant 0.0 : f64
  %fltMin = arith.constant 1.1754943508222875e-38 : f64
  %fltMax = arith.constant 3.4028234663852886e+38 : f64
  %subnormalStep = arith.constant 1.401298464324817e-45 : f64
  %inf = arith.constant 0x7F800000 : f32
  %zeroI = arith.constant 0 : i32
  %oneI = arith.constant 1 : i32
  %result:3 = scf.for %i = %c0 to %count step %c1
      iter_args(%worst = %zero, %tiny = %zeroI, %huge = %zeroI) -> (f64, i32, i32) {
    %xv = memref.load %x[%i] : memref<16384xf32>
    %yv = memref.load %y[%i] : memref<16384xf32>
    %xd = arith.extf %xv : f32 to f64
    %yd = arith.extf %yv : f32 to f64
    %ref = math.exp2 %xd : f64
    %diff = arith.subf %yd, %ref : f64
    %err = math.absf %diff : f64
    %normal = arith.cmpf oge, %ref, %fltMin : f64
    %finite = arith.cmpf ole, %ref, %fltMax : f64
    %inRange = arith.andi %normal, %finite : i1
    %rel = arith.divf %err, %ref : f64
    %larger = arith.maximumf %worst, %rel : f64
    %worst2 = arith.select %inRange, %larger, %worst : f64
    %below = arith.cmpf olt, %ref, %fltMin : f64
    %far = arith.cmpf ogt, %err, %subnormalStep : f64
    %badTiny = arith.andi %below, %far : i1
    %tinyAdd = arith.select %badTiny, %oneI, %zeroI : i32
    %tiny2 = arith.addi %tiny, %tinyAdd : i32
    %above = arith.cmpf ogt, %ref, %fltMax : f64
    %notInf = arith.cmpf one, %yv, %inf : f32
    %badHuge = arith.andi %above, %notInf : i1
    %hugeAdd = arith.select %badHuge, %oneI, %zeroI : i32
    %huge2 = arith.addi %huge, %hugeAdd : i32
    scf.yield %worst2, %tiny2, %huge2 : f64, i32, i32
  }
  vector.print %result#0 : f64
  %bound = arith.constant 1.8e-7 : f64
  %within = arith.cmpf ole, %result#0, %bound : f64
  vector.print %within : i1
  vector.print %result#1 : i32
  vector.print %result#2 : i32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %count = arith.constant 16384 : index
  %lo = arith.constant -160.0 : f32
  %step = arith.constant 0.018310546875 : f32   // 300 / 16384
  %x = memref.alloc() : memref<16384xf32>
  %y = memref.alloc() : memref<16384xf32>
  scf.for %i = %c0 to %count step %c1 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %v = math.fma %fi, %step, %lo : f32
    memref.store %v, %x[%i] : memref<16384xf32>
  }
  scf.for %i = %c0 to %count step %c64 {
    %v = vector.load %x[%i] : memref<16384xf32>, vector<64xf32>
    %e = math.exp2 %v : vector<64xf32>
    vector.store %e, %y[%i] : memref<16384xf32>, vector<64xf32>
  }
  call @worst(%x, %y) : (memref<16384xf32>, memref<16384xf32>) -> ()
  scf.for %i = %c0 to %count step %c8 {
    %v = vector.load %x[%i] : memref<16384xf32>, vector<8xf32>
    %e = math.exp2 %v : vector<8xf32>
    vector.store %e, %y[%i] : memref<16384xf32>, vector<8xf32>
  }
  call @worst(%x, %y) : (memref<16384xf32>, memref<16384xf32>) -> ()

  %edges = arith.constant dense<[0xFF800000, 0x7F800000, 0x7FC00000, 0.0, -0.0, 127.99, 128.0, -149.0, -150.0, -160.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : vector<16xf32>
  // Through memory, so that the rewrite's folding does not compute them.
  %edgeBuffer = memref.alloc() : memref<16xf32>
  vector.store %edges, %edgeBuffer[%c0] : memref<16xf32>, vector<16xf32>
  %edgeValues = vector.load %edgeBuffer[%c0] : memref<16xf32>, vector<16xf32>
  %edgeExp = math.exp2 %edgeValues : vector<16xf32>
  %shown = vector.extract_strided_slice %edgeExp {offsets = [0], sizes = [10], strides = [1]} : vector<16xf32> to vector<10xf32>
  vector.print %shown : vector<10xf32>
  memref.dealloc %edgeBuffer : memref<16xf32>
  memref.dealloc %x : memref<16384xf32>
  memref.dealloc %y : memref<16384xf32>
  return
}
