// The neox_partial reference case (test/vectors/model_variants/
// neox_partial): half-split RoPE on the first 16 of each head's 32
// features, positions scaled by 1/2; biases; causal.
func.func @mha(%x: tensor<1x15x32xf32> {mha.name = "x"},
               %w_q: tensor<32x64xf32> {mha.name = "w_q"},
               %w_k: tensor<32x64xf32> {mha.name = "w_k"},
               %w_v: tensor<32x64xf32> {mha.name = "w_v"},
               %w_o: tensor<64x32xf32> {mha.name = "w_o"},
               %b_q: tensor<64xf32> {mha.name = "b_q"},
               %b_k: tensor<64xf32> {mha.name = "b_k"},
               %b_v: tensor<64xf32> {mha.name = "b_v"},
               %b_o: tensor<32xf32> {mha.name = "b_o"})
    -> tensor<1x15x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q)
      bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(2) causal rope("half")
      rotary_dim(16) rope_scale(2.000000e+00)
      : (tensor<1x15x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>,
         tensor<32x64xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>,
         tensor<64xf32>, tensor<32xf32>) -> tensor<1x15x32xf32>
  return %y : tensor<1x15x32xf32>
}
