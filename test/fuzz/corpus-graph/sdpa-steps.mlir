func.func @mha(%q: tensor<?x4x?x2xf32>, %k: tensor<?x2x?x2xf32>, %v: tensor<?x2x?x3xf32>, %m: tensor<1x?x?xi1>) -> tensor<?x4x?x3xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) causal scale(0.5) : (tensor<?x4x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x3xf32>, tensor<1x?x?xi1>) -> tensor<?x4x?x3xf32>
  return %o : tensor<?x4x?x3xf32>
}
