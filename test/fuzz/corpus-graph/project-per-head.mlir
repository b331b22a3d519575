func.func @mha(%x: tensor<2x5x8xf32>, %w: tensor<2x4x3xf32>, %b: tensor<6xf32>) -> tensor<2x2x5x3xf32> {
  %s = mha.split_heads %x heads(2) : tensor<2x5x8xf32> -> tensor<2x2x5x4xf32>
  %p = mha.project %s, %w bias(%b) : (tensor<2x2x5x4xf32>, tensor<2x4x3xf32>, tensor<6xf32>) -> tensor<2x2x5x3xf32>
  return %p : tensor<2x2x5x3xf32>
}
