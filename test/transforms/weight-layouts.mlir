// RUN: mha-opt %s -split-input-file -mha-weight-layouts="row-padding=16" | FileCheck %s

// A prepared Q|K|V weight [D, H, d], read by heads with the reduction
// outermost, is stored head by head: the prepare function transposes it
// once, and the contraction reads [H, D, d] with the first two results of
// its map swapped. Rows of 4 heads of 64 floats are 1 KiB apart. The bias is no projection weight and stays as it is.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @heads
//  CHECK-SAME:   %[[P:[^:]+]]: tensor<8192xf32> {mha.name = "heads_prepare0"}
//       CHECK:   %[[V:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2]] output_shape [4, 32, 64] : tensor<8192xf32> into tensor<4x32x64xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[X]], #[[W]], #{{.+}}]
//  CHECK-SAME:     ins(%{{.+}}, %[[V]] : tensor<1x4x32xf32>, tensor<4x32x64xf32>)
// CHECK-LABEL: func.func @heads_prepare0
//       CHECK:   %[[E:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1, 2]] output_shape [32, 4, 64]
//       CHECK:   %[[T:.+]] = linalg.transpose ins(%[[E]] : tensor<32x4x64xf32>) outs(%{{.+}} : tensor<4x32x64xf32>) permutation = [1, 0, 2]
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2]] : tensor<4x32x64xf32> into tensor<8192xf32>
//       CHECK:   return %[[F]]
#x = affine_map<(b, h, t, c, k) -> (b, t, k)>
#w = affine_map<(b, h, t, c, k) -> (k, h, c)>
#y = affine_map<(b, h, t, c, k) -> (b, h, t, c)>
func.func @heads(%x: tensor<1x4x32xf32> {mha.name = "x"}, %w_q: tensor<32x256xf32> {mha.name = "w_q"},
                 %p: tensor<8192xf32> {mha.name = "heads_prepare0"}) -> tensor<1x4x4x64xf32>
    attributes {mha.prepare_functions = [@heads_prepare0]} {
  %w = tensor.expand_shape %p [[0, 1, 2]] output_shape [32, 4, 64] : tensor<8192xf32> into tensor<32x4x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x64xf32>) -> tensor<1x4x4x64xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x4x32xf32>, tensor<32x4x64xf32>) outs(%init : tensor<1x4x4x64xf32>) attrs = {mha.projection} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x64xf32>
  return %y : tensor<1x4x4x64xf32>
}
func.func @heads_prepare0(%x: tensor<1x4x32xf32> {mha.name = "x"}, %w_q: tensor<32x256xf32> {mha.name = "w_q"}) -> tensor<8192xf32> {
  %flat = tensor.collapse_shape %w_q [[0, 1]] : tensor<32x256xf32> into tensor<8192xf32>
  return %flat : tensor<8192xf32>
}

// -----

// Rows of 6 heads of 8 floats (192 bytes) spread over the cache sets: the
// prepared weight keeps its layout.
// CHECK-LABEL: func.func @negative_small_heads
//       CHECK:   tensor.expand_shape %{{.+}} output_shape [32, 6, 8]
//   CHECK-NOT:   linalg.transpose
#x4 = affine_map<(b, h, t, c, k) -> (b, t, k)>
#w4 = affine_map<(b, h, t, c, k) -> (k, h, c)>
#y4 = affine_map<(b, h, t, c, k) -> (b, h, t, c)>
func.func @negative_small_heads(%x: tensor<1x4x32xf32> {mha.name = "x"}, %w_q: tensor<32x48xf32> {mha.name = "w_q"},
                 %p: tensor<1536xf32> {mha.name = "negative_small_heads_prepare0"}) -> tensor<1x6x4x8xf32>
    attributes {mha.prepare_functions = [@negative_small_heads_prepare0]} {
  %w = tensor.expand_shape %p [[0, 1, 2]] output_shape [32, 6, 8] : tensor<1536xf32> into tensor<32x6x8xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x6x4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x6x4x8xf32>) -> tensor<1x6x4x8xf32>
  %y = linalg.generic {indexing_maps = [#x4, #w4, #y4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x4x32xf32>, tensor<32x6x8xf32>) outs(%init : tensor<1x6x4x8xf32>) attrs = {mha.projection} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x6x4x8xf32>
  return %y : tensor<1x6x4x8xf32>
}
func.func @negative_small_heads_prepare0(%x: tensor<1x4x32xf32> {mha.name = "x"}, %w_q: tensor<32x48xf32> {mha.name = "w_q"}) -> tensor<1536xf32> {
  %flat = tensor.collapse_shape %w_q [[0, 1]] : tensor<32x48xf32> into tensor<1536xf32>
  return %flat : tensor<1536xf32>
}


// -----

// The output projection's weight, an argument read as it is, with rows of
// 256 floats (1 KiB): a new prepare function stores it with rows of 272,
// the layer takes that buffer as a new last argument, lists the function
// and reads the weight through a slice of it (a strided view).
// CHECK-LABEL: func.func @output
//  CHECK-SAME:   %[[WO:[^:]+]]: tensor<64x256xf32> {mha.name = "w_o"}, %[[P:[^:]+]]: tensor<17408xf32> {mha.name = "output_prepare0"})
//  CHECK-SAME:   attributes {mha.prepare_functions = [@output_prepare0]}
//       CHECK:   %[[E:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2]] output_shape [2, 32, 272]
//       CHECK:   %[[S:.+]] = tensor.extract_slice %[[E]][0, 0, 0] [2, 32, 256] [1, 1, 1] : tensor<2x32x272xf32> to tensor<2x32x256xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}}, %[[S]] : tensor<1x2x4x32xf32>, tensor<2x32x256xf32>)
// CHECK-LABEL: func.func @output_prepare0
//  CHECK-SAME:   (%{{[^:]+}}: tensor<1x2x4x32xf32> {mha.name = "o"}, %[[W:[^:]+]]: tensor<64x256xf32> {mha.name = "w_o"}) -> tensor<17408xf32>
//       CHECK:   %[[L:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1, 2]] output_shape [2, 32, 256]
//       CHECK:   %[[Z:.+]] = linalg.fill
//       CHECK:   %[[I:.+]] = tensor.insert_slice %[[L]] into %[[Z]][0, 0, 0] [2, 32, 256] [1, 1, 1] : tensor<2x32x256xf32> into tensor<2x32x272xf32>
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %[[I]]
//       CHECK:   return %[[F]] : tensor<17408xf32>
#o = affine_map<(b, t, n, h, c) -> (b, h, t, c)>
#wo = affine_map<(b, t, n, h, c) -> (h, c, n)>
#out = affine_map<(b, t, n, h, c) -> (b, t, n)>
func.func @output(%o: tensor<1x2x4x32xf32> {mha.name = "o"}, %w_o: tensor<64x256xf32> {mha.name = "w_o"}) -> tensor<1x4x256xf32> {
  %w = tensor.expand_shape %w_o [[0, 1], [2]] output_shape [2, 32, 256] : tensor<64x256xf32> into tensor<2x32x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x256xf32>) -> tensor<1x4x256xf32>
  %y = linalg.generic {indexing_maps = [#o, #wo, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %w : tensor<1x2x4x32xf32>, tensor<2x32x256xf32>) outs(%init : tensor<1x4x256xf32>) attrs = {mha.projection} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x256xf32>
  return %y : tensor<1x4x256xf32>
}

// -----

// Rows of 100 floats (400 bytes) do not share cache sets: left as they are.
// CHECK-LABEL: func.func @negative_short_rows
//   CHECK-NOT:   mha.prepare_functions
//       CHECK:   tensor.expand_shape %{{.+}} output_shape [2, 32, 100]
//   CHECK-NOT:   func.func @negative_short_rows_prepare0
#o2 = affine_map<(b, t, n, h, c) -> (b, h, t, c)>
#wo2 = affine_map<(b, t, n, h, c) -> (h, c, n)>
#out2 = affine_map<(b, t, n, h, c) -> (b, t, n)>
func.func @negative_short_rows(%o: tensor<1x2x4x32xf32>, %w_o: tensor<64x100xf32>) -> tensor<1x4x100xf32> {
  %w = tensor.expand_shape %w_o [[0, 1], [2]] output_shape [2, 32, 100] : tensor<64x100xf32> into tensor<2x32x100xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x100xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x100xf32>) -> tensor<1x4x100xf32>
  %y = linalg.generic {indexing_maps = [#o2, #wo2, #out2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %w : tensor<1x2x4x32xf32>, tensor<2x32x100xf32>) outs(%init : tensor<1x4x100xf32>) attrs = {mha.projection} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x100xf32>
  return %y : tensor<1x4x100xf32>
}

// -----

// A weight that is also read as something else (here returned) keeps its
// layout: the other reader expects it.
// CHECK-LABEL: func.func @negative_other_reader
//   CHECK-NOT:   mha.prepare_functions
//   CHECK-NOT:   func.func @negative_other_reader_prepare0
#o3 = affine_map<(b, t, n, h, c) -> (b, h, t, c)>
#wo3 = affine_map<(b, t, n, h, c) -> (h, c, n)>
#out3 = affine_map<(b, t, n, h, c) -> (b, t, n)>
func.func @negative_other_reader(%o: tensor<1x2x4x32xf32>, %w_o: tensor<64x256xf32>) -> (tensor<1x4x256xf32>, tensor<64x256xf32>) {
  %w = tensor.expand_shape %w_o [[0, 1], [2]] output_shape [2, 32, 256] : tensor<64x256xf32> into tensor<2x32x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x256xf32>) -> tensor<1x4x256xf32>
  %y = linalg.generic {indexing_maps = [#o3, #wo3, #out3], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %w : tensor<1x2x4x32xf32>, tensor<2x32x256xf32>) outs(%init : tensor<1x4x256xf32>) attrs = {mha.projection} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x256xf32>
  return %y, %w_o : tensor<1x4x256xf32>, tensor<64x256xf32>
}
