module {
  func.func @mha(%arg0: tensor<?x?x8xf32> {mha.name = "x"}, %arg1: tensor<8x8xf32> {mha.name = "w_q"}, %arg2: tensor<8x4xf32> {mha.name = "w_k"}, %arg3: tensor<8x2xf32> {mha.name = "w_v"}, %arg4: tensor<4x8xf32> {mha.name = "w_o"}, %arg5: tensor<?x2x?x2xf32> {mha.name = "k_cache"}, %arg6: tensor<?x2x?x1xf32> {mha.name = "v_cache"}, %arg7: tensor<?xi64> {mha.name = "cache_lengths"}) -> (tensor<?x?x8xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x1xf32>) {
    %0 = mha.project %arg0, %arg1 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %1 = mha.split_heads %0 heads(4) : tensor<?x?x8xf32> -> tensor<?x4x?x2xf32>
    %2 = mha.project %arg0, %arg2 : (tensor<?x?x8xf32>, tensor<8x4xf32>) -> tensor<?x?x4xf32>
    %3 = mha.split_heads %2 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %4 = mha.project %arg0, %arg3 : (tensor<?x?x8xf32>, tensor<8x2xf32>) -> tensor<?x?x2xf32>
    %5 = mha.split_heads %4 heads(2) : tensor<?x?x2xf32> -> tensor<?x2x?x1xf32>
    %6 = mha.cache_append %3 into %arg5 at %arg7 : tensor<?x2x?x2xf32> into tensor<?x2x?x2xf32> at tensor<?xi64>
    %7 = mha.cache_append %5 into %arg6 at %arg7 : tensor<?x2x?x1xf32> into tensor<?x2x?x1xf32> at tensor<?xi64>
    %8 = mha.sdpa %1, %6, %7 causal positions(%arg7) : (tensor<?x4x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x1xf32>, tensor<?xi64>) -> tensor<?x4x?x1xf32>
    %9 = mha.concat_heads %8 : tensor<?x4x?x1xf32> -> tensor<?x?x4xf32>
    %10 = mha.output_project %9, %arg4 : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
    return %10, %6, %7 : tensor<?x?x8xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x1xf32>
  }
}

