// RUN: mha-opt %s -split-input-file -mha-strategy="query-tile=16 key-tile=8" -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa --implicit-check-not="permutation = [0, 1, 3, 2]"

// Decoding: the key loop of sequence b ends at min(C, len[b] + T) (the
// unused capacity of the cache is never read) and the cache is never
// transposed as a whole (each key block is, into a scratch tile). The 2
// query heads of each key/value head are the 2 rows of one tile
// (GroupedQueries.h), which share the position: their keys end at
// min(C, len[b] + 1).

// CHECK-DAG: #[[END:.+]] = affine_map<(d0) -> (512, d0 + 1)>
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %[[LEN:[^:]+]]: tensor<2xi64>)
//       CHECK:   tensor.expand_shape {{.*}} into tensor<2x2x2x16xf32>
//       CHECK:   scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) = (0, 0, 0) to (2, 2, 2) step (1, 1, 16)
//       CHECK:     tensor.extract_slice {{.*}} : tensor<2x2x2x16xf32> to tensor<2x16xf32>
//       CHECK:     %[[L:.+]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi64>
//       CHECK:     %[[P:.+]] = arith.index_cast %[[L]] : i64 to index
//       CHECK:     affine.min #[[END]](%[[P]])
// Whole blocks of 8 keys below the diagonal, then the rest up to the end:
// an mha.online_attention tiled into whole blocks of 8 (static; the key
// tile is the tail's size here, so no blocks of 16) with the last keys
// peeled into a loop of their own.
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8
//       CHECK:       tensor.extract_slice %{{.+}} [8, 16] [1, 1] : tensor<512x16xf32> to tensor<8x16xf32>
//       CHECK:     scf.for
//       CHECK:       tensor.extract_slice %{{.+}} [8, 16] [1, 1] : tensor<512x16xf32> to tensor<8x16xf32>
//       CHECK:     scf.for
//       CHECK:       tensor.extract_slice %{{.+}} [%{{.+}}, 16] [1, 1] : tensor<512x16xf32> to tensor<?x16xf32>
//       CHECK:   tensor.collapse_shape {{.*}} : tensor<2x2x2x16xf32> into tensor<2x4x16xf32>
func.func @decode(%q: tensor<2x4x1x16xf32>, %kc: tensor<2x2x512x16xf32>, %vc: tensor<2x2x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x1x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<2x4x1x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>) -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// One key/value head (multi-query attention): a tile per query head, for
// the cores (grouping would leave one tile per sequence); each ends at
// min(C, len[b] + query + 1).
// CHECK-DAG: #[[END:.+]] = affine_map<(d0, d1) -> (512, d0 + d1 + 1)>
// CHECK-LABEL: func.func @decode_one_kv_head(
//  CHECK-SAME:     %[[LEN:[^:]+]]: tensor<2xi64>)
//       CHECK:   scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) = (0, 0, 0) to (2, 4, 1) step (1, 1, 16)
//       CHECK:     %[[L:.+]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi64>
//       CHECK:     %[[P:.+]] = arith.index_cast %[[L]] : i64 to index
//       CHECK:     affine.min #[[END]](%{{.+}}, %[[P]])
// Whole blocks of 8 keys below the diagonal, then the rest up to the end:
// an mha.online_attention tiled into whole blocks of 8 (static; the key
// tile is the tail's size here, so no blocks of 16) with the last keys
// peeled into a loop of their own.
//       CHECK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8
//       CHECK:       tensor.extract_slice %{{.+}} [8, 16] [1, 1] : tensor<512x16xf32> to tensor<8x16xf32>
//       CHECK:     scf.for
//       CHECK:       tensor.extract_slice %{{.+}} [8, 16] [1, 1] : tensor<512x16xf32> to tensor<8x16xf32>
//       CHECK:     scf.for
//       CHECK:       tensor.extract_slice %{{.+}} [%{{.+}}, 16] [1, 1] : tensor<512x16xf32> to tensor<?x16xf32>
func.func @decode_one_kv_head(%q: tensor<2x4x1x16xf32>, %kc: tensor<2x1x512x16xf32>, %vc: tensor<2x1x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x1x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<2x4x1x16xf32>, tensor<2x1x512x16xf32>, tensor<2x1x512x16xf32>, tensor<2xi64>) -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// One sequence of one head: too few query tiles for the two threads, so
// the keys below len[0] + T are split in two ranges of whole blocks
// (flash-decoding's split-K), merged in a fixed order.
// CHECK-LABEL: func.func @split_keys(
//  CHECK-SAME:     %[[LEN:[^:]+]]: tensor<1xi64>)
//       CHECK:   scf.forall (%{{[a-z0-9]+}}) in (2)
//       CHECK:     tensor.extract %[[LEN]][%{{.+}}] : tensor<1xi64>
//       CHECK:     affine.min
//       CHECK:     scf.for
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
func.func @split_keys(%q: tensor<1x1x1x16xf32>, %kc: tensor<1x1x512x16xf32>, %vc: tensor<1x1x512x16xf32>, %len: tensor<1xi64>) -> tensor<1x1x1x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<1x1x1x16xf32>, tensor<1x1x512x16xf32>, tensor<1x1x512x16xf32>, tensor<1xi64>) -> tensor<1x1x1x16xf32>
  return %o : tensor<1x1x1x16xf32>
}

// -----

// A prefill of T tokens into a cache: query tiles as for causal attention,
// each query tile's diagonal moved by len[b]; the diagonal blocks are
// tested (key <= len[b] + query).
// CHECK-LABEL: func.func @prefill(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 2, 32) step (1, 1, 16)
//       CHECK:     tensor.extract
//       CHECK:     scf.for
//       CHECK:     scf.for
//       CHECK:       linalg.index 1
//       CHECK:       arith.cmpi sle
func.func @prefill(%q: tensor<1x2x32x16xf32>, %kc: tensor<1x2x64x16xf32>, %vc: tensor<1x2x64x16xf32>, %len: tensor<1xi64>) -> tensor<1x2x32x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<1x2x32x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1xi64>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}

// -----

// A cache whose token count T is `?` (a --dynamic graph: the prefill and
// the decode steps run the same code): a tile of one query (T = 1) takes
// its own branch, where the scores are dot products along the key rows (the
// products [8, 16] of the block, no transpose); the general tile transposes
// each key block into [16, 8]. (As many key/value heads as query heads:
// grouped ones take a step elsewhere, grouped-queries.mlir.)
// CHECK-LABEL: func.func @dynamic_tokens(
//       CHECK:   scf.forall
//       CHECK:     %[[ONE:.+]] = arith.cmpi eq, %{{.+}}, %c1
//       CHECK:     scf.if %[[ONE]] -> (tensor<?x16xf32>)
//       CHECK:       bufferization.alloc_tensor() : tensor<8x16xf32>
//   CHECK-NOT:       linalg.transpose
//       CHECK:       tensor.cast %{{.+}} : tensor<1x16xf32> to tensor<?x16xf32>
//       CHECK:     } else {
//       CHECK:       bufferization.alloc_tensor() : tensor<16x8xf32>
//       CHECK:       linalg.transpose
func.func @dynamic_tokens(%q: tensor<2x4x?x16xf32>, %kc: tensor<2x4x512x16xf32>, %vc: tensor<2x4x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<2x4x?x16xf32>, tensor<2x4x512x16xf32>, tensor<2x4x512x16xf32>, tensor<2xi64>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}
