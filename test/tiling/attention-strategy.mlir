// RUN: mha-opt %s -split-input-file \
// RUN:   -mha-strategy="query-tile=16 key-tile=6 key-splits=4" \
// RUN:   | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-strategy \
// RUN:   | FileCheck %s --check-prefix=TARGET
// RUN: mha-opt %s -split-input-file \
// RUN:   -mha-strategy="query-tile=16 key-tile=6 key-splits=4" \
// RUN:   -mha-tile-attention | FileCheck %s --check-prefix=TILED

// mha-strategy records the tiles of each mha.sdpa on it
// (mha.tiles); mha-tile-attention reads them there.

// Many query tiles (2 x 2 x 64/16 = 16, not fewer than 4 key splits): one
// key range, the tiles as asked.
// CHECK-LABEL: func.func @prefill(
//       CHECK:   mha.sdpa {{.*}} {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 6, key_splits = 1>}
// Without options, the target's sizes (Strategy.h): a key block of two
// register blocks of columns (a multiple of 32 on AVX2 and AVX-512, 16
// elsewhere) and a power-of-two query tile from 16 to 128.
// TARGET-LABEL: func.func @prefill(
//       TARGET:   mha.tiles = #mha.attention_tiles<query_tile = {{16|32|64|128}}, key_tile = {{16|32|64|96|128}}, key_splits = 1>
// TILED-LABEL: func.func @prefill(
//       TILED:   scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 64) step (1, 1, 16)
//       TILED:     scf.for {{.*}} step %c6
func.func @prefill(%q: tensor<2x2x64x8xf32>, %k: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32>
  return %o : tensor<2x2x64x8xf32>
}

// -----

// Causal: the key block is cut down to a divisor of the query tile (6 to
// 4), so that every block is whole.
// CHECK-LABEL: func.func @causal(
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 4, key_splits = 1>
func.func @causal(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %o = mha.sdpa %q, %k, %v causal : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return %o : tensor<1x2x64x8xf32>
}

// -----

// Decoding one token of one head: 1 query tile, fewer than 4 splits, so 4
// key ranges; with 12 keys, as many as there are blocks of 6 (2).
// CHECK-LABEL: func.func @decode(
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 6, key_splits = 4>
// CHECK-LABEL: func.func @decode_short(
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 6, key_splits = 2>
// TILED-LABEL: func.func @decode(
//       TILED:   scf.forall ({{.*}}) in (4) shared_outs
func.func @decode(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x100x8xf32>, %v: tensor<1x1x100x8xf32>) -> tensor<1x1x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x1x1x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}
func.func @decode_short(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x12x8xf32>, %v: tensor<1x1x12x8xf32>) -> tensor<1x1x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x1x1x8xf32>, tensor<1x1x12x8xf32>, tensor<1x1x12x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}

// -----

// Never split: top-left causal attention (its queries see only their own
// prefix) and a `?` batch (the count of query tiles is the data's). A
// bottom-right causal decode is split, and keeps its key block.
// CHECK-LABEL: func.func @not_split(
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 4, key_splits = 1>
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 6, key_splits = 1>
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 6, key_splits = 4>
func.func @not_split(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x100x8xf32>, %v: tensor<1x1x100x8xf32>, %qd: tensor<?x1x1x8xf32>, %kd: tensor<?x1x100x8xf32>, %vd: tensor<?x1x100x8xf32>) -> (tensor<1x1x1x8xf32>, tensor<?x1x1x8xf32>, tensor<1x1x1x8xf32>) {
  %a = mha.sdpa %q, %k, %v causal : (tensor<1x1x1x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32>) -> tensor<1x1x1x8xf32>
  %b = mha.sdpa %qd, %kd, %vd : (tensor<?x1x1x8xf32>, tensor<?x1x100x8xf32>, tensor<?x1x100x8xf32>) -> tensor<?x1x1x8xf32>
  %c = mha.sdpa %q, %k, %v causal(bottom_right) : (tensor<1x1x1x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32>) -> tensor<1x1x1x8xf32>
  return %a, %b, %c : tensor<1x1x1x8xf32>, tensor<?x1x1x8xf32>, tensor<1x1x1x8xf32>
}

// -----

// Tiles written in the graph are kept, and tiled with.
// CHECK-LABEL: func.func @by_hand(
//       CHECK:   mha.tiles = #mha.attention_tiles<query_tile = 32, key_tile = 8, key_splits = 1>
// TILED-LABEL: func.func @by_hand(
//       TILED:   scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 64) step (1, 1, 32)
//       TILED:     scf.for {{.*}} step %c8
func.func @by_hand(%q: tensor<2x2x64x8xf32>, %k: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32> {
  %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 32, key_tile = 8, key_splits = 1>} : (tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32>
  return %o : tensor<2x2x64x8xf32>
}
