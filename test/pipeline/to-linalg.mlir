// RUN: mha-opt %s -mha-to-linalg="attention=decomposed fuse-projections=true batch-chunk=0" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,DECOMPOSED --implicit-check-not=mha. --implicit-check-not=linalg.transpose
// RUN: mha-opt %s -mha-to-linalg="attention=fused fuse-projections=true batch-chunk=0" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,FUSED --implicit-check-not=mha. --implicit-check-not="permutation = [0, 2, 1, 3]"

// Stage 1: mha.attention is expanded; the projections write heads and the
// output projection reads them (no linalg.transpose between the token and
// the head layout; the decomposed path has none at all, the fused one only
// transposes its key blocks inside a tile), Q, K and V
// are one projection by the packed weights (fuse-projections, off by
// default), and both projections run as
// parallel tiles (scf.forall) of named ops. Dynamic batch and sequence
// sizes stay dynamic. Attention in between takes the path the option says.
// batch-chunk=0 keeps the whole batch in one layer (the chunk loop over it,
// which `?` lengths would otherwise get: test/tiling/batch-chunks.mlir).

// The module's target (mha-set-target: this machine's), which mha-strategy
// reads.
// CHECK: module attributes {mha.target = #mha.target<{{.*}}>}
// CHECK-LABEL: func.func @mha
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x16xf32>, %[[WQ:.+]]: tensor<16x16xf32>, %[[WK:.+]]: tensor<16x8xf32>, %[[WV:.+]]: tensor<16x8xf32>, %[[WO:.+]]: tensor<16x16xf32>, %[[BQ:.+]]: tensor<16xf32>)
// The code generation sizes for the target, recorded for the passes after
// this pipeline (mha-strategy).
//  CHECK-SAME:   attributes {mha.codegen = #mha.codegen_sizes<lanes = {{[0-9]+}}, register_rows = {{[0-9]+}}, register_cols = {{[0-9]+}}, register_unroll = {{[0-9]+}}, max_vector_length = {{[0-9]+}}, projection_rows = {{[0-9]+}}, projection_cols = {{[0-9]+}}, chunk_bytes = {{[0-9]+}}, {{.*}}>}
// The weights side by side [16, 16 + 8 + 8], the biases too (K and V: 0).
//       CHECK:   %[[PACKED:.+]] = tensor.concat dim(1) %[[WQ]], %[[WK]], %[[WV]] : (tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x32xf32>
//       CHECK:   tensor.concat dim(0) %[[BQ]], %{{.+}}, %{{.+}} : (tensor<16xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32xf32>
//       CHECK:   %[[W3:.+]] = tensor.expand_shape %[[PACKED]] {{\[}}[0], [1, 2]] output_shape [16, 8, 4] : tensor<16x32xf32> into tensor<16x8x4xf32>
// One parallel projection into 4 + 2 + 2 heads: one tile per (head, 48
// tokens, batch), each a matmul of the tokens by the head's 4 columns,
// starting from the bias broadcast to its rows (a generic it alone reads).
//       CHECK:   %[[QKV:.+]] = scf.forall (%[[H:.+]], %[[T:.+]], %[[B:.+]]) = (0, 0, 0) to (8, %{{.+}}, %{{.+}}) step (1, 48, 1) shared_outs(%{{.+}}) -> (tensor<?x8x?x4xf32>)
//   CHECK-DAG:     %[[XT:.+]] = tensor.extract_slice %[[X]][%[[B]], %[[T]], 0] [1, %{{.+}}, 16] [1, 1, 1] : tensor<?x?x16xf32> to tensor<1x?x16xf32>
//   CHECK-DAG:     %[[WT:.+]] = tensor.extract_slice %[[W3]][0, %[[H]], 0] [16, 1, 4] [1, 1, 1] : tensor<16x8x4xf32> to tensor<16x1x4xf32>
//       CHECK:     %[[BIAS:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<?x4xf32>)
//   CHECK-DAG:     %[[XT2:.+]] = tensor.extract_slice %[[XT]][0, 0, 0] [1, %{{.+}}, 16] [1, 1, 1] : tensor<1x?x16xf32> to tensor<?x16xf32>
//   CHECK-DAG:     %[[WT2:.+]] = tensor.extract_slice %[[WT]][0, 0, 0] [16, 1, 4] [1, 1, 1] : tensor<16x1x4xf32> to tensor<16x4xf32>
//       CHECK:     linalg.matmul ins(%[[XT2]], %[[WT2]] : tensor<?x16xf32>, tensor<16x4xf32>) outs(%[[BIAS]] : tensor<?x4xf32>)
//       CHECK:     scf.forall.in_parallel
// Q, K and V are whole heads of the packed result, read in place.
//       CHECK:   %[[Q:.+]] = tensor.extract_slice %[[QKV]][0, 0, 0, 0] [%{{.+}}, 4, %{{.+}}, 4]
//       CHECK:   %[[K:.+]] = tensor.extract_slice %[[QKV]][0, 4, 0, 0] [%{{.+}}, 2, %{{.+}}, 4]
//       CHECK:   %[[V:.+]] = tensor.extract_slice %[[QKV]][0, 6, 0, 0] [%{{.+}}, 2, %{{.+}}, 4]
// Decomposed: the score contraction reads Q and K (kv head h floordiv 2).
//  DECOMPOSED:   linalg.generic {{.+}} ins(%[[Q]], %[[K]] : tensor<?x4x?x4xf32>, tensor<?x2x?x4xf32>)
//  DECOMPOSED:     linalg.index 2
//  DECOMPOSED:     math.exp2
//  DECOMPOSED:   linalg.generic {{.+}} ins(%{{.+}}, %[[V]] : tensor<?x4x?x?xf32>, tensor<?x2x?x4xf32>)
// Fused: a parallel loop over (batch, head, query tile) slices its query
// rows out of Q.
//       FUSED:   scf.forall
//       FUSED:     tensor.extract_slice %[[Q]]
//       FUSED:     scf.for
//       FUSED:       math.exp2
// The output projection of the heads: parallel tiles of 48 tokens (the
// host rule on AVX-512), each a sum over heads and value columns
// (batch_reduce_matmul) from a zero fill (a generic without the unit batch
// dimension).
//       CHECK:   %[[WO3:.+]] = tensor.expand_shape %[[WO]] {{\[}}[0, 1], [2]] output_shape [4, 4, 16] : tensor<16x16xf32> into tensor<4x4x16xf32>
//       CHECK:   %[[Y:.+]] = scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (%{{.+}}, %{{.+}}) step (48, 1) shared_outs(%{{.+}}) -> (tensor<?x?x16xf32>)
//       CHECK:     %[[ZERO:.+]] = linalg.generic {{.+}} ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x16xf32>)
//       CHECK:     linalg.batch_reduce_matmul ins(%{{.+}}, %[[WO3]] : tensor<4x?x4xf32>, tensor<4x4x16xf32>) outs(%[[ZERO]] : tensor<?x16xf32>)
//       CHECK:   return %[[Y]] : tensor<?x?x16xf32>
func.func @mha(%x: tensor<?x?x16xf32>, %w_q: tensor<16x16xf32>, %w_k: tensor<16x8xf32>,
               %w_v: tensor<16x8xf32>, %w_o: tensor<16x16xf32>,
               %b_q: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q)
      heads(4) kv_heads(2) causal
      : (tensor<?x?x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>,
         tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
