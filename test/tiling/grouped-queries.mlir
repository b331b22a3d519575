// RUN: mha-opt %s -split-input-file -mha-strategy="query-tile=16 key-tile=8" -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa

// One query per sequence with grouped-query heads (GroupedQueries.h): the
// G = H / Hkv query heads of each key/value head are the G rows of one
// tile, [B, H, 1, dk] viewed as [B, Hkv, G, dk] and the result viewed back,
// so that the tile reads its keys and values once for the G of them.

// A cache's T is `?`: one token (a decoding step) takes the grouped tiles,
// whose rows share the position (keys up to len[b] + 1); more tokens (a
// prefill) a tile per head and query tile, as before, but without the
// branch for a tile of one query that it has elsewhere
// (tile-attention-kv-cache.mlir): no second copy of a step's code.
// CHECK-DAG: #[[STEP_END:.+]] = affine_map<(d0) -> (512, d0 + 1)>
// CHECK-LABEL: func.func @step_or_prefill(
//       CHECK:   %[[T:.+]] = tensor.dim %{{.+}}, %c2 : tensor<2x4x?x16xf32>
//       CHECK:   %[[ONE:.+]] = arith.cmpi eq, %[[T]], %c1
//       CHECK:   scf.if %[[ONE]] -> (tensor<2x4x?x16xf32>) {
//       CHECK:     tensor.cast %{{.+}} : tensor<2x4x?x16xf32> to tensor<2x4x1x16xf32>
//       CHECK:     tensor.expand_shape {{.*}} into tensor<2x2x2x16xf32>
//       CHECK:     scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 2) step (1, 1, 16)
//       CHECK:       affine.min #[[STEP_END]](
//       CHECK:     tensor.collapse_shape {{.*}} : tensor<2x2x2x16xf32> into tensor<2x4x16xf32>
//       CHECK:   } else {
//       CHECK:     scf.forall ({{.*}}) = (0, 0, 0) to (2, 4, %{{.+}}) step (1, 1, 16)
//   CHECK-NOT:       scf.if
//       CHECK:   return
func.func @step_or_prefill(%q: tensor<2x4x?x16xf32>, %kc: tensor<2x2x512x16xf32>, %vc: tensor<2x2x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<2x4x?x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// One query against other keys (cross-attention, no causal): 3 query heads
// per key/value head, dk != dv.
// CHECK-LABEL: func.func @cross(
//       CHECK:   tensor.expand_shape {{.*}} into tensor<3x2x3x16xf32>
//       CHECK:   scf.forall ({{.*}}) = (0, 0, 0) to (3, 2, 3) step (1, 1, 16)
//       CHECK:     tensor.extract_slice {{.*}} : tensor<3x2x3x16xf32> to tensor<3x16xf32>
//       CHECK:   tensor.collapse_shape {{.*}} : tensor<3x2x3x8xf32> into tensor<3x6x8xf32>
func.func @cross(%q: tensor<3x6x1x16xf32>, %k: tensor<3x2x40x16xf32>, %v: tensor<3x2x40x8xf32>) -> tensor<3x6x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<3x6x1x16xf32>, tensor<3x2x40x16xf32>, tensor<3x2x40x8xf32>) -> tensor<3x6x1x8xf32>
  return %o : tensor<3x6x1x8xf32>
}

// -----

// Not grouped: a mask (its row is per query), and causal without a cache
// (its diagonal counts rows): a tile per head.
// CHECK-LABEL: func.func @masked(
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   scf.forall ({{.*}}) = (0, 0, 0) to (3, 6, 1) step (1, 1, 16)
func.func @masked(%q: tensor<3x6x1x16xf32>, %k: tensor<3x2x40x16xf32>, %v: tensor<3x2x40x8xf32>, %m: tensor<3x1x40xi1>) -> tensor<3x6x1x8xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<3x6x1x16xf32>, tensor<3x2x40x16xf32>, tensor<3x2x40x8xf32>, tensor<3x1x40xi1>) -> tensor<3x6x1x8xf32>
  return %o : tensor<3x6x1x8xf32>
}

// -----

// CHECK-LABEL: func.func @causal(
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   scf.forall ({{.*}}) = (0, 0, 0) to (3, 6, 1) step (1, 1, 16)
func.func @causal(%q: tensor<3x6x1x16xf32>, %k: tensor<3x2x40x16xf32>, %v: tensor<3x2x40x8xf32>) -> tensor<3x6x1x8xf32> {
  %o = mha.sdpa %q, %k, %v causal : (tensor<3x6x1x16xf32>, tensor<3x2x40x16xf32>, tensor<3x2x40x8xf32>) -> tensor<3x6x1x8xf32>
  return %o : tensor<3x6x1x8xf32>
}

// -----

// bf16 caches (the keys widened from bf16) too: the tile reads each block
// of keys in bf16, widens it along its rows into the widened scratch, and
// transposes it in f32 (a read that transposed and widened at once became
// one scalar load per element); the values are widened into the same
// scratch after.
// CHECK-LABEL: func.func @bf16_cache(
//       CHECK:   tensor.expand_shape {{.*}} into tensor<2x2x2x16xf32>
//       CHECK:   scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 2) step (1, 1, 16)
//       CHECK:     scf.for {{.*}} iter_args({{.*}}, %[[WIDE:[^ ]+]] = %{{[^ ]+}}) -> (
//       CHECK:       %[[KEYS:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<8x16xbf16>) outs(%{{.+}} : tensor<8x16xf32>)
//       CHECK:       %[[WITH_KEYS:.+]] = tensor.insert_slice %[[KEYS]] into %[[WIDE]]
//       CHECK:       linalg.transpose ins(%[[KEYS]] : tensor<8x16xf32>) outs(%{{.+}} : tensor<16x8xf32>)
//       CHECK:       %[[VALUE_SLOT:.+]] = tensor.extract_slice %[[WITH_KEYS]][0, 0] [8, 16]
//       CHECK:       linalg.generic {{.*}} ins(%{{.+}} : tensor<8x16xbf16>) outs(%[[VALUE_SLOT]] : tensor<8x16xf32>)
func.func @bf16_cache(%q: tensor<2x4x1x16xf32>, %kc: tensor<2x2x512x16xbf16>, %vc: tensor<2x2x512x16xbf16>, %len: tensor<2xi64>) -> tensor<2x4x1x16xf32> {
  %k = arith.extf %kc : tensor<2x2x512x16xbf16> to tensor<2x2x512x16xf32>
  %v = arith.extf %vc : tensor<2x2x512x16xbf16> to tensor<2x2x512x16xf32>
  %o = mha.sdpa %q, %k, %v causal positions(%len) : (tensor<2x4x1x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>) -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// A window and a softcap are the same for every head: a decoding step with
// them is grouped, its rows sharing the step's position (the window's first
// block from len[b], not from each row's index).
// CHECK-LABEL: func.func @window_softcap(
//       CHECK:   scf.if
//       CHECK:     tensor.expand_shape {{.*}} into tensor<2x2x2x16xf32>
//       CHECK:     scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 2) step (1, 1, 16)
//       CHECK:       math.tanh
//       CHECK:   } else {
func.func @window_softcap(%q: tensor<2x4x?x16xf32>, %kc: tensor<2x2x512x16xf32>, %vc: tensor<2x2x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) window(40) softcap(30.0) : (tensor<2x4x?x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// ALiBi's slope is per head: not grouped.
// CHECK-LABEL: func.func @alibi(
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   return
func.func @alibi(%q: tensor<2x4x?x16xf32>, %kc: tensor<2x2x512x16xf32>, %vc: tensor<2x2x512x16xf32>, %len: tensor<2xi64>, %slopes: tensor<4xf32>) -> tensor<2x4x?x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) alibi(%slopes) : (tensor<2x4x?x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}
