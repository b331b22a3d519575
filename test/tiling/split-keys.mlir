// RUN: mha-opt %s -split-input-file \
// RUN:   -mha-strategy="query-tile=16 key-tile=8 key-splits=8" \
// RUN:   -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa

// Key splits through mha.sdpa's PartialReductionOpInterface: two sequences
// of two heads decoding one token are 4 query tiles, fewer than the 8 key
// splits (64 keys: 8 blocks, one per split). scf::tileUsingSCF
// (PartialReductionOuterParallel, 8 threads on the key dimension) makes the
// scf.forall over the splits, outermost, and merges the partial states after
// it (mergeReductions). LLVM 22 tiles no parallel dimension with it, so
// each split is an mha.sdpa_split of every (batch, head, query), which
// scf::tileUsingSCF tiles in turn (its TilingInterface) into scf.for loops
// over (batch, head), each writing its tile's state into the split's
// slices of the partial states.
// CHECK-LABEL: func.func @split_keys_heads(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x1x8xf32>
//       CHECK:   %[[ACCS:.+]] = bufferization.alloc_tensor() : tensor<8x2x2x1x8xf32>
//       CHECK:   %[[MAXS:.+]] = bufferization.alloc_tensor() : tensor<8x2x2x1xf32>
//       CHECK:   %[[SUMS:.+]] = bufferization.alloc_tensor() : tensor<8x2x2x1xf32>
//       CHECK:   %[[PARTS:.+]]:3 = scf.forall (%[[P:[a-z0-9]+]]) in (8) shared_outs(%[[ACC:.+]] = %[[ACCS]], %[[MAX:.+]] = %[[MAXS]], %[[SUM:.+]] = %[[SUMS]])
//       CHECK:     %[[ACCP:.+]] = tensor.extract_slice %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 2, 2, 1, 8]
//       CHECK:     %[[MAXP:.+]] = tensor.extract_slice %[[MAX]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:     %[[SUMP:.+]] = tensor.extract_slice %[[SUM]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:     %[[SPLIT:.+]]:3 = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACCB:.+]] = %[[ACCP]], %[[MAXB:.+]] = %[[MAXP]], %[[SUMB:.+]] = %[[SUMP]])
//       CHECK:       %[[HEADS:.+]]:3 = scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACCH:.+]] = %[[ACCB]], %[[MAXH:.+]] = %[[MAXB]], %[[SUMH:.+]] = %[[SUMB]])
//       CHECK:         tensor.extract_slice %[[Q]][%[[B]], %[[H]], 0, 0] [1, 1, 1, 8]
//       CHECK:         %[[STATE:.+]]:7 = scf.for
//       CHECK:         %[[ACCT:.+]] = tensor.insert_slice %[[STATE]]#2 into %[[ACCH]][%[[B]], %[[H]], 0, 0] [1, 1, 1, 8]
//       CHECK:         %[[MAXT:.+]] = tensor.insert_slice %[[STATE]]#0 into %[[MAXH]][%[[B]], %[[H]], 0] [1, 1, 1]
//       CHECK:         %[[SUMT:.+]] = tensor.insert_slice %[[STATE]]#1 into %[[SUMH]][%[[B]], %[[H]], 0] [1, 1, 1]
//       CHECK:         scf.yield %[[ACCT]], %[[MAXT]], %[[SUMT]]
//       CHECK:       scf.yield %[[HEADS]]#0, %[[HEADS]]#1, %[[HEADS]]#2
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[SPLIT]]#0 into %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 2, 2, 1, 8]
//       CHECK:       tensor.parallel_insert_slice %[[SPLIT]]#1 into %[[MAX]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:       tensor.parallel_insert_slice %[[SPLIT]]#2 into %[[SUM]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:   %[[MALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#1 : tensor<8x2x2x1xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[LALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#2, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:   %[[AALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#0, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:   %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[LALL]] : tensor<2x2x1xf32>) outs(%[[AALL]] : tensor<2x2x1x8xf32>)
//       CHECK:   return %[[OUT]]
func.func @split_keys_heads(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>) -> tensor<2x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<2x2x1x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}

// -----

// Eight query tiles are enough for the 8 splits: the query tiles alone are
// the forall (scf::tileUsingSCF through TilingInterface), nothing is merged.
// CHECK-LABEL: func.func @negative_split_keys_enough_tiles(
//   CHECK-NOT:   tensor<8x1x8x1
//       CHECK:   %[[OUT:.+]] = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 8, 1) step (1, 1, 16) shared_outs
//   CHECK-NOT:   tensor<8x1x8x1
//       CHECK:   return %[[OUT]]
func.func @negative_split_keys_enough_tiles(%q: tensor<1x8x1x8xf32>, %k: tensor<1x8x64x8xf32>, %v: tensor<1x8x64x8xf32>) -> tensor<1x8x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x8x1x8xf32>, tensor<1x8x64x8xf32>, tensor<1x8x64x8xf32>) -> tensor<1x8x1x8xf32>
  return %o : tensor<1x8x1x8xf32>
}
