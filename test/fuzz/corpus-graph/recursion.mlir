// Calls that never end: a function that calls itself, two that call each
// other.
func.func @f(%x: tensor<1x4x8xf32> {mha.name = "x"}, %w: tensor<8x8xf32> {mha.name = "w"}) -> tensor<1x4x8xf32> {
  %p = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %0 = call @f(%p, %w) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
func.func private @g(%a: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = call @h(%a) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
func.func private @h(%a: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = call @g(%a) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
func.func @mutual(%x: tensor<1x4x8xf32> {mha.name = "x"}) -> tensor<1x4x8xf32> {
  %0 = call @g(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
