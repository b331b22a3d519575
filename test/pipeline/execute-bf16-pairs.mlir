// RUN: mha-opt %s --mha-bf16-pair-conversion --convert-vector-to-scf --convert-scf-to-cf \
// RUN:     --convert-vector-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --finalize-memref-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     --shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: mlir-runner, avx512bf16

// f32 to bf16 two registers at a time (VCVTNE2PS2BF16 by its intrinsic, on
// vectors of 64) against the same rounding one scalar at a time (LLVM's
// own lowering), on 16384 bit patterns spread over every f32 (i times an
// odd constant): every element lands where it belongs, rounded the same
// (nearest even), NaN stays NaN. Subnormal inputs are left out: the
// instruction reads them as zero (as VCVTNEPS2BF16, which LLVM emits for
// vectors, does too). Then ties: 1 + 2^-8 (to 1, even), 1 + 3·2^-8 (up),
// and 2^-8 less than 2 (up, across the exponent).

// Elements compared, mismatches.
// CHECK: 16384
// CHECK-NEXT: 0
// CHECK-NEXT: ( 1, 1.01562, 2, -1, -1.01562, -2, 0, -0 )

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %count = arith.constant 16384 : index
  %spread = arith.constant -1640531535 : i32   // 2654435761, odd
  %x = memref.alloc() : memref<16384xf32>
  %y = memref.alloc() : memref<16384xbf16>
  scf.for %i = %c0 to %count step %c1 {
    %ii = arith.index_cast %i : index to i32
    %bits = arith.muli %ii, %spread : i32
    %v = arith.bitcast %bits : i32 to f32
    %tiny = arith.constant 1.17549435e-38 : f32
    %a = math.absf %v : f32
    %subnormal = arith.cmpf olt, %a, %tiny : f32
    %zero = arith.constant 0.0 : f32
    %w = arith.select %subnormal, %zero, %v : f32
    memref.store %w, %x[%i] : memref<16384xf32>
  }
  scf.for %i = %c0 to %count step %c64 {
    %v = vector.load %x[%i] : memref<16384xf32>, vector<64xf32>
    %b = arith.truncf %v : vector<64xf32> to vector<64xbf16>
    vector.store %b, %y[%i] : memref<16384xbf16>, vector<64xbf16>
  }
  %zeroI = arith.constant 0 : i32
  %oneI = arith.constant 1 : i32
  %bad = scf.for %i = %c0 to %count step %c1 iter_args(%n = %zeroI) -> (i32) {
    %v = memref.load %x[%i] : memref<16384xf32>
    %want = arith.truncf %v : f32 to bf16
    %got = memref.load %y[%i] : memref<16384xbf16>
    %wantBits = arith.bitcast %want : bf16 to i16
    %gotBits = arith.bitcast %got : bf16 to i16
    %same = arith.cmpi eq, %wantBits, %gotBits : i16
    %wantNaN = arith.cmpf uno, %want, %want : bf16
    %gotNaN = arith.cmpf uno, %got, %got : bf16
    %bothNaN = arith.andi %wantNaN, %gotNaN : i1
    %ok = arith.ori %same, %bothNaN : i1
    %add = arith.select %ok, %zeroI, %oneI : i32
    %n2 = arith.addi %n, %add : i32
    scf.yield %n2 : i32
  }
  %total = arith.index_cast %count : index to i32
  vector.print %total : i32
  vector.print %bad : i32

  %ties = arith.constant dense<[1.00390625, 1.01171875, 1.99609375, -1.00390625, -1.01171875, -1.99609375, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : vector<32xf32>
  // Through memory, so that folding does not round them.
  %tieBuffer = memref.alloc() : memref<32xf32>
  vector.store %ties, %tieBuffer[%c0] : memref<32xf32>, vector<32xf32>
  %tieValues = vector.load %tieBuffer[%c0] : memref<32xf32>, vector<32xf32>
  %rounded = arith.truncf %tieValues : vector<32xf32> to vector<32xbf16>
  %shownBF16 = vector.extract_strided_slice %rounded {offsets = [0], sizes = [8], strides = [1]} : vector<32xbf16> to vector<8xbf16>
  %shown = arith.extf %shownBF16 : vector<8xbf16> to vector<8xf32>
  vector.print %shown : vector<8xf32>
  memref.dealloc %tieBuffer : memref<32xf32>
  memref.dealloc %x : memref<16384xf32>
  memref.dealloc %y : memref<16384xbf16>
  return
}
