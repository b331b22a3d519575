// RUN: mha-opt %s -split-input-file -mha-strategy="query-tile=64 key-tile=64" -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.online_attention

// The key loops of mha-tile-attention are mha.online_attention's, tiled by
// scf::tileUsingSCF through its TilingInterface (the keys, a reduction into
// the carried state) and peeled by scf::peelForLoopAndSimplifyBounds, each
// block then decomposed into linalg ops: no mha.online_attention is left.

// S = 256 keys in blocks of 64: the tile divides the keys, so there is one
// key loop, of static blocks, and nothing to peel.
// CHECK-LABEL: func.func @whole_blocks(
//       CHECK:   scf.forall
//       CHECK:     %[[STATE:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
//       CHECK:       tensor.extract_slice %{{.+}} [64, 16] [1, 1] : tensor<256x16xf32> to tensor<64x16xf32>
//       CHECK:       scf.yield
//   CHECK-NOT:     scf.for
//       CHECK:     linalg.generic {{.*}} ins(%[[STATE]]#1 : tensor<64xf32>) outs(%[[STATE]]#2 : tensor<64x16xf32>)
func.func @whole_blocks(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x256x16xf32>, %v: tensor<1x2x256x16xf32>) -> tensor<1x2x64x16xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x64x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// -----

// S = 100 keys: one loop of whole 64-key blocks (static shapes) up to the
// last multiple of 64, and the last 36 keys peeled into a loop of their own
// (dynamic shapes, at most 64 keys: an affine.min that the vectorizer
// bounds), which carries the first loop's state.
// CHECK-LABEL: func.func @peeled_block(
//       CHECK:     %[[WHOLE:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %[[SPLIT:[^ ]+]] step
//       CHECK:       tensor.extract_slice %{{.+}} [64, 16] [1, 1] : tensor<100x16xf32> to tensor<64x16xf32>
//       CHECK:       scf.yield
//       CHECK:     %[[REST:.+]]:7 = scf.for %[[S:.+]] = %[[SPLIT]] to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[WHOLE]]#0,
//       CHECK:       %[[N:.+]] = affine.min #{{.+}}(%[[S]])
//       CHECK:       tensor.extract_slice %{{.+}}[%[[S]], 0] [%[[N]], 16] [1, 1] : tensor<100x16xf32> to tensor<?x16xf32>
//       CHECK:       scf.yield
//       CHECK:     linalg.generic {{.*}} ins(%[[REST]]#1 : tensor<64xf32>) outs(%[[REST]]#2 : tensor<64x16xf32>)
func.func @peeled_block(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>) -> tensor<1x2x64x16xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x64x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>) -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// -----

// Decoding from a cache: the whole blocks below the token's position, then
// the rest of its keys (a length known at run time): whole blocks of 64,
// the peeled short block tiled again into whole blocks of 16 (static) and
// peeled once more into the last few keys.
// CHECK-LABEL: func.func @decode_tails(
//       CHECK:     scf.for %{{.+}} step %{{.+}} iter_args(
//       CHECK:       tensor.extract_slice %{{.+}} [64, 16] [1, 1] : tensor<512x16xf32> to tensor<64x16xf32>
//       CHECK:     scf.for %{{.+}} step %{{.+}} iter_args(
//       CHECK:       tensor.extract_slice %{{.+}} [64, 16] [1, 1] : tensor<512x16xf32> to tensor<64x16xf32>
//       CHECK:     scf.for %{{.+}} step %{{.+}} iter_args(
//       CHECK:       scf.for %{{.+}} step %{{.+}} iter_args(
//       CHECK:         tensor.extract_slice %{{.+}} [16, 16] [1, 1] : tensor<?x16xf32> to tensor<16x16xf32>
//       CHECK:         scf.yield
//       CHECK:       scf.for %{{.+}} step %{{.+}} iter_args(
//       CHECK:         tensor.extract_slice %{{.+}} [%{{.+}}, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
func.func @decode_tails(%q: tensor<2x4x1x16xf32>, %kc: tensor<2x2x512x16xf32>, %vc: tensor<2x2x512x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x1x16xf32> {
  %o = mha.sdpa %q, %kc, %vc causal positions(%len) : (tensor<2x4x1x16xf32>, tensor<2x2x512x16xf32>, tensor<2x2x512x16xf32>, tensor<2xi64>) -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}
