module {
  func.func @mha(%arg0: tensor<?x?x4xf32> {mha.name = "x"}, %arg1: tensor<4x4xf32> {mha.name = "w_q"}, %arg2: tensor<4x4xf32> {mha.name = "w_k"}, %arg3: tensor<4x4xf32> {mha.name = "w_v"}, %arg4: tensor<4x4xf32> {mha.name = "w_o"}, %arg5: tensor<4xf32> {mha.name = "b_q"}, %arg6: tensor<4xf32> {mha.name = "b_k"}, %arg7: tensor<4xf32> {mha.name = "b_v"}, %arg8: tensor<4xf32> {mha.name = "b_o"}, %arg9: tensor<?x2x8x2xi8> {mha.name = "k_cache"}, %arg10: tensor<?x2x8xf32> {mha.name = "k_scales"}, %arg11: tensor<?x2x8x2xi8> {mha.name = "v_cache"}, %arg12: tensor<?x2x8xf32> {mha.name = "v_scales"}, %arg13: tensor<?xi64> {mha.name = "cache_lengths"}) -> (tensor<?x?x4xf32>, tensor<?x2x8x2xi8>, tensor<?x2x8xf32>, tensor<?x2x8x2xi8>, tensor<?x2x8xf32>) {
    %0 = mha.project %arg0, %arg1 bias(%arg5) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %1 = mha.split_heads %0 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %2 = mha.project %arg0, %arg2 bias(%arg6) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %3 = mha.split_heads %2 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %4 = mha.project %arg0, %arg3 bias(%arg7) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %5 = mha.split_heads %4 heads(2) : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
    %result_codes, %result_scales = mha.cache_append_quantized %3 into %arg9, %arg10 at %arg13 : tensor<?x2x?x2xf32> into tensor<?x2x8x2xi8>, tensor<?x2x8xf32> at tensor<?xi64>
    %6 = mha.dequantize %result_codes, %result_scales : tensor<?x2x8x2xi8>, tensor<?x2x8xf32> -> tensor<?x2x8x2xf32>
    %result_codes_0, %result_scales_1 = mha.cache_append_quantized %5 into %arg11, %arg12 at %arg13 : tensor<?x2x?x2xf32> into tensor<?x2x8x2xi8>, tensor<?x2x8xf32> at tensor<?xi64>
    %7 = mha.dequantize %result_codes_0, %result_scales_1 : tensor<?x2x8x2xi8>, tensor<?x2x8xf32> -> tensor<?x2x8x2xf32>
    %8 = mha.sdpa %1, %6, %7 causal positions(%arg13) : (tensor<?x2x?x2xf32>, tensor<?x2x8x2xf32>, tensor<?x2x8x2xf32>, tensor<?xi64>) -> tensor<?x2x?x2xf32>
    %9 = mha.concat_heads %8 : tensor<?x2x?x2xf32> -> tensor<?x?x4xf32>
    %10 = mha.output_project %9, %arg4 bias(%arg8) : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    return %10, %result_codes, %result_scales, %result_codes_0, %result_scales_1 : tensor<?x?x4xf32>, tensor<?x2x8x2xi8>, tensor<?x2x8xf32>, tensor<?x2x8x2xi8>, tensor<?x2x8xf32>
  }
}

