module {
  func.func @mha(%arg0: tensor<1x4x8xf32> {mha.name = "x"}, %arg1: tensor<8x8xf32> {mha.name = "w_q"}, %arg2: tensor<8x8xf32> {mha.name = "w_k"}, %arg3: tensor<8x8xf32> {mha.name = "w_v"}, %arg4: tensor<8x8xf32> {mha.name = "w_o"}, %arg5: tensor<8xf32> {mha.name = "b_q"}, %arg6: tensor<8xf32> {mha.name = "b_k"}, %arg7: tensor<8xf32> {mha.name = "b_v"}, %arg8: tensor<8xf32> {mha.name = "b_o"}) -> tensor<1x4x8xf32> {
    %0 = mha.attention %arg0 weights(%arg1, %arg2, %arg3, %arg4) bias_q(%arg5) bias_k(%arg6) bias_v(%arg7) bias_o(%arg8) heads(2) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
    return %0 : tensor<1x4x8xf32>
  }
}

