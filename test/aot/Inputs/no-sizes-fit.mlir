// Each op verifies on its own, but x's `?` batch would have to be both 2 and
// 3: no call can fit (aot.test).
module {
  func.func @two(%x: tensor<?x?x4xf32> {mha.name = "x"}, %w: tensor<4x4xf32> {mha.name = "w"}) -> tensor<3x?x4xf32> {
    %a = mha.project %x, %w : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<2x?x4xf32>
    %b = mha.project %x, %w : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<3x?x4xf32>
    return %b : tensor<3x?x4xf32>
  }
}
