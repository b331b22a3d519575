// Attention whose weights can be worked out by hand (scale 1, dk = 1).
// Query 0 has q = ln 3 against keys 1, 0, 0: scores ln 3, 0, 0, so the
// weights are 3/5, 1/5, 1/5. Query 1 may attend no key (its mask row is all
// false): its weights are all 0, not NaN.
func.func @by_hand() -> tensor<1x1x2x1xf32> {
  %q = arith.constant dense<[[[[1.0986123], [0.0]]]]> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<[[[[1.0], [0.0], [0.0]]]]> : tensor<1x1x3x1xf32>
  %m = arith.constant dense<[[[true, true, true], [false, false, false]]]> : tensor<1x2x3xi1>
  %o = mha.sdpa %q, %k, %k mask(%m) scale(1.0)
      : (tensor<1x1x2x1xf32>, tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32>, tensor<1x2x3xi1>) -> tensor<1x1x2x1xf32>
  return %o : tensor<1x1x2x1xf32>
}
