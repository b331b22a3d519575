// RUN: mha-opt %s --split-input-file --mha-approximate-exp | FileCheck %s
// RUN: mha-opt %s --split-input-file --mha-approximate-exp=lanes=8 | FileCheck %s --check-prefix=AVX2

// On AVX-512 (16 lanes, the option's default) an exp of a vector is the
// Cody-Waite reduction, a degree-6 polynomial and llvm.ldexp (VSCALEFPS):
// 2 + 6 FMAs, the argument clamped with compare-and-select (NaN kept), the
// exponent made a number before fptosi.
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
// CHECK-COUNT-6:   math.fma %{{.+}}, %[[R]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[NN:.+]] = arith.maxnumf %[[N]], %{{.+}} : vector<64xf32>
//       CHECK:   %[[E:.+]] = arith.fptosi %[[NN]] : vector<64xf32> to vector<64xi32>
//       CHECK:   %[[Y:.+]] = llvm.call_intrinsic "llvm.ldexp"(%{{.+}}, %[[E]]) : (vector<64xf32>, vector<64xi32>) -> vector<64xf32>
//       CHECK:   return %[[Y]]
// Without AVX-512: upstream's approximation, no ldexp.
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
//       CHECK:   llvm.call_intrinsic "llvm.ldexp"
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
