// RUN: mha-opt %s --split-input-file --mha-approximate-exp | FileCheck %s
// RUN: mha-opt %s --split-input-file --mha-approximate-exp=lanes=8 | FileCheck %s --check-prefix=AVX2

// On AVX-512 (16 lanes, the option's default) an exp of a vector is the
// Cody-Waite reduction, a degree-6 polynomial and VSCALEFPS by its
// intrinsic on each register of 16, n given as a float: 2 + 6 FMAs, the
// argument clamped with compare-and-select (NaN kept).
// CHECK-LABEL: func.func @vector_exp
//  CHECK-SAME:   (%[[X:.+]]: vector<64xf32>)
//   CHECK-NOT:   math.exp
//       CHECK:   %[[LO:.+]] = arith.cmpf olt, %[[X]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[X1:.+]] = arith.select %[[LO]], %{{.+}}, %[[X]]
//       CHECK:   %[[HI:.+]] = arith.cmpf ogt, %[[X1]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[X2:.+]] = arith.select %[[HI]], %{{.+}}, %[[X1]]
//       CHECK:   %[[T:.+]] = arith.mulf %[[X2]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[N:.+]] = math.roundeven %[[T]] : vector<64xf32>
//       CHECK:   %[[R1:.+]] = math.fma %[[N]], %{{.+}}, %[[X2]] : vector<64xf32>
//       CHECK:   %[[R:.+]] = math.fma %[[N]], %{{.+}}, %[[R1]] : vector<64xf32>
// CHECK-COUNT-5:   math.fma %{{.+}}, %[[R]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[P:.+]] = math.fma %{{.+}}, %[[R]], %{{.+}} : vector<64xf32>
//   CHECK-NOT:   arith.fptosi
//       CHECK:   %[[P0:.+]] = vector.extract_strided_slice %[[P]] {offsets = [0], sizes = [16], strides = [1]}
//       CHECK:   %[[N0:.+]] = vector.extract_strided_slice %[[N]] {offsets = [0], sizes = [16], strides = [1]}
//       CHECK:   llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P0]], %[[N0]], %[[P0]], %{{.+}}, %{{.+}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// CHECK-COUNT-3:   llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
//       CHECK:   %[[Y:.+]] = vector.insert_strided_slice %{{.+}} {offsets = [48], strides = [1]} : vector<16xf32> into vector<64xf32>
//       CHECK:   return %[[Y]]
// Without AVX-512: upstream's approximation, no intrinsic.
// AVX2-LABEL: func.func @vector_exp
//   AVX2-NOT:   math.exp
//   AVX2-NOT:   llvm.call_intrinsic
//       AVX2:   math.fma
//   AVX2-NOT:   llvm.call_intrinsic
//       AVX2:   return
func.func @vector_exp(%x: vector<64xf32>) -> vector<64xf32> {
  %e = math.exp %x : vector<64xf32>
  return %e : vector<64xf32>
}

// -----

// A 2-D vector is flattened for the intrinsic and shaped back.
// CHECK-LABEL: func.func @matrix_exp
//       CHECK:   vector.shape_cast %{{.+}} : vector<6x64xf32> to vector<384xf32>
// CHECK-COUNT-24:   llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
//       CHECK:   %[[Y:.+]] = vector.shape_cast %{{.+}} : vector<384xf32> to vector<6x64xf32>
//       CHECK:   return %[[Y]]
func.func @matrix_exp(%x: vector<6x64xf32>) -> vector<6x64xf32> {
  %e = math.exp %x : vector<6x64xf32>
  return %e : vector<6x64xf32>
}

// -----

// A scalar exp (a loop that was not vectorized) takes upstream's form on
// every target.
// CHECK-LABEL: func.func @scalar_exp
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   llvm.call_intrinsic
//       CHECK:   math.fma %{{.+}} : f32
//       CHECK:   return
func.func @scalar_exp(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// -----

// The function's mha.codegen decides over the option: 8 lanes (AVX2).
// CHECK-LABEL: func.func @recorded_avx2
//   CHECK-NOT:   llvm.call_intrinsic
//       CHECK:   math.fma %{{.+}} : vector<64xf32>
//       CHECK:   return
func.func @recorded_avx2(%x: vector<64xf32>) -> vector<64xf32> attributes {mha.codegen = #mha.codegen_sizes<lanes = 8, register_rows = 6, register_cols = 16, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 64>} {
  %e = math.exp %x : vector<64xf32>
  return %e : vector<64xf32>
}

// -----

// An f64 exp is neither pattern's (both take f32): it stays.
// CHECK-LABEL: func.func @f64_exp
//       CHECK:   math.exp %{{.+}} : vector<8xf64>
func.func @f64_exp(%x: vector<8xf64>) -> vector<8xf64> {
  %e = math.exp %x : vector<8xf64>
  return %e : vector<8xf64>
}

// -----

// An exp2 of a vector (softmax's: its scale takes log2(e) along): n is the
// argument rounded, r = x - n exactly, then a degree-6 polynomial of 2^r and
// VSCALEFPS, no multiply; clamped to [-152, 129].
// CHECK-LABEL: func.func @vector_exp2
//  CHECK-SAME:   (%[[X:.+]]: vector<32xf32>)
//   CHECK-NOT:   math.exp
//       CHECK:   %[[LO:.+]] = arith.cmpf olt, %[[X]], %[[MIN:.+]] : vector<32xf32>
//       CHECK:   %[[X1:.+]] = arith.select %[[LO]], %[[MIN]], %[[X]]
//       CHECK:   %[[HI:.+]] = arith.cmpf ogt, %[[X1]], %[[MAX:.+]] : vector<32xf32>
//       CHECK:   %[[X2:.+]] = arith.select %[[HI]], %[[MAX]], %[[X1]]
//       CHECK:   %[[N:.+]] = math.roundeven %[[X2]] : vector<32xf32>
//       CHECK:   %[[R:.+]] = arith.subf %[[X2]], %[[N]] : vector<32xf32>
// CHECK-COUNT-6:   math.fma %{{.+}}, %[[R]], %{{.+}} : vector<32xf32>
//   CHECK-NOT:   arith.mulf
// CHECK-COUNT-2:   llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
//       CHECK:   return
// AVX2-LABEL: func.func @vector_exp2
//   AVX2-NOT:   math.exp2
//       AVX2:   arith.mulf %{{.+}}, %{{.+}} : vector<32xf32>
//   AVX2-NOT:   llvm.call_intrinsic
//       AVX2:   return
func.func @vector_exp2(%x: vector<32xf32>) -> vector<32xf32> {
  %e = math.exp2 %x : vector<32xf32>
  return %e : vector<32xf32>
}

// -----

// A vector that is not whole registers: llvm.ldexp, n made a number (fptosi
// of NaN is poison) and converted to integers.
// CHECK-LABEL: func.func @short_exp2
//       CHECK:   %[[N:.+]] = math.roundeven %{{.+}} : vector<8xf32>
//       CHECK:   %[[NN:.+]] = arith.maxnumf %[[N]], %{{.+}} : vector<8xf32>
//       CHECK:   %[[E:.+]] = arith.fptosi %[[NN]] : vector<8xf32> to vector<8xi32>
//       CHECK:   llvm.call_intrinsic "llvm.ldexp"(%{{.+}}, %[[E]]) : (vector<8xf32>, vector<8xi32>) -> vector<8xf32>
func.func @short_exp2(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp2 %x : vector<8xf32>
  return %e : vector<8xf32>
}

// -----

// A scalar exp2 is exp(x · ln 2), which upstream's form computes.
// CHECK-LABEL: func.func @scalar_exp2
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   llvm.call_intrinsic
//       CHECK:   arith.mulf %{{.+}}, %{{.+}} : f32
//       CHECK:   math.fma %{{.+}} : f32
//       CHECK:   return
func.func @scalar_exp2(%x: f32) -> f32 {
  %e = math.exp2 %x : f32
  return %e : f32
}
