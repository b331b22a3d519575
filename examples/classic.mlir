// The classic configuration of "Attention Is All You Need": self-attention
// over 512 tokens (batch 1), d_model 512, 8 heads of d_k = d_v = 64, with
// biases on every projection. Same shapes as test/vectors/seed004_3tok, with
// a longer sequence.
func.func @mha(%x: tensor<1x512x512xf32> {mha.name = "x"},
               %w_q: tensor<512x512xf32> {mha.name = "w_q"},
               %w_k: tensor<512x512xf32> {mha.name = "w_k"},
               %w_v: tensor<512x512xf32> {mha.name = "w_v"},
               %w_o: tensor<512x512xf32> {mha.name = "w_o"},
               %b_q: tensor<512xf32> {mha.name = "b_q"},
               %b_k: tensor<512xf32> {mha.name = "b_k"},
               %b_v: tensor<512xf32> {mha.name = "b_v"},
               %b_o: tensor<512xf32> {mha.name = "b_o"}) -> tensor<1x512x512xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(8)
      : (tensor<1x512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32>,
         tensor<512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<1x512x512xf32>
  return %y : tensor<1x512x512xf32>
}
