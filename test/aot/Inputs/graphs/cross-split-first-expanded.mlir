module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<?x?x6xf32> {mha.name = "kv"}, %arg2: tensor<?x?x?xi1> {mha.name = "mask"}, %arg3: tensor<2x2x2xf32> {mha.name = "w_q"}, %arg4: tensor<2x3x2xf32> {mha.name = "w_k"}, %arg5: tensor<2x3x2xf32> {mha.name = "w_v"}, %arg6: tensor<4x4xf32> {mha.name = "w_o"}) -> tensor<?x?x4xf32> {
    %0 = mha.split_heads %arg0 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %1 = mha.project %0, %arg3 : (tensor<?x2x?x2xf32>, tensor<2x2x2xf32>) -> tensor<?x2x?x2xf32>
    %2 = mha.split_heads %arg1 heads(2) : tensor<?x?x6xf32> -> tensor<?x2x?x3xf32>
    %3 = mha.project %2, %arg4 : (tensor<?x2x?x3xf32>, tensor<2x3x2xf32>) -> tensor<?x2x?x2xf32>
    %4 = mha.project %2, %arg5 : (tensor<?x2x?x3xf32>, tensor<2x3x2xf32>) -> tensor<?x2x?x2xf32>
    %5 = mha.sdpa %1, %3, %4 mask(%arg2) : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x?x?xi1>) -> tensor<?x2x?x2xf32>
    %6 = mha.concat_heads %5 : tensor<?x2x?x2xf32> -> tensor<?x?x4xf32>
    %7 = mha.output_project %6, %arg6 : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
    return %7 : tensor<?x?x4xf32>
  }
}

