// Cross-attention as in an encoder-decoder block: 64 queries of width 512
// attend over 96 keys/values of width 384 (batch 1), 8 heads of
// d_k = d_v = 64, biases on every projection. K and V are projected from kv,
// so w_k and w_v have 384 rows.
func.func @mha(%x: tensor<1x64x512xf32> {mha.name = "x"},
               %kv: tensor<1x96x384xf32> {mha.name = "kv"},
               %w_q: tensor<512x512xf32> {mha.name = "w_q"},
               %w_k: tensor<384x512xf32> {mha.name = "w_k"},
               %w_v: tensor<384x512xf32> {mha.name = "w_v"},
               %w_o: tensor<512x512xf32> {mha.name = "w_o"},
               %b_q: tensor<512xf32> {mha.name = "b_q"},
               %b_k: tensor<512xf32> {mha.name = "b_k"},
               %b_v: tensor<512xf32> {mha.name = "b_v"},
               %b_o: tensor<512xf32> {mha.name = "b_o"}) -> tensor<1x64x512xf32> {
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o)
      bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(8)
      : (tensor<1x64x512xf32>, tensor<1x96x384xf32>, tensor<512x512xf32>,
         tensor<384x512xf32>, tensor<384x512xf32>, tensor<512x512xf32>,
         tensor<512xf32>, tensor<512xf32>, tensor<512xf32>,
         tensor<512xf32>) -> tensor<1x64x512xf32>
  return %y : tensor<1x64x512xf32>
}
