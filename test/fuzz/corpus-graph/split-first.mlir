module {
  func.func @mha(%arg0: tensor<1x4x8xf32> {mha.name = "x"}, %arg1: tensor<2x4x4xf32> {mha.name = "w_q"}, %arg2: tensor<2x4x4xf32> {mha.name = "w_k"}, %arg3: tensor<2x4x4xf32> {mha.name = "w_v"}, %arg4: tensor<8x8xf32> {mha.name = "w_o"}) -> tensor<1x4x8xf32> {
    %0 = mha.attention %arg0 weights(%arg1, %arg2, %arg3, %arg4) heads(2) : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    return %0 : tensor<1x4x8xf32>
  }
}

