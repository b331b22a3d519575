func.func @mha(%x: tensor<1x8x4xf32> {mha.name = "x"}) -> tensor<1x2x8x2xf32> {
  %h = mha.split_heads %x heads(3) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  return %h : tensor<1x2x8x2xf32>
}
