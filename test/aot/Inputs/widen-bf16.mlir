// A graph that only widens its bf16 argument to f32: its result shows, bit
// for bit, the bf16 values the C API rounded the caller's floats to
// (bf16_rounding.c).
func.func @widen(%x: tensor<16xbf16> {mha.name = "x"}) -> tensor<16xf32> {
  %y = arith.extf %x : tensor<16xbf16> to tensor<16xf32>
  return %y : tensor<16xf32>
}
