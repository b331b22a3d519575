module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<?x?x4xf32> {mha.name = "kv"}, %arg2: tensor<?x?x?xi1> {mha.name = "mask"}, %arg3: tensor<4x4xf32> {mha.name = "w_q"}, %arg4: tensor<4x4xf32> {mha.name = "w_k"}, %arg5: tensor<4x4xf32> {mha.name = "w_v"}, %arg6: tensor<4x4xf32> {mha.name = "w_o"}, %arg7: tensor<4xf32> {mha.name = "b_q"}, %arg8: tensor<4xf32> {mha.name = "b_k"}, %arg9: tensor<4xf32> {mha.name = "b_v"}, %arg10: tensor<4xf32> {mha.name = "b_o"}) -> tensor<?x?x4xf32> {
    %0 = mha.project %arg0, %arg3 bias(%arg7) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %1 = mha.split_heads %0 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %2 = mha.project %arg1, %arg4 bias(%arg8) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %3 = mha.split_heads %2 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %4 = mha.project %arg1, %arg5 bias(%arg9) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %5 = mha.split_heads %4 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %6 = mha.sdpa %1, %3, %5 mask(%arg2) : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x?x?xi1>) -> tensor<?x2x?x2xf32>
    %7 = mha.concat_heads %6 : tensor<?x2x?x2xf32> -> tensor<?x?x4xf32>
    %8 = mha.output_project %7, %arg6 bias(%arg10) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    return %8 : tensor<?x?x4xf32>
  }
}

