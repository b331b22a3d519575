// RUN: mha-opt %s -split-input-file -mha-widen-bf16 | FileCheck %s

// Each mha op on bf16 values becomes the same op on widened (f32) operands;
// a bf16 result is rounded back (truncf), the f32 output of the layer's
// last contraction is not.
// CHECK-LABEL: func.func @steps
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x4x8xbf16>, %[[W:.+]]: tensor<8x8xbf16>, %[[B:.+]]: tensor<8xbf16>)
//       CHECK:   %[[XW:.+]] = arith.extf %[[X]] : tensor<1x4x8xbf16> to tensor<1x4x8xf32>
//       CHECK:   %[[WW:.+]] = arith.extf %[[W]] : tensor<8x8xbf16> to tensor<8x8xf32>
//       CHECK:   %[[BW:.+]] = arith.extf %[[B]] : tensor<8xbf16> to tensor<8xf32>
//       CHECK:   %[[P:.+]] = mha.project %[[XW]], %[[WW]] bias(%[[BW]]) heads(2) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x2x4x4xf32>
//       CHECK:   %[[Q:.+]] = arith.truncf %[[P]] : tensor<1x2x4x4xf32> to tensor<1x2x4x4xbf16>
//       CHECK:   %[[QW:.+]] = arith.extf %[[Q]] : tensor<1x2x4x4xbf16> to tensor<1x2x4x4xf32>
//       CHECK:   %[[O:.+]] = mha.sdpa %[[QW]], %[[QW]], %[[QW]] causal : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
//       CHECK:   %[[OB:.+]] = arith.truncf %[[O]] : tensor<1x2x4x4xf32> to tensor<1x2x4x4xbf16>
//       CHECK:   %[[OW:.+]] = arith.extf %[[OB]] : tensor<1x2x4x4xbf16> to tensor<1x2x4x4xf32>
//       CHECK:   %[[WW2:.+]] = arith.extf %[[W]] : tensor<8x8xbf16> to tensor<8x8xf32>
//       CHECK:   %[[Y:.+]] = mha.output_project %[[OW]], %[[WW2]] : (tensor<1x2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
//   CHECK-NOT:   arith.truncf
//       CHECK:   return %[[Y]] : tensor<1x4x8xf32>
func.func @steps(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>, %b: tensor<8xbf16>) -> tensor<1x4x8xf32> {
  %q = mha.project %x, %w bias(%b) heads(2) : (tensor<1x4x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>) -> tensor<1x2x4x4xbf16>
  %o = mha.sdpa %q, %q, %q causal : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  %y = mha.output_project %o, %w : (tensor<1x2x4x4xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// f32 ops are left as they are.
// CHECK-LABEL: func.func @f32
//   CHECK-NOT:   arith.extf
//       CHECK:   mha.project
func.func @f32(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %p = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %p : tensor<1x4x8xf32>
}
