// The result is written into arguments in place: a fill, a cache append.
func.func @fill(%x: tensor<2x3x4xf32> {mha.name = "x"}) -> tensor<2x3x4xf32> {
  %c = arith.constant 2.0 : f32
  %0 = linalg.fill ins(%c : f32) outs(%x : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
func.func @append(%new: tensor<1x2x1x4xf32> {mha.name = "k_new"}, %cache: tensor<1x2x8x4xf32> {mha.name = "k_cache"}, %lengths: tensor<1xi64> {mha.name = "cache_lengths"}) -> tensor<1x2x8x4xf32> {
  %0 = mha.cache_append %new into %cache at %lengths : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32> at tensor<1xi64>
  return %0 : tensor<1x2x8x4xf32>
}
