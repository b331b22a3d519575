// A layer written as its five steps (no mha.attention): runs, and --check
// evaluates it op by op.
func.func @mha(%x: tensor<1x8x4xf32> {mha.name = "x"},
               %w_q: tensor<4x4xf32> {mha.name = "w_q"},
               %w_k: tensor<4x4xf32> {mha.name = "w_k"},
               %w_v: tensor<4x4xf32> {mha.name = "w_v"},
               %w_o: tensor<4x4xf32> {mha.name = "w_o"}) -> tensor<1x8x4xf32> {
  %q = mha.project %x, %w_q : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %k = mha.project %x, %w_k : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %v = mha.project %x, %w_v : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %qh = mha.split_heads %q heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %kh = mha.split_heads %k heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %vh = mha.split_heads %v heads(2) : tensor<1x8x4xf32> -> tensor<1x2x8x2xf32>
  %o = mha.sdpa %qh, %kh, %vh : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
  %c = mha.concat_heads %o : tensor<1x2x8x2xf32> -> tensor<1x8x4xf32>
  %y = mha.output_project %c, %w_o : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
