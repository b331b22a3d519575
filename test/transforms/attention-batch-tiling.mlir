// RUN: mha-opt %s -split-input-file -transform-interpreter | FileCheck %s

// mha.attention's TilingInterface (compiler/graph/AttentionBatchTiling.h)
// driven by transform scripts: one loop, the batch; a tile of b sequences
// is the same layer on the slices of its batch operands, the weights whole.

// Chunks of two sequences in an scf.for. The score_mod region of a chunk
// receives the batch element of the whole layer: its chunk's index plus the
// chunk's first sequence.
// CHECK-LABEL: func.func @tile_batch_for(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x16x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[TABLE:[a-z0-9]+]]: tensor<4x16xf32>)
//       CHECK:   %[[INIT:.+]] = tensor.empty() : tensor<4x16x32xf32>
//       CHECK:   %[[LOOP:.+]] = scf.for %[[B0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[R:.+]] = %[[INIT]])
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%[[B0]], 0, 0] [2, 16, 32] [1, 1, 1]
//       CHECK:     %[[Y:.+]] = mha.attention %[[XB]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(2) causal score_mod {
//       CHECK:     ^bb0(%[[S:.+]]: f32, %[[B:.+]]: index, %{{.+}}: index, %{{.+}}: index, %[[J:.+]]: index):
//       CHECK:       %[[WHOLE:.+]] = arith.addi %[[B]], %[[B0]] : index
//       CHECK:       tensor.extract %[[TABLE]][%[[WHOLE]], %[[J]]] : tensor<4x16xf32>
//       CHECK:     } : {{.*}} -> tensor<2x16x32xf32>
//       CHECK:     %[[INS:.+]] = tensor.insert_slice %[[Y]] into %[[R]][%[[B0]], 0, 0] [2, 16, 32] [1, 1, 1]
//       CHECK:     scf.yield %[[INS]]
//       CHECK:   return %[[LOOP]]
func.func @tile_batch_for(%x: tensor<4x16x32xf32>, %w: tensor<32x32xf32>,
                          %table: tensor<4x16xf32>) -> tensor<4x16x32xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) causal score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bias = tensor.extract %table[%b, %j] : tensor<4x16xf32>
    %t = arith.addf %s, %bias : f32
    mha.yield %t : f32
  } : (tensor<4x16x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
       tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
  return %y : tensor<4x16x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["mha.attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %op tile_sizes [2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// One sequence per thread of an scf.forall over a `?` batch (the
// destination reified from the query): the query and kv are sliced, a
// mask of one row shared by the batch is not.
// CHECK-LABEL: func.func @tile_batch_forall(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<?x16x32xf32>, %[[KV:[a-z0-9]+]]: tensor<?x8x32xf32>, %[[MASK:[a-z0-9]+]]: tensor<1x16x8xi1>,
//       CHECK:   %[[B:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x16x32xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[B]]) : tensor<?x16x32xf32>
//       CHECK:   %[[RES:.+]] = scf.forall (%[[I:.+]]) in (%{{.+}}) shared_outs(%[[OUT:.+]] = %[[INIT]])
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 16, 32] [1, 1, 1]
//       CHECK:     %[[KVB:.+]] = tensor.extract_slice %[[KV]][%[[I]], 0, 0] [1, 8, 32] [1, 1, 1]
//       CHECK:     %[[Y:.+]] = mha.attention %[[XB]] kv(%[[KVB]]) mask(%[[MASK]]) {{.*}} -> tensor<1x16x32xf32>
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[I]], 0, 0] [1, 16, 32] [1, 1, 1]
//       CHECK:   return %[[RES]]
func.func @tile_batch_forall(%x: tensor<?x16x32xf32>, %kv: tensor<?x8x32xf32>,
                             %mask: tensor<1x16x8xi1>, %w: tensor<32x32xf32>)
    -> tensor<?x16x32xf32> {
  %y = mha.attention %x kv(%kv) mask(%mask) weights(%w, %w, %w, %w) heads(2)
      : (tensor<?x16x32xf32>, tensor<?x8x32xf32>, tensor<1x16x8xi1>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>) -> tensor<?x16x32xf32>
  return %y : tensor<?x16x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["mha.attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %op tile_sizes [1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
