module {
  func.func @mha(%arg0: tensor<1x3x8xf32> {mha.name = "x"}, %arg1: tensor<1x5x6xf32> {mha.name = "kv"}, %arg2: tensor<8x8xf32> {mha.name = "w_q"}, %arg3: tensor<6x4xf32> {mha.name = "w_k"}, %arg4: tensor<6x6xf32> {mha.name = "w_v"}, %arg5: tensor<12x5xf32> {mha.name = "w_o"}, %arg6: tensor<8xf32> {mha.name = "b_q"}, %arg7: tensor<4xf32> {mha.name = "b_k"}, %arg8: tensor<6xf32> {mha.name = "b_v"}, %arg9: tensor<5xf32> {mha.name = "b_o"}) -> tensor<1x3x5xf32> {
    %0 = mha.attention %arg0 kv(%arg1) weights(%arg2, %arg3, %arg4, %arg5) bias_q(%arg6) bias_k(%arg7) bias_v(%arg8) bias_o(%arg9) heads(4) kv_heads(2) : (tensor<1x3x8xf32>, tensor<1x5x6xf32>, tensor<8x8xf32>, tensor<6x4xf32>, tensor<6x6xf32>, tensor<12x5xf32>, tensor<8xf32>, tensor<4xf32>, tensor<6xf32>, tensor<5xf32>) -> tensor<1x3x5xf32>
    return %0 : tensor<1x3x5xf32>
  }
}

