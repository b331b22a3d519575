module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<1x?x?xi1> {mha.name = "mask"}, %arg2: tensor<4x4xf32> {mha.name = "w_q"}, %arg3: tensor<4x4xf32> {mha.name = "w_k"}, %arg4: tensor<4x4xf32> {mha.name = "w_v"}, %arg5: tensor<4x4xf32> {mha.name = "w_o"}, %arg6: tensor<4xf32> {mha.name = "b_q"}, %arg7: tensor<4xf32> {mha.name = "b_k"}, %arg8: tensor<4xf32> {mha.name = "b_v"}, %arg9: tensor<4xf32> {mha.name = "b_o"}) -> tensor<?x?x4xf32> {
    %0 = mha.attention %arg0 mask(%arg1) weights(%arg2, %arg3, %arg4, %arg5) bias_q(%arg6) bias_k(%arg7) bias_v(%arg8) bias_o(%arg9) heads(2) causal : (tensor<?x?x4xf32>, tensor<1x?x?xi1>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    return %0 : tensor<?x?x4xf32>
  }
}

