// The worked example: d_model 4, 2 heads, 8 tokens, split first. X is cut
// into two 2-wide slices and head h projects slice h with its own 2x2
// matrices; no biases. Reference case: test/vectors/seed003_split.
func.func @mha(%x: tensor<1x8x4xf32> {mha.name = "x"},
               %w_q: tensor<2x2x2xf32> {mha.name = "w_q"},
               %w_k: tensor<2x2x2xf32> {mha.name = "w_k"},
               %w_v: tensor<2x2x2xf32> {mha.name = "w_v"},
               %w_o: tensor<4x4xf32> {mha.name = "w_o"}) -> tensor<1x8x4xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x8x4xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>,
         tensor<2x2x2xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
