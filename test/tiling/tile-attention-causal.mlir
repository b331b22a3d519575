// RUN: mha-opt %s -split-input-file -mha-strategy="query-tile=16 key-tile=8" -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa

// mha-tile-attention with causal(bottom_right): query i sees keys
// j <= i + (S - T). The key loops of a query tile stop at its last query's
// diagonal key, moved by S - T; with S < T that bound may be negative, so it
// is clamped to 0 (the tile then runs no key block and its rows are 0). The
// diagonal test inside a block adds S - T and compares signed.

// T = 40 queries over S = 24 keys (S - T = -16): tile q0 = 16·t sees keys
// [0, min(24, q0 + rows - 16)) clamped to >= 0; blocks that end at or before
// q0 - 16 + 1 skip the test.
//   CHECK-DAG: #[[$END:.+]] = affine_map<(d0, d1) -> (24, d0 + d1 - 16)>
//   CHECK-DAG: #[[$CLAMP:.+]] = affine_map<(d0) -> (0, d0)>
// CHECK-LABEL: func.func @tile_bottom_right_fewer_keys(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 1, 40) step (1, 1, 16)
//       CHECK:     %[[END:.+]] = affine.min #[[$END]](
//       CHECK:     %[[KEYEND:.+]] = affine.max #[[$CLAMP]](%[[END]])
//       CHECK:     %[[FULL:.+]] = affine.max #[[$CLAMP]](
//       CHECK:     %[[FULLKEYS:.+]] = affine.max #{{.+}}(%[[FULL]])
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step
//   CHECK-NOT:       arith.cmpi sle
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %[[FULLKEYS]] step
//   CHECK-NOT:       arith.cmpi sle
//       CHECK:     %[[DIAGKEYS:.+]] = affine.max #{{.+}}(%[[FULL]], %[[KEYEND]])
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step
//       CHECK:       %[[DIAG:.+]] = arith.addi %{{.+}}, %c-16 : index
//       CHECK:       arith.cmpi sle, %{{.+}}, %[[DIAG]] : index
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %[[DIAGKEYS]] step
func.func @tile_bottom_right_fewer_keys(%q: tensor<1x1x40x8xf32>, %k: tensor<1x1x24x8xf32>, %v: tensor<1x1x24x8xf32>) -> tensor<1x1x40x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<1x1x40x8xf32>, tensor<1x1x24x8xf32>, tensor<1x1x24x8xf32>) -> tensor<1x1x40x8xf32>
  return %o : tensor<1x1x40x8xf32>
}

// -----

// Dynamic T and S: the offset S - T is computed once, from tensor.dim.
// CHECK-LABEL: func.func @tile_bottom_right_dynamic(
//  CHECK-SAME:     %[[Q:[^:]+]]: tensor<?x1x?x8xf32>, %[[K:[^:]+]]: tensor<?x1x?x8xf32>
//   CHECK-DAG:   %[[T:.+]] = tensor.dim %[[Q]], %c2{{(_[0-9]+)?}} : tensor<?x1x?x8xf32>
//   CHECK-DAG:   %[[S:.+]] = tensor.dim %[[K]], %c2{{(_[0-9]+)?}} : tensor<?x1x?x8xf32>
//       CHECK:   %[[OFFSET:.+]] = arith.subi %[[S]], %[[T]] : index
//       CHECK:   scf.forall
//       CHECK:     scf.for
//       CHECK:     scf.for
//       CHECK:       %[[DIAG:.+]] = arith.addi %{{.+}}, %[[OFFSET]] : index
//       CHECK:       arith.cmpi sle, %{{.+}}, %[[DIAG]] : index
func.func @tile_bottom_right_dynamic(%q: tensor<?x1x?x8xf32>, %k: tensor<?x1x?x8xf32>, %v: tensor<?x1x?x8xf32>) -> tensor<?x1x?x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>) -> tensor<?x1x?x8xf32>
  return %o : tensor<?x1x?x8xf32>
}

// -----

// Decoding one token bottom-right aligned: the token sees every key, so the
// keys are split as without causality (top-left, the token would see key 0
// only and nothing is split: negative_split_keys_causal in
// tile-attention.mlir), and no block tests the diagonal.
//   CHECK-DAG: #[[$END:.+]] = affine_map<(d0) -> (300, d0 * 152 + 152)>
// CHECK-LABEL: func.func @split_keys_decode_bottom_right(
//       CHECK:   scf.forall (%[[P:[a-z0-9]+]]) in (2)
//       CHECK:     %[[END:.+]] = affine.min #[[$END]](%[[P]])
//       CHECK:     %[[COUNT:.+]] = affine.max #{{.+}}(%[[END]], %[[P]])
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step
//   CHECK-NOT:       arith.cmpi sle
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step
//   CHECK-NOT:       arith.cmpi sle
//       CHECK:   return
func.func @split_keys_decode_bottom_right(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x300x8xf32>, %v: tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<1x1x1x8xf32>, tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}

// -----

// Five queries over 300 keys: still one query tile, so the keys are split,
// and each range stops at the tile's last diagonal key (4 + 295 + 1 = 300)
// and tests the diagonal (S - T = 295) in its blocks.
// CHECK-LABEL: func.func @split_keys_bottom_right_few_queries(
//       CHECK:   scf.forall (%{{[a-z0-9]+}}) in (2)
//       CHECK:     %[[SPLITEND:.+]] = affine.min
//       CHECK:     %[[END:.+]] = affine.min #{{.+}}(%[[SPLITEND]])
//       CHECK:     %[[COUNT:.+]] = affine.max #{{.+}}(%[[END]],
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step
//       CHECK:       %[[DIAG:.+]] = arith.addi %{{.+}}, %c295 : index
//       CHECK:       arith.cmpi sle, %{{.+}}, %[[DIAG]] : index
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step
func.func @split_keys_bottom_right_few_queries(%q: tensor<1x1x5x8xf32>, %k: tensor<1x1x300x8xf32>, %v: tensor<1x1x300x8xf32>) -> tensor<1x1x5x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<1x1x5x8xf32>, tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32>) -> tensor<1x1x5x8xf32>
  return %o : tensor<1x1x5x8xf32>
}
