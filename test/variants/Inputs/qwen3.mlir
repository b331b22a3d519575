// The qwen3 reference case (test/vectors/model_variants/qwen3): QK-norm
// (eps 1e-6) then half-split RoPE of base 1e6; GQA 4:2; causal.
func.func @mha(%x: tensor<1x12x32xf32> {mha.name = "x"},
               %w_q: tensor<32x64xf32> {mha.name = "w_q"},
               %w_k: tensor<32x32xf32> {mha.name = "w_k"},
               %w_v: tensor<32x32xf32> {mha.name = "w_v"},
               %w_o: tensor<64x32xf32> {mha.name = "w_o"},
               %q_norm: tensor<16xf32> {mha.name = "q_norm"},
               %k_norm: tensor<16xf32> {mha.name = "k_norm"})
    -> tensor<1x12x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(2)
      causal q_norm(%q_norm) k_norm(%k_norm) qk_norm_eps(1.000000e-06)
      rope("half") rope_base(1.000000e+06)
      : (tensor<1x12x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<64x32xf32>, tensor<16xf32>, tensor<16xf32>)
      -> tensor<1x12x32xf32>
  return %y : tensor<1x12x32xf32>
}
