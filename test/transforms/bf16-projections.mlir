// RUN: mha-opt %s -split-input-file -mha-bf16-projections | FileCheck %s

// A projection of widened bf16 values on a prepared weight of widened bf16
// values reads the weight packed in K pairs: the prepare function returns
// [K/2 * N] f32 elements, each the bits of w[2kk, n] (low half) and
// w[2kk+1, n] (high half); the projection is a linalg.generic marked
// mha.bf16_dot over (b, h, t, j, kk, p) that reads x as [B, T, K/2, 2].
// CHECK-LABEL: func.func @layer(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<1x8x64xbf16>
//  CHECK-SAME:   %[[B:[a-z0-9]+]]: tensor<64xf32> {mha.name = "b"}
//  CHECK-SAME:   %[[P:[a-z0-9]+]]: tensor<2048xf32> {mha.name = "layer_prepare0"}
//       CHECK:   %[[W:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [32, 64] : tensor<2048xf32> into tensor<32x64xf32>
//       CHECK:   %[[XP:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 32, 2] : tensor<1x8x64xbf16> into tensor<1x8x32x2xbf16>
//       CHECK:   %[[WH:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [32, 2, 32] : tensor<32x64xf32> into tensor<32x2x32xf32>
//       CHECK:   %[[BH:.+]] = tensor.expand_shape %[[B]]
//       CHECK:   %[[INIT:.+]] = linalg.broadcast ins(%[[BH]] : tensor<2x32xf32>) outs(%{{.+}} : tensor<1x2x8x32xf32>) dimensions = [0, 2]
//       CHECK:   %[[Y:.+]] = linalg.generic
//  CHECK-SAME:       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//  CHECK-SAME:       ins(%[[XP]], %[[WH]] : tensor<1x8x32x2xbf16>, tensor<32x2x32xf32>) outs(%[[INIT]] : tensor<1x2x8x32xf32>)
//  CHECK-SAME:       attrs = {mha.bf16_dot}
//       CHECK:     linalg.index 5
//       CHECK:     arith.shrui
//       CHECK:     arith.trunci %{{.+}} : i32 to i16
//       CHECK:     arith.bitcast %{{.+}} : i16 to bf16
//       CHECK:   return %[[Y]]
// CHECK-LABEL: func.func @layer_prepare0(
//       CHECK:   %[[C:.+]] = tensor.concat
//       CHECK:   %[[R:.+]] = arith.truncf %[[C]] : tensor<64x64xf32> to tensor<64x64xbf16>
//       CHECK:   %[[PAIRS:.+]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [32, 2, 64]
//       CHECK:   tensor.extract_slice %[[PAIRS]][0, 0, 0] [32, 1, 64] [1, 1, 1]
//       CHECK:   tensor.extract_slice %[[PAIRS]][0, 1, 0] [32, 1, 64] [1, 1, 1]
//       CHECK:   %[[HIGH:.+]] = arith.shli
//       CHECK:   %[[BITS:.+]] = arith.ori %{{.+}}, %[[HIGH]] : tensor<32x64xi32>
//       CHECK:   %[[F:.+]] = arith.bitcast %[[BITS]] : tensor<32x64xi32> to tensor<32x64xf32>
//       CHECK:   %[[FLAT:.+]] = tensor.collapse_shape %[[F]] {{\[\[}}0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
//       CHECK:   return %[[FLAT]] : tensor<2048xf32>
func.func @layer(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x32xbf16> {mha.name = "w_q"}, %wk: tensor<64x32xbf16> {mha.name = "w_k"}, %b: tensor<64xf32> {mha.name = "b"}, %prep: tensor<4096xf32> {mha.name = "layer_prepare0"}) -> tensor<1x2x8x32xf32> attributes {mha.prepare_functions = [@layer_prepare0]} {
  %w = tensor.expand_shape %prep [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %xw = arith.extf %x : tensor<1x8x64xbf16> to tensor<1x8x64xf32>
  %y = mha.project %xw, %w bias(%b) heads(2) : (tensor<1x8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x2x8x32xf32>
  return %y : tensor<1x2x8x32xf32>
}
func.func @layer_prepare0(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x32xbf16> {mha.name = "w_q"}, %wk: tensor<64x32xbf16> {mha.name = "w_k"}, %b: tensor<64xf32> {mha.name = "b"}) -> tensor<4096xf32> {
  %0 = arith.extf %wq : tensor<64x32xbf16> to tensor<64x32xf32>
  %1 = arith.extf %wk : tensor<64x32xbf16> to tensor<64x32xf32>
  %c = tensor.concat dim(1) %0, %1 : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %c [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  return %flat : tensor<4096xf32>
}

// -----

// Without heads(H), a dynamic batch and sequence, no bias: [B, T, N] from a
// zero fill, loops (b, t, n, kk, p).
// CHECK-LABEL: func.func @plain(
//       CHECK:   %[[INIT:.+]] = linalg.fill
//       CHECK:   linalg.generic
//  CHECK-SAME:       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
//  CHECK-SAME:       ins(%{{.+}}, %{{.+}} : tensor<?x?x8x2xbf16>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<?x?x16xf32>)
//  CHECK-SAME:       attrs = {mha.bf16_dot}
// CHECK-LABEL: func.func @plain_prepare0(
//       CHECK:   return %{{.+}} : tensor<128xf32>
func.func @plain(%x: tensor<?x?x16xbf16> {mha.name = "x"}, %wq: tensor<16x16xbf16> {mha.name = "w_q"}, %prep: tensor<256xf32> {mha.name = "plain_prepare0"}) -> tensor<?x?x16xf32> attributes {mha.prepare_functions = [@plain_prepare0]} {
  %w = tensor.expand_shape %prep [[0, 1]] output_shape [16, 16] : tensor<256xf32> into tensor<16x16xf32>
  %xw = arith.extf %x : tensor<?x?x16xbf16> to tensor<?x?x16xf32>
  %y = mha.project %xw, %w : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
func.func @plain_prepare0(%x: tensor<?x?x16xbf16> {mha.name = "x"}, %wq: tensor<16x16xbf16> {mha.name = "w_q"}) -> tensor<256xf32> {
  %0 = arith.extf %wq : tensor<16x16xbf16> to tensor<16x16xf32>
  %flat = tensor.collapse_shape %0 [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  return %flat : tensor<256xf32>
}

// -----

// Heads of 8 columns (not a whole vector), an f32 input and a weight that
// is not bf16 values stay f32 projections.
// CHECK-LABEL: func.func @negative_narrow_heads(
//   CHECK-NOT:   linalg.generic
//       CHECK:   mha.project
// CHECK-LABEL: func.func @negative_narrow_heads_prepare0(
//       CHECK:   return %{{.+}} : tensor<1024xf32>
func.func @negative_narrow_heads(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x16xbf16> {mha.name = "w_q"}, %prep: tensor<1024xf32> {mha.name = "negative_narrow_heads_prepare0"}) -> tensor<1x2x8x8xf32> attributes {mha.prepare_functions = [@negative_narrow_heads_prepare0]} {
  %w = tensor.expand_shape %prep [[0, 1]] output_shape [64, 16] : tensor<1024xf32> into tensor<64x16xf32>
  %xw = arith.extf %x : tensor<1x8x64xbf16> to tensor<1x8x64xf32>
  %y = mha.project %xw, %w heads(2) : (tensor<1x8x64xf32>, tensor<64x16xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}
func.func @negative_narrow_heads_prepare0(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x16xbf16> {mha.name = "w_q"}) -> tensor<1024xf32> {
  %0 = arith.extf %wq : tensor<64x16xbf16> to tensor<64x16xf32>
  %flat = tensor.collapse_shape %0 [[0, 1]] : tensor<64x16xf32> into tensor<1024xf32>
  return %flat : tensor<1024xf32>
}

// -----

// CHECK-LABEL: func.func @negative_f32_input(
//   CHECK-NOT:   linalg.generic
//       CHECK:   mha.project
func.func @negative_f32_input(%x: tensor<1x8x64xf32> {mha.name = "x"}, %wq: tensor<64x32xbf16> {mha.name = "w_q"}, %prep: tensor<2048xf32> {mha.name = "negative_f32_input_prepare0"}) -> tensor<1x8x32xf32> attributes {mha.prepare_functions = [@negative_f32_input_prepare0]} {
  %w = tensor.expand_shape %prep [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
  %y = mha.project %x, %w : (tensor<1x8x64xf32>, tensor<64x32xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}
func.func @negative_f32_input_prepare0(%x: tensor<1x8x64xf32> {mha.name = "x"}, %wq: tensor<64x32xbf16> {mha.name = "w_q"}) -> tensor<2048xf32> {
  %0 = arith.extf %wq : tensor<64x32xbf16> to tensor<64x32xf32>
  %flat = tensor.collapse_shape %0 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
  return %flat : tensor<2048xf32>
}

// -----

// CHECK-LABEL: func.func @negative_f32_weight(
//   CHECK-NOT:   linalg.generic
//       CHECK:   mha.project
func.func @negative_f32_weight(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x32xf32> {mha.name = "w_q"}, %prep: tensor<2048xf32> {mha.name = "negative_f32_weight_prepare0"}) -> tensor<1x8x32xf32> attributes {mha.prepare_functions = [@negative_f32_weight_prepare0]} {
  %w = tensor.expand_shape %prep [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
  %xw = arith.extf %x : tensor<1x8x64xbf16> to tensor<1x8x64xf32>
  %y = mha.project %xw, %w : (tensor<1x8x64xf32>, tensor<64x32xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}
func.func @negative_f32_weight_prepare0(%x: tensor<1x8x64xbf16> {mha.name = "x"}, %wq: tensor<64x32xf32> {mha.name = "w_q"}) -> tensor<2048xf32> {
  %0 = arith.mulf %wq, %wq : tensor<64x32xf32>
  %flat = tensor.collapse_shape %0 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
  return %flat : tensor<2048xf32>
}
