// Attention alone, for tests that must see only the fused attention's
// parallel loop: 2 batch elements, 4 heads, 100 queries and keys, causal.
func.func @sdpa(%q: tensor<2x4x100x16xf32> {mha.name = "q"},
                %k: tensor<2x4x100x16xf32> {mha.name = "k"},
                %v: tensor<2x4x100x16xf32> {mha.name = "v"})
    -> tensor<2x4x100x16xf32> {
  %o = mha.sdpa %q, %k, %v causal
      : (tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32>)
      -> tensor<2x4x100x16xf32>
  return %o : tensor<2x4x100x16xf32>
}
