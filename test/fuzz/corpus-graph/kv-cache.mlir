module {
  func.func @mha(%arg0: tensor<1x1x4xf32> {mha.name = "x"}, %arg1: tensor<4x4xf32> {mha.name = "w_q"}, %arg2: tensor<4x4xf32> {mha.name = "w_k"}, %arg3: tensor<4x4xf32> {mha.name = "w_v"}, %arg4: tensor<4x4xf32> {mha.name = "w_o"}, %arg5: tensor<4xf32> {mha.name = "b_q"}, %arg6: tensor<4xf32> {mha.name = "b_k"}, %arg7: tensor<4xf32> {mha.name = "b_v"}, %arg8: tensor<4xf32> {mha.name = "b_o"}, %arg9: tensor<1x2x8x2xf32> {mha.name = "k_cache"}, %arg10: tensor<1x2x8x2xf32> {mha.name = "v_cache"}, %arg11: tensor<1xi64> {mha.name = "cache_lengths"}) -> (tensor<1x1x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) {
    %0 = mha.project %arg0, %arg1 bias(%arg5) : (tensor<1x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x1x4xf32>
    %1 = mha.split_heads %0 heads(2) : tensor<1x1x4xf32> -> tensor<1x2x1x2xf32>
    %2 = mha.project %arg0, %arg2 bias(%arg6) : (tensor<1x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x1x4xf32>
    %3 = mha.split_heads %2 heads(2) : tensor<1x1x4xf32> -> tensor<1x2x1x2xf32>
    %4 = mha.project %arg0, %arg3 bias(%arg7) : (tensor<1x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x1x4xf32>
    %5 = mha.split_heads %4 heads(2) : tensor<1x1x4xf32> -> tensor<1x2x1x2xf32>
    %6 = mha.cache_append %3 into %arg9 at %arg11 : tensor<1x2x1x2xf32> into tensor<1x2x8x2xf32> at tensor<1xi64>
    %7 = mha.cache_append %5 into %arg10 at %arg11 : tensor<1x2x1x2xf32> into tensor<1x2x8x2xf32> at tensor<1xi64>
    %8 = mha.sdpa %1, %6, %7 causal positions(%arg11) : (tensor<1x2x1x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1xi64>) -> tensor<1x2x1x2xf32>
    %9 = mha.concat_heads %8 : tensor<1x2x1x2xf32> -> tensor<1x1x4xf32>
    %10 = mha.output_project %9, %arg4 bias(%arg8) : (tensor<1x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x1x4xf32>
    return %10, %6, %7 : tensor<1x1x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>
  }
}

