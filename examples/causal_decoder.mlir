// Causal self-attention as in a decoder block: 128 tokens (batch 1),
// d_model 256, 4 heads of d_k = d_v = 64, biases on every projection. Token i
// attends to tokens 0 .. i only.
func.func @mha(%x: tensor<1x128x256xf32> {mha.name = "x"},
               %w_q: tensor<256x256xf32> {mha.name = "w_q"},
               %w_k: tensor<256x256xf32> {mha.name = "w_k"},
               %w_v: tensor<256x256xf32> {mha.name = "w_v"},
               %w_o: tensor<256x256xf32> {mha.name = "w_o"},
               %b_q: tensor<256xf32> {mha.name = "b_q"},
               %b_k: tensor<256xf32> {mha.name = "b_k"},
               %b_v: tensor<256xf32> {mha.name = "b_v"},
               %b_o: tensor<256xf32> {mha.name = "b_o"}) -> tensor<1x128x256xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(4) causal
      : (tensor<1x128x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>,
         tensor<256x256xf32>, tensor<256x256xf32>, tensor<256xf32>,
         tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  return %y : tensor<1x128x256xf32>
}
