// mha.rope alone, interleaved on 4 of 8 features, with offsets and
// frequencies given (rope-and-norm.test).
func.func @mha(%x: tensor<3x3x7x8xf32> {mha.name = "x"},
               %offsets: tensor<3xi64> {mha.name = "offsets"},
               %inv_freq: tensor<2xf32> {mha.name = "inv_freq"})
    -> tensor<3x3x7x8xf32> {
  %y = mha.rope %x offsets(%offsets) inv_freq(%inv_freq) layout("interleaved")
      rotary_dim(4) base(1.000000e+04) scale(2.000000e+00)
      mscale(1.250000e+00)
      : (tensor<3x3x7x8xf32>, tensor<3xi64>, tensor<2xf32>)
      -> tensor<3x3x7x8xf32>
  return %y : tensor<3x3x7x8xf32>
}
