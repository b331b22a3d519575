module {
  func.func @mha(%arg0: tensor<?x?x4xbf16> {mha.name = "x"}, %arg1: tensor<4x4xbf16> {mha.name = "w_q"}, %arg2: tensor<4x2xbf16> {mha.name = "w_k"}, %arg3: tensor<4x2xbf16> {mha.name = "w_v"}, %arg4: tensor<4x4xbf16> {mha.name = "w_o"}, %arg5: tensor<4xbf16> {mha.name = "b_q"}, %arg6: tensor<2xbf16> {mha.name = "b_k"}, %arg7: tensor<2xbf16> {mha.name = "b_v"}, %arg8: tensor<4xbf16> {mha.name = "b_o"}, %arg9: tensor<?x1x16x2xbf16> {mha.name = "k_pool"}, %arg10: tensor<?x1x16x2xbf16> {mha.name = "v_pool"}, %arg11: tensor<?x3xi32> {mha.name = "block_table"}, %arg12: tensor<?xi64> {mha.name = "cache_lengths"}) -> (tensor<?x?x4xf32>, tensor<?x1x16x2xbf16>, tensor<?x1x16x2xbf16>) {
    %0 = arith.extf %arg0 : tensor<?x?x4xbf16> to tensor<?x?x4xf32>
    %1 = arith.extf %arg1 : tensor<4x4xbf16> to tensor<4x4xf32>
    %2 = arith.extf %arg5 : tensor<4xbf16> to tensor<4xf32>
    %3 = mha.project %0, %1 bias(%2) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %4 = mha.split_heads %3 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %5 = arith.extf %arg2 : tensor<4x2xbf16> to tensor<4x2xf32>
    %6 = arith.extf %arg6 : tensor<2xbf16> to tensor<2xf32>
    %7 = mha.project %0, %5 bias(%6) : (tensor<?x?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x?x2xf32>
    %8 = mha.split_heads %7 heads(1) : tensor<?x?x2xf32> -> tensor<?x1x?x2xf32>
    %9 = arith.extf %arg3 : tensor<4x2xbf16> to tensor<4x2xf32>
    %10 = arith.extf %arg7 : tensor<2xbf16> to tensor<2xf32>
    %11 = mha.project %0, %9 bias(%10) : (tensor<?x?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x?x2xf32>
    %12 = mha.split_heads %11 heads(1) : tensor<?x?x2xf32> -> tensor<?x1x?x2xf32>
    %13 = arith.truncf %8 : tensor<?x1x?x2xf32> to tensor<?x1x?x2xbf16>
    %14 = mha.paged_cache_append %13 into %arg9 through %arg11 at %arg12 : tensor<?x1x?x2xbf16> into tensor<?x1x16x2xbf16> through tensor<?x3xi32> at tensor<?xi64>
    %15 = mha.paged_view %14 through %arg11 : tensor<?x1x16x2xbf16> through tensor<?x3xi32> -> tensor<?x1x48x2xbf16>
    %16 = arith.extf %15 : tensor<?x1x48x2xbf16> to tensor<?x1x48x2xf32>
    %17 = arith.truncf %12 : tensor<?x1x?x2xf32> to tensor<?x1x?x2xbf16>
    %18 = mha.paged_cache_append %17 into %arg10 through %arg11 at %arg12 : tensor<?x1x?x2xbf16> into tensor<?x1x16x2xbf16> through tensor<?x3xi32> at tensor<?xi64>
    %19 = mha.paged_view %18 through %arg11 : tensor<?x1x16x2xbf16> through tensor<?x3xi32> -> tensor<?x1x48x2xbf16>
    %20 = arith.extf %19 : tensor<?x1x48x2xbf16> to tensor<?x1x48x2xf32>
    %21 = mha.sdpa %4, %16, %20 causal positions(%arg12) : (tensor<?x2x?x2xf32>, tensor<?x1x48x2xf32>, tensor<?x1x48x2xf32>, tensor<?xi64>) -> tensor<?x2x?x2xf32>
    %22 = mha.concat_heads %21 : tensor<?x2x?x2xf32> -> tensor<?x?x4xf32>
    %23 = arith.extf %arg4 : tensor<4x4xbf16> to tensor<4x4xf32>
    %24 = arith.extf %arg8 : tensor<4xbf16> to tensor<4xf32>
    %25 = mha.output_project %22, %23 bias(%24) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    return %25, %14, %18 : tensor<?x?x4xf32>, tensor<?x1x16x2xbf16>, tensor<?x1x16x2xbf16>
  }
}

