module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<?x?x4xf32> {mha.name = "kv"}, %arg2: tensor<?x?x?xi1> {mha.name = "mask"}, %arg3: tensor<4x4xf32> {mha.name = "w_q"}, %arg4: tensor<4x4xf32> {mha.name = "w_k"}, %arg5: tensor<4x4xf32> {mha.name = "w_v"}, %arg6: tensor<4x4xf32> {mha.name = "w_o"}, %arg7: tensor<4xf32> {mha.name = "b_q"}, %arg8: tensor<4xf32> {mha.name = "b_k"}, %arg9: tensor<4xf32> {mha.name = "b_v"}, %arg10: tensor<4xf32> {mha.name = "b_o"}) -> tensor<?x?x4xf32> {
    %0 = mha.attention %arg0 kv(%arg1) mask(%arg2) weights(%arg3, %arg4, %arg5, %arg6) bias_q(%arg7) bias_k(%arg8) bias_v(%arg9) bias_o(%arg10) heads(2) : (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x?xi1>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    return %0 : tensor<?x?x4xf32>
  }
}

