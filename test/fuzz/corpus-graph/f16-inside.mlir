// Verifies, but computes in f16, which the lowering does not support yet:
// the pipeline fails.
func.func @mha(%x: tensor<1x8x4xf32> {mha.name = "x"},
               %w: tensor<4x4xf32> {mha.name = "w"}) -> tensor<1x8x4xf32> {
  %xh = arith.truncf %x : tensor<1x8x4xf32> to tensor<1x8x4xf16>
  %wh = arith.truncf %w : tensor<4x4xf32> to tensor<4x4xf16>
  %p = mha.project %xh, %wh : (tensor<1x8x4xf16>, tensor<4x4xf16>) -> tensor<1x8x4xf16>
  %y = arith.extf %p : tensor<1x8x4xf16> to tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
