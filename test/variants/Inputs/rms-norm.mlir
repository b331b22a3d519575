// mha.rms_norm alone (rope-and-norm.test).
func.func @mha(%x: tensor<2x3x6x8xf32> {mha.name = "x"},
               %weight: tensor<8xf32> {mha.name = "weight"})
    -> tensor<2x3x6x8xf32> {
  %y = mha.rms_norm %x, %weight eps(1.000000e-05)
      : (tensor<2x3x6x8xf32>, tensor<8xf32>) -> tensor<2x3x6x8xf32>
  return %y : tensor<2x3x6x8xf32>
}
