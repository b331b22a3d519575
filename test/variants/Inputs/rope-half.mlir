// mha.rope alone, half layout on 6 of 8 features (rope-and-norm.test).
func.func @mha(%x: tensor<2x3x5x8xf32> {mha.name = "x"})
    -> tensor<2x3x5x8xf32> {
  %y = mha.rope %x layout("half") rotary_dim(6) base(5.000000e+05)
      scale(1.000000e+00) mscale(1.000000e+00)
      : (tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return %y : tensor<2x3x5x8xf32>
}
