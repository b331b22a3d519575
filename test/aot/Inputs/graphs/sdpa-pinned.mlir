// Hand-written: q, k, v and a mask as separate arguments, one intermediate
// whose declared type pins the batch to 2, and attention weights.
module {
  func.func @sdpa(%x: tensor<?x?x4xf32> {mha.name = "x"}, %k: tensor<?x2x?x2xf32> {mha.name = "k"}, %v: tensor<?x2x?x3xf32> {mha.name = "v"}, %mask: tensor<?x?x?xi1> {mha.name = "mask"}, %w: tensor<4x4xf32> {mha.name = "w_q"}) -> tensor<?x2x?x3xf32> {
    %p = mha.project %x, %w : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<2x?x4xf32>
    %q = mha.split_heads %p heads(2) : tensor<2x?x4xf32> -> tensor<2x2x?x2xf32>
    %o = mha.sdpa %q, %k, %v mask(%mask) : (tensor<2x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x3xf32>, tensor<?x?x?xi1>) -> tensor<?x2x?x3xf32>
    return %o : tensor<?x2x?x3xf32>
  }
}
