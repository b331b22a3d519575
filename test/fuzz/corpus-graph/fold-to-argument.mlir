// Folds to its argument only once canonicalized, and through a helper.
func.func private @g(%a: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %s = mha.split_heads %a heads(2) : tensor<1x4x8xf32> -> tensor<1x2x4x4xf32>
  %c = mha.concat_heads %s : tensor<1x2x4x4xf32> -> tensor<1x4x8xf32>
  return %c : tensor<1x4x8xf32>
}
func.func @mha(%x: tensor<1x4x8xf32> {mha.name = "x"}) -> tensor<1x4x8xf32> {
  %0 = call @g(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
