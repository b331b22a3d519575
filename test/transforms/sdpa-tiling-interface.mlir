// RUN: mha-opt %s -split-input-file -transform-interpreter -verify-diagnostics \
// RUN:   | FileCheck %s

// mha.sdpa's TilingInterface (compiler/attention/SdpaTilingInterface.h)
// driven by transform scripts, as upstream tests linalg's: the iteration
// domain is (batch, head, query, key), and a tile of one batch element, one
// head, some query rows and every key is the fused attention of those rows,
// an online softmax over blocks of keys written into the result's slice.
// The tile sizes inside the tile (the key block, 8 here) are the op's
// `mha.tiles`, given in each case so that the output does not depend on the
// machine (without them the host's strategy chooses). The inputs hold no
// bufferization op: the dialects of the ops a tile builds (its scratch is
// bufferization.alloc_tensor) are loaded with mha (compiler/Registration.cpp),
// not by the interpreter, which loads only its own ops' dialects.

// tile_using_forall over (batch, head, query tile): one scf.forall whose
// body slices the head's queries, keys and values, runs the key blocks in an
// scf.for carrying the state (m, l, acc and the block's scratch), normalizes
// and writes its rows of the result.
// CHECK-LABEL: func.func @tile_forall(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x4x32x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x6xf32>)
//       CHECK:   %[[INIT:.+]] = tensor.empty() : tensor<2x4x32x6xf32>
//       CHECK:   %[[RES:.+]] = scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 4, 2) shared_outs(%[[OUT:.+]] = %[[INIT]])
//       CHECK:     %[[T0:.+]] = affine.apply #{{.+}}(%[[I]])
//       CHECK:     %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x4x32x8xf32> to tensor<16x8xf32>
//       CHECK:     %[[KH:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> to tensor<16x8xf32>
//       CHECK:     %[[VH:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], 0, 0] [1, 1, 16, 6] [1, 1, 1, 1] : tensor<2x4x16x6xf32> to tensor<16x6xf32>
//       CHECK:     %[[OT:.+]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 6] [1, 1, 1, 1]
//       CHECK:     %[[A0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OT]] : tensor<16x6xf32>)
//       CHECK:     %[[KEYS:.+]] = arith.constant 16 : index
//       CHECK:     %[[BK:.+]] = arith.constant 8 : index
//       CHECK:     %[[LOOP:.+]]:7 = scf.for %[[S0:.+]] = %{{.+}} to %[[KEYS]] step %[[BK]] iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %[[A0]], {{.+}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
//       CHECK:       tensor.extract_slice %[[KH]][%[[S0]], 0] [8, 8] [1, 1]
//       CHECK:       tensor.extract_slice %[[VH]][%[[S0]], 0] [8, 6] [1, 1]
//       CHECK:       linalg.generic {{.*}} ins(%[[QT]], %{{.+}} : tensor<16x8xf32>, tensor<8x8xf32>) outs(%{{.+}} : tensor<16x8xf32>)
//       CHECK:       math.exp2
//       CHECK:       scf.yield
//       CHECK:     %[[NORM:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#1 : tensor<16xf32>) outs(%[[LOOP]]#2 : tensor<16x6xf32>)
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[NORM]] into %[[OUT]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 6] [1, 1, 1, 1] : tensor<16x6xf32> into tensor<2x4x32x6xf32>
//       CHECK:   return %[[RES]]
func.func @tile_forall(%q: tensor<2x4x32x8xf32>, %k: tensor<2x4x16x8xf32>,
                       %v: tensor<2x4x16x6xf32>) -> tensor<2x4x32x6xf32> {
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<2x4x32x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x6xf32>)
      -> tensor<2x4x32x6xf32>
  return %o : tensor<2x4x32x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %sdpa
        tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Causal: the blocks wholly below the tile's first query need no test (the
// first key loop); the blocks on its diagonal compare each key's position
// with its query's (the second, which goes on from the first's state).
// CHECK-LABEL: func.func @tile_causal(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 2, 2)
//       CHECK:     %[[FULL:.+]]:7 = scf.for
//   CHECK-NOT:       arith.cmpi
//       CHECK:       scf.yield
//       CHECK:     %[[DIAG:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[FULL]]#0, %{{.+}} = %[[FULL]]#1, %{{.+}} = %[[FULL]]#2,
//       CHECK:       linalg.index 0
//       CHECK:       arith.cmpi ule
//       CHECK:       scf.yield
//       CHECK:     %[[NORM:.+]] = linalg.generic {{.*}} ins(%[[DIAG]]#1 : tensor<16xf32>) outs(%[[DIAG]]#2 : tensor<16x8xf32>)
//       CHECK:     tensor.parallel_insert_slice %[[NORM]]
func.func @tile_causal(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x32x8xf32>,
                       %v: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32> {
  %o = mha.sdpa %q, %k, %v causal
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>)
      -> tensor<1x2x32x8xf32>
  return %o : tensor<1x2x32x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %sdpa
        tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A score_mod region is cloned into each block of scores: its query
// position is the tile's first row plus the row, its key the block's first
// key plus the column, and its head the forall's.
// CHECK-LABEL: func.func @tile_score_mod(
//  CHECK-SAME:     %[[TABLE:[a-z0-9]+]]: tensor<2x32xf32>)
//       CHECK:   scf.forall (%{{.+}}, %[[H:.+]], %[[I:.+]]) in (1, 2, 2)
//       CHECK:     %[[T0:.+]] = affine.apply #{{.+}}(%[[I]])
//       CHECK:     scf.for %[[S0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
//       CHECK:       linalg.generic {{.*}} outs(%{{.+}} : tensor<16x8xf32>) {
//       CHECK:         %[[ROW:.+]] = linalg.index 0 : index
//       CHECK:         %[[P:.+]] = arith.addi %[[T0]], %[[ROW]] : index
//       CHECK:         %[[COL:.+]] = linalg.index 1 : index
//       CHECK:         %[[J:.+]] = arith.addi %[[S0]], %[[COL]] : index
//       CHECK:         %[[BACK:.+]] = arith.subi %[[P]], %[[J]] : index
//       CHECK:         %[[BIAS:.+]] = tensor.extract %[[TABLE]][%[[H]], %[[BACK]]] : tensor<2x32xf32>
//       CHECK:         arith.addf %{{.+}}, %[[BIAS]] : f32
//   CHECK-NOT:   mha.yield
//       CHECK:   return
func.func @tile_score_mod(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x16x8xf32>,
                          %v: tensor<1x2x16x8xf32>, %table: tensor<2x32xf32>)
    -> tensor<1x2x32x8xf32> {
  %o = mha.sdpa %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
    %back = arith.subi %p, %j : index
    %bias = tensor.extract %table[%h, %back] : tensor<2x32xf32>
    %t = arith.addf %s, %bias : f32
    mha.yield %t : f32
  } {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<1x2x32x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
      -> tensor<1x2x32x8xf32>
  return %o : tensor<1x2x32x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %sdpa
        tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// tile_using_for: sequential loops over batch, head and query tile, each
// tile inserted into the loop-carried result.
// CHECK-LABEL: func.func @tile_for(
//       CHECK:   %[[INIT:.+]] = tensor.empty() : tensor<2x4x32x6xf32>
//       CHECK:   %[[RES:.+]] = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[R0:.+]] = %[[INIT]])
//       CHECK:     %[[RB:.+]] = scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[R1:.+]] = %[[R0]])
//       CHECK:       %[[RH:.+]] = scf.for %[[T0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[R2:.+]] = %[[R1]])
//       CHECK:         %[[STATE:.+]]:7 = scf.for
//       CHECK:         %[[NORM:.+]] = linalg.generic {{.*}} ins(%[[STATE]]#1 : tensor<16xf32>) outs(%[[STATE]]#2 : tensor<16x6xf32>)
//       CHECK:         %[[INS:.+]] = tensor.insert_slice %[[NORM]] into %[[R2]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 6] [1, 1, 1, 1]
//       CHECK:         scf.yield %[[INS]]
//       CHECK:   return %[[RES]]
func.func @tile_for(%q: tensor<2x4x32x8xf32>, %k: tensor<2x4x16x8xf32>,
                    %v: tensor<2x4x16x6xf32>) -> tensor<2x4x32x6xf32> {
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<2x4x32x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x6xf32>)
      -> tensor<2x4x32x6xf32>
  return %o : tensor<2x4x32x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %b, %h, %t = transform.structured.tile_using_for %sdpa
        tile_sizes [1, 1, 16, 0]
        : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A tile runs the online softmax over one head's rows: two heads per tile
// are refused, and the transform fails.
func.func @negative_two_heads_per_tile(%q: tensor<1x4x32x8xf32>,
                                       %k: tensor<1x4x16x8xf32>,
                                       %v: tensor<1x4x16x8xf32>)
    -> tensor<1x4x32x8xf32> {
  // expected-error @+3 {{'mha.sdpa' op expects tiles of one batch element and one head}}
  // expected-error @+2 {{to tile operation}}
  // expected-error @+1 {{failed to generate tiling loops}}
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<1x4x32x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>)
      -> tensor<1x4x32x8xf32>
  // expected-note @-4 {{when applied to this op}}
  return %o : tensor<1x4x32x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{transform.structured.tile_using_forall failed to apply}}
    %tiled, %forall = transform.structured.tile_using_forall %sdpa
        tile_sizes [1, 2, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The keys are a reduction whose split needs a merge of partial states
// (PartialReductionOpInterface, sdpa-partial-reduction-interface.mlir), not
// a tile of this op: tiles of some keys are refused.
func.func @negative_key_tiles(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x16x8xf32>,
                              %v: tensor<1x2x16x8xf32>) -> tensor<1x2x32x8xf32> {
  // expected-warning @+4 {{tiling is not thread safe at axis #3}}
  // expected-error @+3 {{'mha.sdpa' op expects tiles of every key}}
  // expected-error @+2 {{to tile operation}}
  // expected-error @+1 {{failed to generate tiling loops}}
  %o = mha.sdpa %q, %k, %v
      {mha.tiles = #mha.attention_tiles<query_tile = 16, key_tile = 8, key_splits = 1>}
      : (tensor<1x2x32x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
      -> tensor<1x2x32x8xf32>
  // expected-note @-4 {{when applied to this op}}
  return %o : tensor<1x2x32x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["mha.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{transform.structured.tile_using_forall failed to apply}}
    %tiled, %forall = transform.structured.tile_using_forall %sdpa
        tile_sizes [1, 1, 16, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
