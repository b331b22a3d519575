func.func @mha(%x: tensor<1x7x12xf32>) -> tensor<1x7x12xf32> {
  %s = mha.split_heads %x heads(3) : tensor<1x7x12xf32> -> tensor<1x3x7x4xf32>
  %c = mha.concat_heads %s : tensor<1x3x7x4xf32> -> tensor<1x7x12xf32>
  %t = mha.split_heads %c heads(2) : tensor<1x7x12xf32> -> tensor<1x2x7x6xf32>
  %u = mha.concat_heads %t : tensor<1x2x7x6xf32> -> tensor<1x7x12xf32>
  return %u : tensor<1x7x12xf32>
}
