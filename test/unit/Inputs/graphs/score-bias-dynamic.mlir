module {
  func.func @mha(%arg0: tensor<?x?x16xf32> {mha.name = "x"}, %arg1: tensor<16x16xf32> {mha.name = "w_q"}, %arg2: tensor<16x16xf32> {mha.name = "w_k"}, %arg3: tensor<16x16xf32> {mha.name = "w_v"}, %arg4: tensor<16x16xf32> {mha.name = "w_o"}, %arg5: tensor<16xf32> {mha.name = "b_q"}, %arg6: tensor<16xf32> {mha.name = "b_k"}, %arg7: tensor<16xf32> {mha.name = "b_v"}, %arg8: tensor<16xf32> {mha.name = "b_o"}, %arg9: tensor<?x1x?x?xf32> {mha.name = "attn_bias"}) -> tensor<?x?x16xf32> {
    %0 = mha.attention %arg0 weights(%arg1, %arg2, %arg3, %arg4) bias_q(%arg5) bias_k(%arg6) bias_v(%arg7) bias_o(%arg8) heads(2) causal bias(%arg9) : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<?x1x?x?xf32>) -> tensor<?x?x16xf32>
    return %0 : tensor<?x?x16xf32>
  }
}

