// Calls the compiled code cannot make: to a declaration, and indirect.
func.func private @g(tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
func.func @f(%x: tensor<1x4x8xf32> {mha.name = "x"}) -> tensor<1x4x8xf32> {
  %0 = call @g(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
func.func @indirect(%x: tensor<1x4x8xf32> {mha.name = "x"}) -> tensor<1x4x8xf32> {
  %f = func.constant @g : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %0 = func.call_indirect %f(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
