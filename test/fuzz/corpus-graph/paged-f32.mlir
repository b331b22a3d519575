module {
  func.func @mha(%arg0: tensor<2x1x4xf32> {mha.name = "x"}, %arg1: tensor<4x4xf32> {mha.name = "w_q"}, %arg2: tensor<4x2xf32> {mha.name = "w_k"}, %arg3: tensor<4x2xf32> {mha.name = "w_v"}, %arg4: tensor<4x4xf32> {mha.name = "w_o"}, %arg5: tensor<4xf32> {mha.name = "b_q"}, %arg6: tensor<2xf32> {mha.name = "b_k"}, %arg7: tensor<2xf32> {mha.name = "b_v"}, %arg8: tensor<4xf32> {mha.name = "b_o"}, %arg9: tensor<4x1x16x2xf32> {mha.name = "k_pool"}, %arg10: tensor<4x1x16x2xf32> {mha.name = "v_pool"}, %arg11: tensor<2x2xi32> {mha.name = "block_table"}, %arg12: tensor<2xi64> {mha.name = "cache_lengths"}) -> (tensor<2x1x4xf32>, tensor<4x1x16x2xf32>, tensor<4x1x16x2xf32>) {
    %0 = mha.project %arg0, %arg1 bias(%arg5) : (tensor<2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x1x4xf32>
    %1 = mha.split_heads %0 heads(2) : tensor<2x1x4xf32> -> tensor<2x2x1x2xf32>
    %2 = mha.project %arg0, %arg2 bias(%arg6) : (tensor<2x1x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
    %3 = mha.split_heads %2 heads(1) : tensor<2x1x2xf32> -> tensor<2x1x1x2xf32>
    %4 = mha.project %arg0, %arg3 bias(%arg7) : (tensor<2x1x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
    %5 = mha.split_heads %4 heads(1) : tensor<2x1x2xf32> -> tensor<2x1x1x2xf32>
    %6 = mha.paged_cache_append %3 into %arg9 through %arg11 at %arg12 : tensor<2x1x1x2xf32> into tensor<4x1x16x2xf32> through tensor<2x2xi32> at tensor<2xi64>
    %7 = mha.paged_view %6 through %arg11 : tensor<4x1x16x2xf32> through tensor<2x2xi32> -> tensor<2x1x32x2xf32>
    %8 = mha.paged_cache_append %5 into %arg10 through %arg11 at %arg12 : tensor<2x1x1x2xf32> into tensor<4x1x16x2xf32> through tensor<2x2xi32> at tensor<2xi64>
    %9 = mha.paged_view %8 through %arg11 : tensor<4x1x16x2xf32> through tensor<2x2xi32> -> tensor<2x1x32x2xf32>
    %10 = mha.sdpa %1, %7, %9 causal positions(%arg12) : (tensor<2x2x1x2xf32>, tensor<2x1x32x2xf32>, tensor<2x1x32x2xf32>, tensor<2xi64>) -> tensor<2x2x1x2xf32>
    %11 = mha.concat_heads %10 : tensor<2x2x1x2xf32> -> tensor<2x1x4xf32>
    %12 = mha.output_project %11, %arg4 bias(%arg8) : (tensor<2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x1x4xf32>
    return %12, %6, %8 : tensor<2x1x4xf32>, tensor<4x1x16x2xf32>, tensor<4x1x16x2xf32>
  }
}

