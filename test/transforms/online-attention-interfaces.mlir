// RUN: mha-opt %s -split-input-file -transform-interpreter -verify-diagnostics \
// RUN:   | FileCheck %s

// mha.online_attention's interfaces (OnlineAttentionInterfaces.cpp) driven
// by transform scripts. Its TilingInterface has one loop, the keys, a
// reduction into the whole state: tile_using_for makes the key loop, the
// state (m, l, acc and the scratch) its loop-carried values, and each
// iteration the same update on a block of keys, whose first key's position
// (key_start) moves with the block.

// 32 keys in blocks of 8: four iterations, each an update by 8 keys.
// CHECK-LABEL: func.func @tile_keys(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<16x8xf32>, %[[K:[a-z0-9]+]]: tensor<32x8xf32>, %[[V:[a-z0-9]+]]: tensor<32x6xf32>, %[[I:[a-z0-9]+]]: index, %[[J:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: tensor<16xf32>, %[[L:[a-z0-9]+]]: tensor<16xf32>, %[[ACC:[a-z0-9]+]]: tensor<16x6xf32>,
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C32:.+]] = arith.constant 32 : index
//   CHECK-DAG:   %[[C8:.+]] = arith.constant 8 : index
//       CHECK:   %[[LOOP:.+]]:7 = scf.for %[[J0:.+]] = %[[C0]] to %[[C32]] step %[[C8]] iter_args(%[[MI:.+]] = %[[M]], %[[LI:.+]] = %[[L]], %[[AI:.+]] = %[[ACC]], %[[S:[^ ]+]] = %{{.+}}, %[[KT:[^ ]+]] = %{{.+}}, %[[NM:[^ ]+]] = %{{.+}}, %[[CR:[^ ]+]] = %{{.+}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
//       CHECK:     %[[KB:.+]] = tensor.extract_slice %[[K]][%[[J0]], 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
//       CHECK:     %[[VB:.+]] = tensor.extract_slice %[[V]][%[[J0]], 0] [8, 6] [1, 1] : tensor<32x6xf32> to tensor<8x6xf32>
//       CHECK:     %[[START:.+]] = affine.apply #{{.+}}(%[[J0]])[%[[J]]]
//       CHECK:     %[[NEW:.+]]:7 = mha.online_attention ins(%[[Q]], %[[KB]], %[[VB]]) query_start(%[[I]]) key_start(%[[START]]) scale(1.250000e-01) outs(%[[MI]], %[[LI]], %[[AI]]) scratch(%[[S]], %[[KT]], %[[NM]], %[[CR]]) : (tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>,
//       CHECK:     %[[MN:.+]] = tensor.insert_slice %[[NEW]]#0 into %[[MI]]
//       CHECK:     %[[LN:.+]] = tensor.insert_slice %[[NEW]]#1 into %[[LI]]
//       CHECK:     %[[AN:.+]] = tensor.insert_slice %[[NEW]]#2 into %[[AI]]
//       CHECK:     scf.yield %[[MN]], %[[LN]], %[[AN]],
//       CHECK:   return %[[LOOP]]#2
func.func @tile_keys(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>, %v: tensor<32x6xf32>,
                     %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>,
                     %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
                     %nm: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16x6xf32> {
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j)
      scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c)
      : (tensor<16x8xf32>, tensor<32x8xf32>, tensor<32x6xf32>, index, index,
         tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
         tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return %r#2 : tensor<16x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["mha.online_attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %op tile_sizes [8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Every view of the keys moves with the block: the keys and values (here
// bf16), Kᵀ's columns and the mask's; a `?` count of keys gives a last
// block of min(8, S - j0).
// CHECK-LABEL: func.func @tile_keys_views(
//  CHECK-SAME:     %[[K:[a-z0-9]+]]: tensor<?x8xbf16>, %[[V:[a-z0-9]+]]: tensor<?x6xbf16>, %[[KT:[a-z0-9]+]]: tensor<8x?xf32>, %[[MASK:[a-z0-9]+]]: tensor<?x?xi1>,
//       CHECK:   %[[S:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x8xbf16>
//       CHECK:   %[[LOOP:.+]]:8 = scf.for %[[J0:.+]] = %{{.+}} to %[[S]] step %{{.+}} iter_args
//       CHECK:     %[[N:.+]] = affine.min #{{.+}}(%[[J0]])[%[[S]]]
//       CHECK:     %[[KB:.+]] = tensor.extract_slice %[[K]][%[[J0]], 0] [%[[N]], 8] [1, 1]
//       CHECK:     %[[VB:.+]] = tensor.extract_slice %[[V]][%[[J0]], 0] [%[[N]], 6] [1, 1]
//       CHECK:     %[[KTB:.+]] = tensor.extract_slice %[[KT]][0, %[[J0]]] [8, %[[N]]] [1, 1]
//       CHECK:     %[[MB:.+]] = tensor.extract_slice %[[MASK]][0, %[[J0]]] [%{{.+}}, %[[N]]] [1, 1]
//       CHECK:     mha.online_attention ins(%{{.+}}, %[[KB]], %[[VB]]) keys_t(%[[KTB]]) mask(%[[MB]]) {{.*}} causal outs(
//       CHECK:   return %[[LOOP]]#2
func.func @tile_keys_views(%q: tensor<?x8xf32>, %k: tensor<?x8xbf16>, %v: tensor<?x6xbf16>,
                           %kT: tensor<8x?xf32>, %mask: tensor<?x?xi1>, %i: index, %j: index,
                           %o: index, %m: tensor<?xf32>, %l: tensor<?xf32>,
                           %acc: tensor<?x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
                           %nm: tensor<16xf32>, %c: tensor<16xf32>, %vw: tensor<8x8xf32>)
    -> tensor<?x6xf32> {
  %r:8 = mha.online_attention ins(%q, %k, %v) keys_t(%kT) mask(%mask)
      query_start(%i) key_start(%j) causal_offset(%o) scale(0.5) causal
      outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c, %vw)
      : (tensor<?x8xf32>, tensor<?x8xbf16>, tensor<?x6xbf16>, tensor<8x?xf32>,
         tensor<?x?xi1>, index, index, index, tensor<?xf32>, tensor<?xf32>,
         tensor<?x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>,
         tensor<16xf32>, tensor<8x8xf32>)
      -> (tensor<?xf32>, tensor<?xf32>, tensor<?x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x8xf32>)
  return %r#2 : tensor<?x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["mha.online_attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %op tile_sizes [8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// linalg's AggregatedOpInterface (the decomposition of one block into
// linalg ops) cannot be driven from a script in LLVM 22:
// transform.structured.decompose_interface returns one handle per target and
// puts the producer of every replacement value in it, seven here, which its
// one result cannot hold. (mha-tile-attention calls the interface itself.)
func.func @negative_decompose_interface(
    %q: tensor<16x8xf32>, %k: tensor<8x8xf32>, %v: tensor<8x6xf32>,
    %i: index, %j: index, %m: tensor<16xf32>, %l: tensor<16xf32>,
    %acc: tensor<16x6xf32>, %s: tensor<16x8xf32>, %kt: tensor<8x8xf32>,
    %nm: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16x6xf32> {
  // expected-note @+1 {{when applied to this op}}
  %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i) key_start(%j)
      scale(0.125) outs(%m, %l, %acc) scratch(%s, %kt, %nm, %c)
      : (tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>, index, index,
         tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
         tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>,
          tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return %r#2 : tensor<16x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["mha.online_attention"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @+2 {{application of transform.structured.decompose_interface expected to produce 1 results (actually produced 7)}}
    // expected-note @+1 {{if you need variadic results}}
    %decomposed = transform.structured.decompose_interface %op
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
