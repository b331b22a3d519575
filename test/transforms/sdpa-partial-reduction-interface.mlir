// RUN: mha-opt %s -split-input-file -transform-interpreter -verify-diagnostics \
// RUN:   | FileCheck %s

// mha.sdpa's PartialReductionOpInterface (SdpaTilingInterface.h) driven by
// transform scripts: tile_reduction_using_forall splits the keys into P
// ranges (num_threads on the key dimension, LLVM 22's
// PartialReductionOuterParallel), each an mha.sdpa_split that writes its
// unnormalized state (acc, m, l) into its slice of [P, ...] buffers, merged
// after the forall (combineKeySplits). LLVM 22 tiles no parallel dimension
// together with a partial reduction, so each split holds every (batch, head,
// query); its own TilingInterface tiles it over (batch, head) afterwards.
// The key block (8) is the op's `mha.tiles`; a range is whole blocks.

// Four ranges of 64 keys: the splits, and the merge (the largest maximum,
// the sums and accumulators rescaled to it, then the division).
// CHECK-LABEL: func.func @split_keys(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x1x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x64x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x64x8xf32>)
//       CHECK:   %[[ACCS:.+]] = bufferization.alloc_tensor() : tensor<4x2x2x1x8xf32>
//       CHECK:   %[[MAXS:.+]] = bufferization.alloc_tensor() : tensor<4x2x2x1xf32>
//       CHECK:   %[[SUMS:.+]] = bufferization.alloc_tensor() : tensor<4x2x2x1xf32>
//       CHECK:   %[[PARTS:.+]]:3 = scf.forall (%[[P:[a-z0-9]+]]) in (4) shared_outs(%[[ACC:.+]] = %[[ACCS]], %[[MAX:.+]] = %[[MAXS]], %[[SUM:.+]] = %[[SUMS]])
//       CHECK:     %[[ACCP:.+]] = tensor.extract_slice %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 2, 2, 1, 8]
//       CHECK:     %[[MAXP:.+]] = tensor.extract_slice %[[MAX]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:     %[[SUMP:.+]] = tensor.extract_slice %[[SUM]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:     %[[SA:[^ ,]+]], %[[SM:[^ ,]+]], %[[SS:[^ ,]+]] = mha.sdpa_split %[[Q]], %[[K]], %[[V]] split(%[[P]]) splits(4) key_block(8) {{.*}}outs(%[[ACCP]], %[[MAXP]], %[[SUMP]])
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[SA]] into %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 2, 2, 1, 8]
//       CHECK:       tensor.parallel_insert_slice %[[SM]] into %[[MAX]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:       tensor.parallel_insert_slice %[[SS]] into %[[SUM]][%[[P]], 0, 0, 0] [1, 2, 2, 1]
//       CHECK:   %[[MALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#1 : tensor<4x2x2x1xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[LALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#2, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:   %[[AALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#0, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:   %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[LALL]] : tensor<2x2x1xf32>) outs(%[[AALL]] : tensor<2x2x1x8xf32>)
//       CHECK:   return %[[OUT]]
func.func @split_keys(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x64x8xf32>,
                      %v: tensor<2x2x64x8xf32>) -> tensor<2x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 4>}
      : (tensor<2x2x1x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>)
      -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // One handle per partial state (acc, m, l), then the split, the merge
    // and the forall.
    %acc, %max, %sum, %split, %merge, %forall =
        transform.structured.tile_reduction_using_forall %sdpa
        by num_threads = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The split handle tiled in turn (mha.sdpa_split's TilingInterface, tiles
// of one batch element and one head): scf.for loops over (batch, head) in
// each split, each tile the key blocks of its range, its state inserted
// into the split's slices.
// CHECK-LABEL: func.func @split_keys_then_heads(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x1x8xf32>
//       CHECK:   %[[PARTS:.+]]:3 = scf.forall (%[[P:[a-z0-9]+]]) in (4) shared_outs
//   CHECK-NOT:     mha.sdpa_split
//       CHECK:     %[[SPLIT:.+]]:3 = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
//       CHECK:       %[[HEADS:.+]]:3 = scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACCH:.+]] = %{{.+}}, %[[MAXH:.+]] = %{{.+}}, %[[SUMH:.+]] = %{{.+}})
//       CHECK:         tensor.extract_slice %[[Q]][%[[B]], %[[H]], 0, 0] [1, 1, 1, 8]
//       CHECK:         %[[STATE:.+]]:7 = scf.for
//       CHECK:         %[[ACCT:.+]] = tensor.insert_slice %[[STATE]]#2 into %[[ACCH]][%[[B]], %[[H]], 0, 0] [1, 1, 1, 8]
//       CHECK:         %[[MAXT:.+]] = tensor.insert_slice %[[STATE]]#0 into %[[MAXH]][%[[B]], %[[H]], 0] [1, 1, 1]
//       CHECK:         %[[SUMT:.+]] = tensor.insert_slice %[[STATE]]#1 into %[[SUMH]][%[[B]], %[[H]], 0] [1, 1, 1]
//       CHECK:         scf.yield %[[ACCT]], %[[MAXT]], %[[SUMT]]
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[SPLIT]]#0
//       CHECK:   linalg.generic {{.*}} ins(%[[PARTS]]#1 : tensor<4x2x2x1xf32>)
func.func @split_keys_then_heads(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x64x8xf32>,
                                 %v: tensor<2x2x64x8xf32>) -> tensor<2x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 4>}
      : (tensor<2x2x1x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>)
      -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %acc, %max, %sum, %split, %merge, %forall =
        transform.structured.tile_reduction_using_forall %sdpa
        by num_threads = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op)
    %tiled, %b, %h = transform.structured.tile_using_for %split
        tile_sizes [1, 1, 0]
        : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A score_mod region goes with each split.
// CHECK-LABEL: func.func @split_keys_score_mod(
//  CHECK-SAME:     %[[SLOPES:[a-z0-9]+]]: tensor<2xf32>)
//       CHECK:   scf.forall (%[[P:[a-z0-9]+]]) in (2) shared_outs
//       CHECK:     mha.sdpa_split {{.*}} split(%[[P]]) splits(2) key_block(8) {{.*}} score_mod {
//       CHECK:     ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %{{.+}}: index, %{{.+}}: index):
//       CHECK:       %[[SLOPE:.+]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<2xf32>
//       CHECK:       %[[T:.+]] = arith.mulf %[[S]], %[[SLOPE]] : f32
//       CHECK:       mha.yield %[[T]] : f32
func.func @split_keys_score_mod(%q: tensor<1x2x1x8xf32>, %k: tensor<1x2x64x8xf32>,
                                %v: tensor<1x2x64x8xf32>, %slopes: tensor<2xf32>)
    -> tensor<1x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<2xf32>
    %t = arith.mulf %s, %slope : f32
    mha.yield %t : f32
  } {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 2>}
      : (tensor<1x2x1x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>)
      -> tensor<1x2x1x8xf32>
  return %o : tensor<1x2x1x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %acc, %max, %sum, %split, %merge, %forall =
        transform.structured.tile_reduction_using_forall %sdpa
        by num_threads = [0, 0, 0, 2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// tile_reduction_using_for (PartialReductionOuterReduction: one loop over
// key tiles, its partial states merged after) is not implemented: the
// splits are parallel ranges only.
func.func @negative_split_keys_serial(%q: tensor<1x2x1x8xf32>,
                                      %k: tensor<1x2x64x8xf32>,
                                      %v: tensor<1x2x64x8xf32>)
    -> tensor<1x2x1x8xf32> {
  // expected-error @+3 {{'mha.sdpa' op expects the keys split into parallel ranges}}
  // expected-error @+2 {{to tile operation}}
  // expected-error @+1 {{failed to generate tiling loops}}
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 4>}
      : (tensor<1x2x1x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>)
      -> tensor<1x2x1x8xf32>
  return %o : tensor<1x2x1x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @+2 {{failed to tile using partial reduction}}
    %acc, %max, %sum, %split, %merge, %for =
        transform.structured.tile_reduction_using_for %sdpa
        by tile_sizes = [0, 0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op)
    transform.yield
  }
}
