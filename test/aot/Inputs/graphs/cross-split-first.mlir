module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<?x?x6xf32> {mha.name = "kv"}, %arg2: tensor<?x?x?xi1> {mha.name = "mask"}, %arg3: tensor<2x2x2xf32> {mha.name = "w_q"}, %arg4: tensor<2x3x2xf32> {mha.name = "w_k"}, %arg5: tensor<2x3x2xf32> {mha.name = "w_v"}, %arg6: tensor<4x4xf32> {mha.name = "w_o"}) -> tensor<?x?x4xf32> {
    %0 = mha.attention %arg0 kv(%arg1) mask(%arg2) weights(%arg3, %arg4, %arg5, %arg6) heads(2) : (tensor<?x?x4xf32>, tensor<?x?x6xf32>, tensor<?x?x?xi1>, tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
    return %0 : tensor<?x?x4xf32>
  }
}

