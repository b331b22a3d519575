// The llama3 reference case (test/vectors/model_variants/llama3): GQA 4:1,
// causal, half-split RoPE with Llama 3.1's frequencies given.
func.func @mha(%x: tensor<1x16x32xf32> {mha.name = "x"},
               %w_q: tensor<32x64xf32> {mha.name = "w_q"},
               %w_k: tensor<32x16xf32> {mha.name = "w_k"},
               %w_v: tensor<32x16xf32> {mha.name = "w_v"},
               %w_o: tensor<64x32xf32> {mha.name = "w_o"},
               %inv_freq: tensor<8xf32> {mha.name = "rope_inv_freq"})
    -> tensor<1x16x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(1)
      causal rope("half") rope_base(5.000000e+05) rope_inv_freq(%inv_freq)
      : (tensor<1x16x32xf32>, tensor<32x64xf32>, tensor<32x16xf32>,
         tensor<32x16xf32>, tensor<64x32xf32>, tensor<8xf32>)
      -> tensor<1x16x32xf32>
  return %y : tensor<1x16x32xf32>
}
