func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @second(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
