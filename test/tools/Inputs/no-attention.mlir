// A graph without attention: it runs, but has no attention weights to draw.
func.func @no_attention(%x: tensor<2x3xf32> {mha.name = "x"}) -> tensor<2x3xf32> {
  %y = arith.negf %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
