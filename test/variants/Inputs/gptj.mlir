// The gptj reference case (test/vectors/model_variants/gptj): interleaved
// RoPE on the first 16 of each head's 32 features; causal.
func.func @mha(%x: tensor<1x14x32xf32> {mha.name = "x"},
               %w_q: tensor<32x64xf32> {mha.name = "w_q"},
               %w_k: tensor<32x64xf32> {mha.name = "w_k"},
               %w_v: tensor<32x64xf32> {mha.name = "w_v"},
               %w_o: tensor<64x32xf32> {mha.name = "w_o"})
    -> tensor<1x14x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) causal
      rope("interleaved") rotary_dim(16)
      : (tensor<1x14x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>,
         tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<1x14x32xf32>
  return %y : tensor<1x14x32xf32>
}
