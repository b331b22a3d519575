module {
  func.func @mha(%arg0: tensor<?x?x8xbf16> {mha.name = "x"}, %arg1: tensor<8x16xbf16> {mha.name = "w_q"}, %arg2: tensor<8x16xbf16> {mha.name = "w_k"}, %arg3: tensor<8x16xbf16> {mha.name = "w_v"}, %arg4: tensor<16x8xbf16> {mha.name = "w_o"}, %arg5: tensor<16xbf16> {mha.name = "b_q"}, %arg6: tensor<16xbf16> {mha.name = "b_k"}, %arg7: tensor<16xbf16> {mha.name = "b_v"}, %arg8: tensor<8xbf16> {mha.name = "b_o"}, %arg9: tensor<?x1x672x16xbf16> {mha.name = "k_cache"}, %arg10: tensor<?x1x672x16xbf16> {mha.name = "v_cache"}, %arg11: tensor<?xi64> {mha.name = "cache_lengths"}, %arg12: tensor<16xf32> {mha.name = "q_norm"}, %arg13: tensor<16xf32> {mha.name = "k_norm"}, %arg14: tensor<1xf32> {mha.name = "sinks"}) -> (tensor<?x?x8xf32>, tensor<?x1x672x16xbf16>, tensor<?x1x672x16xbf16>) {
    %0 = arith.extf %arg0 : tensor<?x?x8xbf16> to tensor<?x?x8xf32>
    %1 = arith.extf %arg1 : tensor<8x16xbf16> to tensor<8x16xf32>
    %2 = arith.extf %arg5 : tensor<16xbf16> to tensor<16xf32>
    %3 = mha.project %0, %1 bias(%2) : (tensor<?x?x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %4 = mha.split_heads %3 heads(1) : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
    %5 = arith.extf %arg2 : tensor<8x16xbf16> to tensor<8x16xf32>
    %6 = arith.extf %arg6 : tensor<16xbf16> to tensor<16xf32>
    %7 = mha.project %0, %5 bias(%6) : (tensor<?x?x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %8 = mha.split_heads %7 heads(1) : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
    %9 = arith.extf %arg3 : tensor<8x16xbf16> to tensor<8x16xf32>
    %10 = arith.extf %arg7 : tensor<16xbf16> to tensor<16xf32>
    %11 = mha.project %0, %9 bias(%10) : (tensor<?x?x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %12 = mha.split_heads %11 heads(1) : tensor<?x?x16xf32> -> tensor<?x1x?x16xf32>
    %13 = mha.rms_norm %4, %arg12 eps(1.000000e-05) : (tensor<?x1x?x16xf32>, tensor<16xf32>) -> tensor<?x1x?x16xf32>
    %14 = mha.rms_norm %8, %arg13 eps(1.000000e-05) : (tensor<?x1x?x16xf32>, tensor<16xf32>) -> tensor<?x1x?x16xf32>
    %15 = arith.truncf %14 : tensor<?x1x?x16xf32> to tensor<?x1x?x16xbf16>
    %16 = mha.cache_append %15 into %arg9 at %arg11 : tensor<?x1x?x16xbf16> into tensor<?x1x672x16xbf16> at tensor<?xi64>
    %17 = arith.extf %16 : tensor<?x1x672x16xbf16> to tensor<?x1x672x16xf32>
    %18 = arith.truncf %12 : tensor<?x1x?x16xf32> to tensor<?x1x?x16xbf16>
    %19 = mha.cache_append %18 into %arg10 at %arg11 : tensor<?x1x?x16xbf16> into tensor<?x1x672x16xbf16> at tensor<?xi64>
    %20 = arith.extf %19 : tensor<?x1x672x16xbf16> to tensor<?x1x672x16xf32>
    %21 = mha.sdpa %13, %17, %20 causal positions(%arg11) sinks(%arg14) : (tensor<?x1x?x16xf32>, tensor<?x1x672x16xf32>, tensor<?x1x672x16xf32>, tensor<?xi64>, tensor<1xf32>) -> tensor<?x1x?x16xf32>
    %22 = mha.concat_heads %21 : tensor<?x1x?x16xf32> -> tensor<?x?x16xf32>
    %23 = arith.extf %arg4 : tensor<16x8xbf16> to tensor<16x8xf32>
    %24 = arith.extf %arg8 : tensor<8xbf16> to tensor<8xf32>
    %25 = mha.output_project %22, %23 bias(%24) : (tensor<?x?x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    return %25, %16, %19 : tensor<?x?x8xf32>, tensor<?x1x672x16xbf16>, tensor<?x1x672x16xbf16>
  }
}

