// Hand-written: the attention weights of separate q and k, with a mask
// shared by the batch or not; the result's `?` sizes stay unrefined.
module {
  func.func @weights(%q: tensor<?x2x?x2xf32> {mha.name = "q"}, %k: tensor<?x1x?x2xf32> {mha.name = "k"}, %mask: tensor<?x?x?xi1> {mha.name = "mask"}) -> tensor<?x2x?x?xf32> {
    %w = mha.attention_weights %q, %k mask(%mask) : (tensor<?x2x?x2xf32>, tensor<?x1x?x2xf32>, tensor<?x?x?xi1>) -> tensor<?x2x?x?xf32>
    return %w : tensor<?x2x?x?xf32>
  }
}
