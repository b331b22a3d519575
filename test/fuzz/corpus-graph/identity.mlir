// The result is the argument: refused at load (nothing to compute).
func.func @f(%x: tensor<2x3x4xf32> {mha.name = "x"}) -> tensor<2x3x4xf32> {
  return %x : tensor<2x3x4xf32>
}
