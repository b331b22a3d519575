// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg | FileCheck %s

// A shared projection multiplies the rows of the input, flattened to 2-D,
// into the bias broadcast along the rows; batch and sequence may be dynamic.
// CHECK-LABEL: func.func @project_shared_bias
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x8xf32>, %[[W:.+]]: tensor<8x6xf32>, %[[B:.+]]: tensor<6xf32>)
//   CHECK-DAG:   %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
//   CHECK-DAG:   %[[BATCH:.+]] = tensor.dim %[[X]], %c0
//   CHECK-DAG:   %[[SEQ:.+]] = tensor.dim %[[X]], %c1
//       CHECK:   %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<6xf32>) outs(%{{.+}} : tensor<?x6xf32>) dimensions = [0]
//       CHECK:   %[[MM:.+]] = linalg.matmul {mha.projection} ins(%[[ROWS]], %[[W]] : tensor<?x8xf32>, tensor<8x6xf32>) outs(%[[INIT]] : tensor<?x6xf32>)
//       CHECK:   %[[Y:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [%[[BATCH]], %[[SEQ]], 6] : tensor<?x6xf32> into tensor<?x?x6xf32>
//       CHECK:   return %[[Y]]
func.func @project_shared_bias(%x: tensor<?x?x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<?x?x6xf32> {
  %y = mha.project %x, %w bias(%b)
      : (tensor<?x?x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<?x?x6xf32>
  return %y : tensor<?x?x6xf32>
}

// -----

// Without a bias the accumulator is zeros.
// CHECK-LABEL: func.func @project_shared_no_bias
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<6x6xf32>)
//       CHECK:   linalg.matmul {mha.projection} ins(%{{.+}}, %{{.+}} : tensor<6x8xf32>, tensor<8x6xf32>) outs(%[[INIT]] : tensor<6x6xf32>)
//   CHECK-NOT:   linalg.broadcast
func.func @project_shared_no_bias(%x: tensor<2x3x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x3x6xf32> {
  %y = mha.project %x, %w : (tensor<2x3x8xf32>, tensor<8x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

// Per head: head h multiplies its slice by its own matrix; the bias [H·d] is
// viewed as [H, d] and broadcast over batch and tokens.
//   CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
//   CHECK-DAG: #[[WEIGHT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
//   CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @project_per_head
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x2x8x2xf32>, %[[W:.+]]: tensor<2x2x3xf32>, %[[B:.+]]: tensor<6xf32>)
//       CHECK:   %[[B2:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
//       CHECK:   %[[INIT:.+]] = linalg.broadcast ins(%[[B2]] : tensor<2x3xf32>) outs(%{{.+}} : tensor<1x2x8x3xf32>) dimensions = [0, 2]
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[WEIGHT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %[[W]] : tensor<1x2x8x2xf32>, tensor<2x2x3xf32>) outs(%[[INIT]] : tensor<1x2x8x3xf32>)
//  CHECK-SAME:     attrs = {mha.projection}
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
func.func @project_per_head(%x: tensor<1x2x8x2xf32>, %w: tensor<2x2x3xf32>, %b: tensor<6xf32>) -> tensor<1x2x8x3xf32> {
  %y = mha.project %x, %w bias(%b)
      : (tensor<1x2x8x2xf32>, tensor<2x2x3xf32>, tensor<6xf32>) -> tensor<1x2x8x3xf32>
  return %y : tensor<1x2x8x3xf32>
}

// -----

// Writing heads: W [D, H·d] is read as [D, H, d] and the bias as [H, d], so
// each head's columns land in [B, H, T, d] without a transposed copy.
//   CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
//   CHECK-DAG: #[[WEIGHT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d1, d3)>
//   CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @project_writes_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x8xf32>, %[[W:.+]]: tensor<8x6xf32>, %[[B:.+]]: tensor<6xf32>)
//   CHECK-DAG:   %[[W3:.+]] = tensor.expand_shape %[[W]] {{\[}}[0], [1, 2]] output_shape [8, 2, 3] : tensor<8x6xf32> into tensor<8x2x3xf32>
//   CHECK-DAG:   %[[B2:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
//       CHECK:   %[[INIT:.+]] = linalg.broadcast ins(%[[B2]] : tensor<2x3xf32>) outs(%{{.+}} : tensor<?x2x?x3xf32>) dimensions = [0, 2]
//       CHECK:   %[[Y:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[WEIGHT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %[[W3]] : tensor<?x?x8xf32>, tensor<8x2x3xf32>) outs(%[[INIT]] : tensor<?x2x?x3xf32>)
//  CHECK-SAME:     attrs = {mha.projection}
//   CHECK-NOT:   linalg.transpose
//       CHECK:   return %[[Y]]
func.func @project_writes_heads(%x: tensor<?x?x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<?x2x?x3xf32> {
  %y = mha.project %x, %w bias(%b) heads(2)
      : (tensor<?x?x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<?x2x?x3xf32>
  return %y : tensor<?x2x?x3xf32>
}

// -----

// Per head from the unsplit input: [B, T, H·w] is read as [B, T, H, w], so
// head h reads its columns in place.
//   CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
//   CHECK-DAG: #[[WEIGHT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @project_per_head_unsplit
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x8x4xf32>, %[[W:.+]]: tensor<2x2x3xf32>)
//       CHECK:   %[[X4:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 2, 2] : tensor<1x8x4xf32> into tensor<1x8x2x2xf32>
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[WEIGHT]], #{{.+}}]
//  CHECK-SAME:     ins(%[[X4]], %[[W]] : tensor<1x8x2x2xf32>, tensor<2x2x3xf32>) outs(%{{.+}} : tensor<1x2x8x3xf32>)
//   CHECK-NOT:   linalg.transpose
func.func @project_per_head_unsplit(%x: tensor<1x8x4xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x8x3xf32> {
  %y = mha.project %x, %w : (tensor<1x8x4xf32>, tensor<2x2x3xf32>) -> tensor<1x2x8x3xf32>
  return %y : tensor<1x2x8x3xf32>
}

// -----

// CHECK-LABEL: func.func @split_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x12xf32>)
//       CHECK:   %[[SPLIT:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, %{{.+}}, 3, 4] : tensor<?x?x12xf32> into tensor<?x?x3x4xf32>
//       CHECK:   %[[HEADS:.+]] = linalg.transpose ins(%[[SPLIT]] : tensor<?x?x3x4xf32>) outs(%{{.+}} : tensor<?x3x?x4xf32>) permutation = [0, 2, 1, 3]
//       CHECK:   return %[[HEADS]] : tensor<?x3x?x4xf32>
func.func @split_heads(%x: tensor<?x?x12xf32>) -> tensor<?x3x?x4xf32> {
  %y = mha.split_heads %x heads(3) : tensor<?x?x12xf32> -> tensor<?x3x?x4xf32>
  return %y : tensor<?x3x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @concat_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x5x4xf32>)
//       CHECK:   %[[TOKENS:.+]] = linalg.transpose ins(%[[X]] : tensor<2x3x5x4xf32>) outs(%{{.+}} : tensor<2x5x3x4xf32>) permutation = [0, 2, 1, 3]
//       CHECK:   %[[Y:.+]] = tensor.collapse_shape %[[TOKENS]] {{\[}}[0], [1], [2, 3]] : tensor<2x5x3x4xf32> into tensor<2x5x12xf32>
//       CHECK:   return %[[Y]]
func.func @concat_heads(%x: tensor<2x3x5x4xf32>) -> tensor<2x5x12xf32> {
  %y = mha.concat_heads %x : tensor<2x3x5x4xf32> -> tensor<2x5x12xf32>
  return %y : tensor<2x5x12xf32>
}

// -----

// The concatenated heads [B, T, H·dv] are rows like any projection input.
// CHECK-LABEL: func.func @output_project_concatenated
//       CHECK:   tensor.collapse_shape
//       CHECK:   linalg.broadcast
//       CHECK:   linalg.matmul
//       CHECK:   tensor.expand_shape
func.func @output_project_concatenated(%x: tensor<2x5x12xf32>, %w: tensor<12x7xf32>, %b: tensor<7xf32>) -> tensor<2x5x7xf32> {
  %y = mha.output_project %x, %w bias(%b)
      : (tensor<2x5x12xf32>, tensor<12x7xf32>, tensor<7xf32>) -> tensor<2x5x7xf32>
  return %y : tensor<2x5x7xf32>
}

// -----

// From the heads [B, H, T, dv]: one contraction over head and value column,
// reading W [H·dv, D_out] as [H, dv, D_out], with no concatenated copy.
//   CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
//   CHECK-DAG: #[[WEIGHT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
//   CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @output_project_heads
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x3x?x4xf32>, %[[W:.+]]: tensor<12x7xf32>, %[[B:.+]]: tensor<7xf32>)
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[W3:.+]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [3, 4, 7] : tensor<12x7xf32> into tensor<3x4x7xf32>
//       CHECK:   %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<7xf32>) outs(%{{.+}} : tensor<?x?x7xf32>) dimensions = [0, 1]
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[WEIGHT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %[[W3]] : tensor<?x3x?x4xf32>, tensor<3x4x7xf32>) outs(%[[INIT]] : tensor<?x?x7xf32>)
//  CHECK-SAME:     attrs = {mha.projection}
func.func @output_project_heads(%x: tensor<?x3x?x4xf32>, %w: tensor<12x7xf32>, %b: tensor<7xf32>) -> tensor<?x?x7xf32> {
  %y = mha.output_project %x, %w bias(%b)
      : (tensor<?x3x?x4xf32>, tensor<12x7xf32>, tensor<7xf32>) -> tensor<?x?x7xf32>
  return %y : tensor<?x?x7xf32>
}

// -----

// Scores, a safe softmax and the weighted values. With 8 query heads and 2
// key/value heads, query head h reads key/value head h floordiv 4 through
// the indexing maps: no copy of K or V.
//   CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
//   CHECK-DAG: #[[K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
//   CHECK-DAG: #[[V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
//   CHECK-DAG: #[[S:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
//   CHECK-DAG: #[[ROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
//   CHECK-DAG: #[[PERROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sdpa_gqa
//  CHECK-SAME:   (%[[QA:.+]]: tensor<2x8x5x4xf32>, %[[KA:.+]]: tensor<2x2x6x4xf32>, %[[VA:.+]]: tensor<2x2x6x3xf32>)
//   CHECK-DAG:   %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
//   CHECK-DAG:   %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// The scale 1/sqrt(4) times log2(e): the softmax takes exp2.
//   CHECK-DAG:   %[[SCALE:.+]] = arith.constant 0.72134751 : f32
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[QA]], %[[KA]] : tensor<2x8x5x4xf32>, tensor<2x2x6x4xf32>) outs(%{{.+}} : tensor<2x8x5x6xf32>)
// Row max over the raw scores, starting at -inf (the scale is positive: the
// largest score is the largest scaled one).
//       CHECK:   %[[MAXINIT:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<2x8x5xf32>)
//       CHECK:   %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ROW4]], #[[PERROW4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[SCORES]] : tensor<2x8x5x6xf32>) outs(%[[MAXINIT]] : tensor<2x8x5xf32>)
//   CHECK-NOT:     arith.mulf
//       CHECK:     arith.maxnumf %{{.+}}, %{{.+}} : f32
// The exp's argument is the distance to the max, then scaled: the largest
// score gets exactly exp2(0) at any magnitude.
//       CHECK:   %[[EXP:.+]] = linalg.generic {indexing_maps = [#[[ROW4]], #[[PERROW4]], #[[ROW4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[SCORES]], %[[MAX]] : tensor<2x8x5x6xf32>, tensor<2x8x5xf32>)
//       CHECK:     ^bb0(%[[ES:.+]]: f32, %[[EM:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[DIST:.+]] = arith.subf %[[ES]], %[[EM]] : f32
//       CHECK:     %[[ARG:.+]] = arith.mulf %[[DIST]], %[[SCALE]] : f32
//       CHECK:     math.exp2 %[[ARG]]
//       CHECK:   %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ROW4]], #[[PERROW4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[EXP]] : tensor<2x8x5x6xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[PV:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[V]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[EXP]], %[[VA]] : tensor<2x8x5x6xf32>, tensor<2x2x6x3xf32>) outs(%{{.+}} : tensor<2x8x5x3xf32>)
// 1/sum, and 0 for a row whose sum is 0 (no key allowed).
//       CHECK:   %[[INV:.+]] = linalg.generic
//  CHECK-SAME:     ins(%[[SUM]] : tensor<2x8x5xf32>)
//       CHECK:     %[[POS:.+]] = arith.cmpf ogt, %[[L:.+]], %[[ZERO]] : f32
//       CHECK:     %[[RCP:.+]] = arith.divf %[[ONE]], %[[L]] : f32
//       CHECK:     arith.select %[[POS]], %[[RCP]], %[[ZERO]] : f32
//       CHECK:   %[[O:.+]] = linalg.generic {indexing_maps = [#[[ROW4]], #[[PERROW4]], #[[ROW4]]]
//  CHECK-SAME:     ins(%[[PV]], %[[INV]] : tensor<2x8x5x3xf32>, tensor<2x8x5xf32>)
//       CHECK:     arith.mulf
//       CHECK:   return %[[O]] : tensor<2x8x5x3xf32>
//   CHECK-NOT:   linalg.softmax
func.func @sdpa_gqa(%q: tensor<2x8x5x4xf32>, %k: tensor<2x2x6x4xf32>, %v: tensor<2x2x6x3xf32>) -> tensor<2x8x5x3xf32> {
  %o = mha.sdpa %q, %k, %v
      : (tensor<2x8x5x4xf32>, tensor<2x2x6x4xf32>, tensor<2x2x6x3xf32>) -> tensor<2x8x5x3xf32>
  return %o : tensor<2x8x5x3xf32>
}

// -----

// Causal: key s is allowed for query t when s <= t (linalg.index 3 and 2),
// in the row max (a disallowed key counts as -inf, so the body stays a plain
// max-reduction) and in the exp (disallowed keys get exactly 0).
// CHECK-LABEL: func.func @sdpa_causal
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
//       CHECK:   ^bb0(%[[S:.+]]: f32, %[[ACC:.+]]: f32):
//       CHECK:     %[[T:.+]] = linalg.index 2 : index
//       CHECK:     %[[KEY:.+]] = linalg.index 3 : index
//       CHECK:     %[[ALLOWED:.+]] = arith.cmpi ule, %[[KEY]], %[[T]] : index
//       CHECK:     %[[SEL:.+]] = arith.select %[[ALLOWED]], %[[S]], %{{.+}} : f32
//       CHECK:     %[[MAX:.+]] = arith.maxnumf %[[ACC]], %[[SEL]] : f32
//       CHECK:     linalg.yield %[[MAX]]
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//       CHECK:     %[[E:.+]] = math.exp2
//       CHECK:     %[[T2:.+]] = linalg.index 2 : index
//       CHECK:     %[[KEY2:.+]] = linalg.index 3 : index
//       CHECK:     %[[ALLOWED2:.+]] = arith.cmpi ule, %[[KEY2]], %[[T2]] : index
//       CHECK:     %[[W:.+]] = arith.select %[[ALLOWED2]], %[[E]], %cst{{.*}} : f32
//       CHECK:     linalg.yield %[[W]]
func.func @sdpa_causal(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x7x4xf32>, %v: tensor<1x2x7x4xf32>) -> tensor<1x2x5x4xf32> {
  %o = mha.sdpa %q, %k, %v causal
      : (tensor<1x2x5x4xf32>, tensor<1x2x7x4xf32>, tensor<1x2x7x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}

// -----

// A mask [1, T, S] broadcasts over the batch through a constant index, and
// is combined with causal by "and".
//   CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d2, d3)>
// CHECK-LABEL: func.func @sdpa_mask_broadcast
//  CHECK-SAME:   %[[M:[a-z0-9]+]]: tensor<1x5x7xi1>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%{{.+}}, %[[M]] : tensor<3x2x5x7xf32>, tensor<1x5x7xi1>)
//       CHECK:   ^bb0(%{{.+}}: f32, %[[ALLOWEDBYMASK:.+]]: i1, %{{.+}}: f32):
//       CHECK:     %[[CAUSAL:.+]] = arith.cmpi ule
//       CHECK:     %[[ALLOWED:.+]] = arith.andi %[[ALLOWEDBYMASK]], %[[CAUSAL]] : i1
//       CHECK:     arith.select %[[ALLOWED]]
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[MASK]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}}, %[[M]] : tensor<3x2x5x7xf32>, tensor<3x2x5xf32>, tensor<1x5x7xi1>)
func.func @sdpa_mask_broadcast(%q: tensor<3x2x5x4xf32>, %k: tensor<3x2x7x4xf32>, %v: tensor<3x2x7x4xf32>, %m: tensor<1x5x7xi1>) -> tensor<3x2x5x4xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) causal scale(0.25)
      : (tensor<3x2x5x4xf32>, tensor<3x2x7x4xf32>, tensor<3x2x7x4xf32>, tensor<1x5x7xi1>) -> tensor<3x2x5x4xf32>
  return %o : tensor<3x2x5x4xf32>
}

// -----

// A mask with a batch of one per element reads row b.
//   CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @sdpa_mask_per_batch
//  CHECK-SAME:   %[[M:[a-z0-9]+]]: tensor<3x5x7xi1>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}]
//  CHECK-SAME:     ins(%{{.+}}, %[[M]] : tensor<3x2x5x7xf32>, tensor<3x5x7xi1>)
func.func @sdpa_mask_per_batch(%q: tensor<3x2x5x4xf32>, %k: tensor<3x2x7x4xf32>, %v: tensor<3x2x7x4xf32>, %m: tensor<3x5x7xi1>) -> tensor<3x2x5x4xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m)
      : (tensor<3x2x5x4xf32>, tensor<3x2x7x4xf32>, tensor<3x2x7x4xf32>, tensor<3x5x7xi1>) -> tensor<3x2x5x4xf32>
  return %o : tensor<3x2x5x4xf32>
}

// -----

// A mask whose batch is only known at run time may be 1 or B: its rows are
// read with row 0 when it is 1, so the lowering works for both.
// CHECK-LABEL: func.func @sdpa_mask_dynamic_batch
//  CHECK-SAME:   %[[M:[a-z0-9]+]]: tensor<?x?x?xi1>
//       CHECK:   %[[MB:.+]] = tensor.dim %[[M]], %{{.+}} : tensor<?x?x?xi1>
//       CHECK:   %[[BCAST:.+]] = arith.cmpi eq, %[[MB]], %{{.+}} : index
//       CHECK:   %[[FULL:.+]] = linalg.generic
//  CHECK-SAME:     outs(%{{.+}} : tensor<?x?x?xi1>)
//       CHECK:     %[[B:.+]] = linalg.index 0
//       CHECK:     %[[ROW:.+]] = arith.select %[[BCAST]], %{{.+}}, %[[B]] : index
//       CHECK:     tensor.extract %[[M]][%[[ROW]],
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}}, %[[FULL]] : tensor<?x2x?x?xf32>, tensor<?x?x?xi1>)
func.func @sdpa_mask_dynamic_batch(%q: tensor<?x2x?x4xf32>, %k: tensor<?x2x?x4xf32>, %v: tensor<?x2x?x4xf32>, %m: tensor<?x?x?xi1>) -> tensor<?x2x?x4xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m)
      : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x?x?xi1>) -> tensor<?x2x?x4xf32>
  return %o : tensor<?x2x?x4xf32>
}
