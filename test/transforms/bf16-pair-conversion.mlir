// RUN: mha-opt %s --split-input-file --mha-bf16-pair-conversion | FileCheck %s

// f32 to bf16 on a vector of 64: one VCVTNE2PS2BF16 per 32 lanes, the
// upper register of each pair first (it fills the high half).
// CHECK-LABEL: func.func @pairs
//  CHECK-SAME:   (%[[X:.+]]: vector<64xf32>)
//   CHECK-NOT:   arith.truncf
//       CHECK:   %[[A1:.+]] = vector.extract_strided_slice %[[X]] {offsets = [16], sizes = [16], strides = [1]}
//       CHECK:   %[[A0:.+]] = vector.extract_strided_slice %[[X]] {offsets = [0], sizes = [16], strides = [1]}
//       CHECK:   %[[P0:.+]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[A1]], %[[A0]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
//       CHECK:   %[[R0:.+]] = vector.insert_strided_slice %[[P0]], %{{.+}} {offsets = [0], strides = [1]} : vector<32xbf16> into vector<64xbf16>
//       CHECK:   %[[B1:.+]] = vector.extract_strided_slice %[[X]] {offsets = [48], sizes = [16], strides = [1]}
//       CHECK:   %[[B0:.+]] = vector.extract_strided_slice %[[X]] {offsets = [32], sizes = [16], strides = [1]}
//       CHECK:   %[[P1:.+]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[B1]], %[[B0]])
//       CHECK:   %[[R1:.+]] = vector.insert_strided_slice %[[P1]], %[[R0]] {offsets = [32], strides = [1]} : vector<32xbf16> into vector<64xbf16>
//       CHECK:   return %[[R1]] : vector<64xbf16>
func.func @pairs(%x: vector<64xf32>) -> vector<64xbf16> {
  %y = arith.truncf %x : vector<64xf32> to vector<64xbf16>
  return %y : vector<64xbf16>
}

// -----

// A 2-D vector is flattened and its shape restored.
// CHECK-LABEL: func.func @rows
//  CHECK-SAME:   (%[[X:.+]]: vector<1x32xf32>)
//       CHECK:   %[[FLAT:.+]] = vector.shape_cast %[[X]] : vector<1x32xf32> to vector<32xf32>
//       CHECK:   llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
//       CHECK:   %[[Y:.+]] = vector.shape_cast %{{.+}} : vector<32xbf16> to vector<1x32xbf16>
//       CHECK:   return %[[Y]]
func.func @rows(%x: vector<1x32xf32>) -> vector<1x32xbf16> {
  %y = arith.truncf %x : vector<1x32xf32> to vector<1x32xbf16>
  return %y : vector<1x32xbf16>
}

// -----

// Nearest even, said explicitly, is the instruction's rounding.
// CHECK-LABEL: func.func @nearest_even
//       CHECK:   llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
func.func @nearest_even(%x: vector<32xf32>) -> vector<32xbf16> {
  %y = arith.truncf %x to_nearest_even : vector<32xf32> to vector<32xbf16>
  return %y : vector<32xbf16>
}

// -----

// What the instruction does not do stays: vectors that are not whole
// pairs of registers, scalars, other types, another rounding mode.
// CHECK-LABEL: func.func @kept
//   CHECK-NOT:   llvm.call_intrinsic
//       CHECK:   arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
//       CHECK:   arith.truncf %{{.+}} : vector<48xf32> to vector<48xbf16>
//       CHECK:   arith.truncf %{{.+}} : f32 to bf16
//       CHECK:   arith.truncf %{{.+}} : vector<32xf32> to vector<32xf16>
//       CHECK:   arith.truncf %{{.+}} : vector<32xf64> to vector<32xbf16>
//       CHECK:   arith.truncf %{{.+}} toward_zero : vector<32xf32> to vector<32xbf16>
func.func @kept(%a: vector<16xf32>, %b: vector<48xf32>, %c: f32,
                %d: vector<32xf32>, %e: vector<32xf64>)
    -> (vector<16xbf16>, vector<48xbf16>, bf16, vector<32xf16>,
        vector<32xbf16>, vector<32xbf16>) {
  %a1 = arith.truncf %a : vector<16xf32> to vector<16xbf16>
  %b1 = arith.truncf %b : vector<48xf32> to vector<48xbf16>
  %c1 = arith.truncf %c : f32 to bf16
  %d1 = arith.truncf %d : vector<32xf32> to vector<32xf16>
  %e1 = arith.truncf %e : vector<32xf64> to vector<32xbf16>
  %f1 = arith.truncf %d toward_zero : vector<32xf32> to vector<32xbf16>
  return %a1, %b1, %c1, %d1, %e1, %f1
      : vector<16xbf16>, vector<48xbf16>, bf16, vector<32xf16>, vector<32xbf16>,
        vector<32xbf16>
}
