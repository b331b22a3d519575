func.func @mha(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %y = mha.attention %x weights(%x
