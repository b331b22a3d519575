module {
  func.func @mha(%arg0: tensor<2x1x4xf32> {mha.name = "x"}, %arg1: tensor<4x4xf32> {mha.name = "w_q"}, %arg2: tensor<4x2xf32> {mha.name = "w_k"}, %arg3: tensor<4x2xf32> {mha.name = "w_v"}, %arg4: tensor<4x4xf32> {mha.name = "w_o"}, %arg5: tensor<4xf32> {mha.name = "b_q"}, %arg6: tensor<2xf32> {mha.name = "b_k"}, %arg7: tensor<2xf32> {mha.name = "b_v"}, %arg8: tensor<4xf32> {mha.name = "b_o"}, %arg9: tensor<6x1x16x2xi8> {mha.name = "k_pool"}, %arg10: tensor<6x1x16xf32> {mha.name = "k_scales"}, %arg11: tensor<6x1x16x2xi8> {mha.name = "v_pool"}, %arg12: tensor<6x1x16xf32> {mha.name = "v_scales"}, %arg13: tensor<2x3xi32> {mha.name = "block_table"}, %arg14: tensor<2xi64> {mha.name = "cache_lengths"}, %arg15: tensor<2xf32> {mha.name = "alibi_slopes"}) -> (tensor<2x1x4xf32>, tensor<6x1x16x2xi8>, tensor<6x1x16xf32>, tensor<6x1x16x2xi8>, tensor<6x1x16xf32>) {
    %0 = mha.project %arg0, %arg1 bias(%arg5) : (tensor<2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x1x4xf32>
    %1 = mha.split_heads %0 heads(2) : tensor<2x1x4xf32> -> tensor<2x2x1x2xf32>
    %2 = mha.project %arg0, %arg2 bias(%arg6) : (tensor<2x1x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
    %3 = mha.split_heads %2 heads(1) : tensor<2x1x2xf32> -> tensor<2x1x1x2xf32>
    %4 = mha.project %arg0, %arg3 bias(%arg7) : (tensor<2x1x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
    %5 = mha.split_heads %4 heads(1) : tensor<2x1x2xf32> -> tensor<2x1x1x2xf32>
    %result_codes, %result_scales = mha.paged_cache_append_quantized %3 into %arg9, %arg10 through %arg13 at %arg14 : tensor<2x1x1x2xf32> into tensor<6x1x16x2xi8>, tensor<6x1x16xf32> through tensor<2x3xi32> at tensor<2xi64>
    %6 = mha.paged_view %result_codes through %arg13 : tensor<6x1x16x2xi8> through tensor<2x3xi32> -> tensor<2x1x48x2xi8>
    %7 = mha.paged_view %result_scales through %arg13 : tensor<6x1x16xf32> through tensor<2x3xi32> -> tensor<2x1x48xf32>
    %8 = mha.dequantize %6, %7 : tensor<2x1x48x2xi8>, tensor<2x1x48xf32> -> tensor<2x1x48x2xf32>
    %result_codes_0, %result_scales_1 = mha.paged_cache_append_quantized %5 into %arg11, %arg12 through %arg13 at %arg14 : tensor<2x1x1x2xf32> into tensor<6x1x16x2xi8>, tensor<6x1x16xf32> through tensor<2x3xi32> at tensor<2xi64>
    %9 = mha.paged_view %result_codes_0 through %arg13 : tensor<6x1x16x2xi8> through tensor<2x3xi32> -> tensor<2x1x48x2xi8>
    %10 = mha.paged_view %result_scales_1 through %arg13 : tensor<6x1x16xf32> through tensor<2x3xi32> -> tensor<2x1x48xf32>
    %11 = mha.dequantize %9, %10 : tensor<2x1x48x2xi8>, tensor<2x1x48xf32> -> tensor<2x1x48x2xf32>
    %12 = mha.sdpa %1, %8, %11 causal positions(%arg14) alibi(%arg15) window(3) : (tensor<2x2x1x2xf32>, tensor<2x1x48x2xf32>, tensor<2x1x48x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2x1x2xf32>
    %13 = mha.concat_heads %12 : tensor<2x2x1x2xf32> -> tensor<2x1x4xf32>
    %14 = mha.output_project %13, %arg4 bias(%arg8) : (tensor<2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x1x4xf32>
    return %14, %result_codes, %result_scales, %result_codes_0, %result_scales_1 : tensor<2x1x4xf32>, tensor<6x1x16x2xi8>, tensor<6x1x16xf32>, tensor<6x1x16x2xi8>, tensor<6x1x16xf32>
  }
}

