// RUN: mha-opt %s -split-input-file -mha-strategy="query-tile=16 key-tile=8" -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa
// RUN: mha-opt %s -split-input-file -mha-strategy -mha-tile-attention="attention=auto" \
// RUN:   | FileCheck %s --check-prefix=AUTO
// RUN: mha-opt %s -split-input-file -mha-tile-attention="attention=decomposed" \
// RUN:   | FileCheck %s --check-prefix=KEEP

// mha-tile-attention: mha.sdpa becomes an scf.forall over (batch, head,
// query tile), made by scf::tileUsingSCF through mha.sdpa's TilingInterface, around scf.for loops over key blocks that carry the running
// maximum m, sum l and output acc and update them with an online softmax
// (and, with fewer query tiles than key splits, over key ranges too).
// No tensor has both the query and the key length of the whole sequence:
// scores exist one [BQ, BK] block at a time, in scratch the loop carries.

// The whole update of one key block, static sizes (T = 32, S = 16: two
// query tiles, two full key blocks); the result tile is written in place.
// With more than one query tile per head, each head's keys are transposed
// once, in a parallel loop of their own, into a buffer with rows of 16
// floats more (so that rows S apart do not share cache sets), and every key
// block is a view of that.
// CHECK-LABEL: func.func @tile_static(
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: tensor<2x4x32x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x6xf32>)
//       CHECK:   %[[KTPAD:.+]] = bufferization.alloc_tensor() : tensor<2x4x8x32xf32>
//       CHECK:   %[[KTINIT:.+]] = tensor.extract_slice %[[KTPAD]][0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
//       CHECK:   %[[KTALL:.+]] = scf.forall (%[[TB:.+]], %[[TH:.+]]) in (2, 4) shared_outs(%[[KTOUT:.+]] = %[[KTINIT]])
//       CHECK:     %[[KHEAD:.+]] = tensor.extract_slice %[[K]][%[[TB]], %[[TH]], 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> to tensor<1x1x16x8xf32>
//       CHECK:     %[[KHEADT:.+]] = linalg.transpose ins(%[[KHEAD]] : tensor<1x1x16x8xf32>) outs(%{{.+}} : tensor<1x1x8x16xf32>) permutation = [0, 1, 3, 2]
//       CHECK:       tensor.parallel_insert_slice %[[KHEADT]] into %[[KTOUT]][%[[TB]], %[[TH]], 0, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<1x1x8x16xf32> into tensor<2x4x8x16xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty() : tensor<2x4x32x6xf32>
//       CHECK:   %[[RES:.+]] = scf.forall (%[[B:.+]], %[[H:.+]], %[[T0:.+]]) = (0, 0, 0) to (2, 4, 32) step (1, 1, 16) shared_outs(%[[OUT:.+]] = %[[INIT]])
//       CHECK:     %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x4x32x8xf32> to tensor<16x8xf32>
//       CHECK:     %[[VH:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], 0, 0] [1, 1, 16, 6] [1, 1, 1, 1] : tensor<2x4x16x6xf32> to tensor<16x6xf32>
//       CHECK:     %[[KTH:.+]] = tensor.extract_slice %[[KTALL]][%[[B]], %[[H]], 0, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<8x16xf32>
//       CHECK:     %[[OT:.+]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 6] [1, 1, 1, 1] : tensor<2x4x32x6xf32> to tensor<16x6xf32>
//       CHECK:     %[[M0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16xf32>)
//       CHECK:     %[[L0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16xf32>)
//       CHECK:     %[[A0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OT]] : tensor<16x6xf32>)
//       CHECK:     %[[SCORES:.+]] = bufferization.alloc_tensor() : tensor<16x8xf32>
//       CHECK:     %[[KEYST:.+]] = bufferization.alloc_tensor() : tensor<8x8xf32>
//       CHECK:     %[[LOOP:.+]]:7 = scf.for %[[S0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:[^ ]+]] = %[[M0]], %[[L:[^ ]+]] = %[[L0]], %[[ACC:[^ ]+]] = %[[A0]], %[[SB:[^ ]+]] = %[[SCORES]], %[[KB:[^ ]+]] = %[[KEYST]], %{{.+}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x6xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16xf32>, tensor<16xf32>)
//       CHECK:       %[[VBLK:.+]] = tensor.extract_slice %[[VH]][%[[S0]], 0] [8, 6] [1, 1]
//       CHECK:       %[[KT:.+]] = tensor.extract_slice %[[KTH]][0, %[[S0]]] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
//   CHECK-NOT:       linalg.transpose
//       CHECK:       %[[ZS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16x8xf32>)
//       CHECK:       %[[S:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[QT]], %[[KT]] : tensor<16x8xf32>, tensor<8x8xf32>) outs(%[[ZS]] : tensor<16x8xf32>)
//       CHECK:       %[[MINIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16xf32>)
//       CHECK:       %[[MBLK:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<16x8xf32>) outs(%[[MINIT]] : tensor<16xf32>)
//       CHECK:         arith.maxnumf
// The maxima are raw scores: no per-row scaling of the block's maximum.
//   CHECK-NOT:       iterator_types = ["parallel"]} outs(%[[MBLK]] : tensor<16xf32>)
//       CHECK:       %[[CORR:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[MBLK]] : tensor<16xf32>, tensor<16xf32>)
//       CHECK:         %[[MNEW:.+]] = arith.maximumf
//       CHECK:         %[[SAME:.+]] = arith.cmpf oeq, %{{.+}}, %[[MNEW]]
//       CHECK:         %[[RESCALE:.+]] = math.exp2
//       CHECK:         arith.select %[[SAME]], %{{.+}}, %[[RESCALE]] : f32
//       CHECK:       %[[MOUT:.+]] = linalg.generic {{.*}} ins(%[[MBLK]] : tensor<16xf32>) outs(%[[M]] : tensor<16xf32>)
//       CHECK:         arith.maximumf
//       CHECK:       %[[P:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[MOUT]] : tensor<16xf32>) outs(%[[S]] : tensor<16x8xf32>)
//       CHECK:         math.exp2
//       CHECK:       %[[LC:.+]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<16xf32>) outs(%[[L]] : tensor<16xf32>)
//       CHECK:       %[[LOUT:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<16x8xf32>) outs(%[[LC]] : tensor<16xf32>)
//       CHECK:       %[[AC:.+]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<16xf32>) outs(%[[ACC]] : tensor<16x6xf32>)
//       CHECK:       %[[AOUT:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[P]], %[[VBLK]] : tensor<16x8xf32>, tensor<8x6xf32>) outs(%[[AC]] : tensor<16x6xf32>)
//       CHECK:       %[[SNEXT:.+]] = tensor.insert_slice %[[P]] into %[[SB]]
//       CHECK:       scf.yield %[[MOUT]], %[[LOUT]], %[[AOUT]], %[[SNEXT]],
//       CHECK:     %[[NORM:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#1 : tensor<16xf32>) outs(%[[LOOP]]#2 : tensor<16x6xf32>)
//       CHECK:       %[[NONE:.+]] = arith.cmpf oeq
//       CHECK:       %[[DIV:.+]] = arith.divf
//       CHECK:       arith.select %[[NONE]], %{{.+}}, %[[DIV]] : f32
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[NORM]] into %[[OUT]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 6] [1, 1, 1, 1] : tensor<16x6xf32> into tensor<2x4x32x6xf32>
//       CHECK:   return %[[RES]]

// T*S = 32*16 >= 16: the rule picks the fused path.
// AUTO-LABEL: func.func @tile_static(
//   AUTO-NOT:   mha.sdpa
//       AUTO:   scf.forall
//       AUTO:   return

// KEEP-LABEL: func.func @tile_static(
//       KEEP:   mha.sdpa
//   KEEP-NOT:   scf.forall
//       KEEP:   return
func.func @tile_static(%q: tensor<2x4x32x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x6xf32>) -> tensor<2x4x32x6xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<2x4x32x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x6xf32>) -> tensor<2x4x32x6xf32>
  return %o : tensor<2x4x32x6xf32>
}

// -----

// T*S = 2*4 < 16: the rule keeps tiny attention decomposed.
// AUTO-LABEL: func.func @negative_tiny_auto(
//       AUTO:   mha.sdpa
//   AUTO-NOT:   scf.forall
//       AUTO:   return
// KEEP-LABEL: func.func @negative_tiny_auto(
//       KEEP:   mha.sdpa
func.func @negative_tiny_auto(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x2x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// Causal, T = S = 37 with tiles 16 x 8: remainder tiles (affine.min), query
// tiles in the order 0, 2, 1 (balanced shares of the parallel loop), keys
// up to the tile's last query only, and the causal test only in the loops
// over the blocks that cross the diagonal. Each key range is an
// mha.online_attention tiled by scf::tileUsingSCF (an scf.for of 8-key
// blocks, static) with its last, short block peeled into a loop of its own.
//   CHECK-DAG: #[[$PAIR:.+]] = affine_map<(d0) -> ((d0 floordiv 16) floordiv 2)>
//   CHECK-DAG: #[[$FROMEND:.+]] = affine_map<(d0) -> (-((d0 floordiv 16) floordiv 2) + 2)>
//   CHECK-DAG: #[[$ODD:.+]] = affine_map<(d0) -> ((d0 floordiv 16) mod 2)>
//   CHECK-DAG: #[[$START:.+]] = affine_map<(d0) -> (d0 * 16)>
//   CHECK-DAG: #[[$ROWS:.+]] = affine_map<(d0) -> (16, -d0 + 37)>
//   CHECK-DAG: #[[$KEYEND:.+]] = affine_map<(d0, d1) -> (37, d0 + d1)>
//   CHECK-DAG: #[[$FULLEND:.+]] = affine_map<(d0, d1) -> (d0, ((d1 + 1) floordiv 8) * 8)>
//   CHECK-DAG: #[[$ATLEASTZERO:.+]] = affine_map<(d0) -> (d0, 0)>
//   CHECK-DAG: #[[$WHOLE:.+]] = affine_map<()[s0, s1, s2] -> (s1 - (s1 - s0) mod s2)>
//   CHECK-DAG: #[[$COUNT:.+]] = affine_map<(d0, d1) -> (d1 - d0, 0)>
//   CHECK-DAG: #[[$SHIFT:.+]] = affine_map<(d0, d1) -> (d0 + d1)>
// CHECK-LABEL: func.func @tile_causal_remainder(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}, %[[I:.+]]) = (0, 0, 0) to (1, 2, 37) step (1, 1, 16)
//   CHECK-DAG:     %[[PAIR:.+]] = affine.apply #[[$PAIR]](%[[I]])
//   CHECK-DAG:     %[[FROMEND:.+]] = affine.apply #[[$FROMEND]](%[[I]])
//   CHECK-DAG:     %[[ODD:.+]] = affine.apply #[[$ODD]](%[[I]])
//       CHECK:     %[[EVEN:.+]] = arith.cmpi eq, %[[ODD]], %{{.+}} : index
//       CHECK:     %[[QB:.+]] = arith.select %[[EVEN]], %[[PAIR]], %[[FROMEND]] : index
//       CHECK:     %[[QS:.+]] = affine.apply #[[$START]](%[[QB]])
//       CHECK:     %[[TQ:.+]] = affine.min #[[$ROWS]](%[[QS]])
//       CHECK:     tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, %[[QS]], 0] [1, 1, %[[TQ]], 8] [1, 1, 1, 1] : tensor<1x2x37x8xf32> to tensor<?x8xf32>
//       CHECK:     bufferization.alloc_tensor(%[[TQ]]) : tensor<?xf32>
//       CHECK:     %[[END:.+]] = affine.min #[[$KEYEND]](%[[QS]], %[[TQ]])
//       CHECK:     %[[FULL:.+]] = affine.min #[[$FULLEND]](%[[END]], %[[QS]])
//       CHECK:     %[[FULLKEYS:.+]] = affine.max #[[$ATLEASTZERO]](%[[FULL]])
//       CHECK:     %[[SPLIT:.+]] = affine.apply #[[$WHOLE]]()[%{{.+}}, %[[FULLKEYS]], %{{.+}}]
//       CHECK:     %[[FIRST:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %[[SPLIT]] step
//   CHECK-NOT:       linalg.index
//       CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<8x8xf32>)
//   CHECK-NOT:       linalg.index
//       CHECK:       scf.yield
//       CHECK:     %[[FIRSTREST:.+]]:7 = scf.for %{{.+}} = %[[SPLIT]] to %[[FULLKEYS]] step %{{.+}} iter_args(%{{.+}} = %[[FIRST]]#0,
//   CHECK-NOT:       linalg.index
//       CHECK:       scf.yield
//       CHECK:     %[[DIAGKEYS:.+]] = affine.max #[[$COUNT]](%[[FULL]], %[[END]])
//       CHECK:     %[[DSPLIT:.+]] = affine.apply #[[$WHOLE]]()[%{{.+}}, %[[DIAGKEYS]], %{{.+}}]
//       CHECK:     %[[DIAG:.+]]:7 = scf.for %[[S1:.+]] = %{{.+}} to %[[DSPLIT]] step %{{.+}} iter_args(%{{.+}} = %[[FIRSTREST]]#0,
//       CHECK:       %[[K0:.+]] = affine.apply #[[$SHIFT]](%[[FULL]], %[[S1]])
//       CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
//       CHECK:         %[[QI:.+]] = linalg.index 0 : index
//       CHECK:         %[[QUERY:.+]] = arith.addi %{{.+}}, %[[QI]] : index
//       CHECK:         %[[KJ:.+]] = linalg.index 1 : index
//       CHECK:         %[[KEY:.+]] = arith.addi %[[K0]], %[[KJ]] : index
//       CHECK:         %[[OK:.+]] = arith.cmpi ule, %[[KEY]], %[[QUERY]] : index
//       CHECK:         %[[ALLOWED:.+]] = arith.select %[[OK]], %{{.+}}, %cst
//       CHECK:         arith.maxnumf %{{.+}}, %[[ALLOWED]]
//       CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
//       CHECK:         math.exp2
//       CHECK:         arith.cmpi ule
//       CHECK:       scf.yield
//       CHECK:     %[[DIAGREST:.+]]:7 = scf.for %{{.+}} = %[[DSPLIT]] to %[[DIAGKEYS]] step %{{.+}} iter_args(%{{.+}} = %[[DIAG]]#0,
//       CHECK:         linalg.index
//       CHECK:       scf.yield
//       CHECK:     linalg.generic {{.*}} ins(%[[DIAGREST]]#1 : tensor<?xf32>) outs(%[[DIAGREST]]#2 : tensor<?x8xf32>)

// T*S = 37*37 >= 16: the rule picks the fused path.
// AUTO-LABEL: func.func @tile_causal_remainder(
//   AUTO-NOT:   mha.sdpa
//       AUTO:   scf.forall
//   AUTO-NOT:   mha.sdpa
//       AUTO:   return
func.func @tile_causal_remainder(%q: tensor<1x2x37x8xf32>, %k: tensor<1x2x37x8xf32>, %v: tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32> {
  %o = mha.sdpa %q, %k, %v causal : (tensor<1x2x37x8xf32>, tensor<1x2x37x8xf32>, tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32>
  return %o : tensor<1x2x37x8xf32>
}

// -----

// Dynamic batch and lengths: the tile count and both tile sizes come from
// the data. Query head h reads key/value head h floordiv 2 as a view, and
// the mask, broadcast over the batch, is sliced per tile and per block.
//   CHECK-DAG: #[[$KVHEAD:.+]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-LABEL: func.func @tile_dynamic_gqa_mask(
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: tensor<?x4x?x8xf32>, %[[K:[a-z0-9]+]]: tensor<?x2x?x8xf32>, %[[V:[a-z0-9]+]]: tensor<?x2x?x8xf32>, %[[MASK:[a-z0-9]+]]: tensor<1x?x?xi1>)
//   CHECK-DAG:   %[[BATCH:.+]] = tensor.dim %[[Q]], %c0
//   CHECK-DAG:   %[[T:.+]] = tensor.dim %[[Q]], %c2
//   CHECK-DAG:   %[[S:.+]] = tensor.dim %[[K]], %c2
//       CHECK:   scf.forall (%[[B:.+]], %[[H:.+]], %[[T0:.+]]) = (0, 0, 0) to (%[[BATCH]], 4, %[[T]]) step (1, 1, 16)
//       CHECK:     %[[TQ:.+]] = affine.min #{{.+}}(%[[T0]])[%[[T]]]
//       CHECK:     %[[G:.+]] = affine.apply #[[$KVHEAD]](%[[H]])
//       CHECK:     tensor.extract_slice %[[K]][%[[B]], %[[G]], 0, 0] [1, 1, %[[S]], 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> to tensor<?x8xf32>
//       CHECK:     tensor.extract_slice %[[V]][%[[B]], %[[G]], 0, 0] [1, 1, %[[S]], 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> to tensor<?x8xf32>
//       CHECK:     %[[MROWS:.+]] = tensor.extract_slice %[[MASK]][0, %[[T0]], 0] [1, %[[TQ]], %[[S]]] [1, 1, 1] : tensor<1x?x?xi1> to tensor<?x?xi1>
// The key loop runs over whole blocks of 8 keys (static), up to the last
// multiple of 8; the last, short block is peeled into a loop of its own.
//       CHECK:     %[[SPLIT:.+]] = affine.apply #{{.+}}()[%{{.+}}, %[[S]], %{{.+}}]
//       CHECK:     %[[WHOLE:.+]]:7 = scf.for %[[S0:.+]] = %{{.+}} to %[[SPLIT]] step
//       CHECK:       %[[MBLK:.+]] = tensor.extract_slice %[[MROWS]][0, %[[S0]]] [%[[TQ]], 8] [1, 1] : tensor<?x?xi1> to tensor<?x8xi1>
//       CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[MBLK]] : tensor<?x8xf32>, tensor<?x8xi1>)
//       CHECK:         ^bb0(%[[SCORE:.+]]: f32, %[[ALLOW:.+]]: i1, %[[OLD:.+]]: f32):
//       CHECK:         %[[MASKED:.+]] = arith.select %[[ALLOW]], %[[SCORE]], %{{.+}} : f32
//       CHECK:         arith.maxnumf %[[OLD]], %[[MASKED]] : f32
//       CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.+}}, %[[MBLK]] : tensor<?xf32>, tensor<?x8xi1>)
//       CHECK:         %[[E:.+]] = math.exp2
//       CHECK:         arith.select %{{.+}}, %[[E]], %{{.+}} : f32
//       CHECK:     scf.for %[[S1:.+]] = %[[SPLIT]] to %[[S]] step %{{.+}} iter_args(%{{.+}} = %[[WHOLE]]#0,
//       CHECK:       %[[TK:.+]] = affine.min #{{.+}}(%[[S1]])[%[[S]]]
//       CHECK:       tensor.extract_slice %[[MROWS]][0, %[[S1]]] [%[[TQ]], %[[TK]]] [1, 1] : tensor<?x?xi1> to tensor<?x?xi1>

// The key length is dynamic: the rule picks the fused path.
// AUTO-LABEL: func.func @tile_dynamic_gqa_mask(
//   AUTO-NOT:   mha.sdpa
//       AUTO:   scf.forall
//   AUTO-NOT:   mha.sdpa
//       AUTO:   return
func.func @tile_dynamic_gqa_mask(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %m: tensor<1x?x?xi1>) -> tensor<?x4x?x8xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) scale(0.5) : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<1x?x?xi1>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}

// -----

// A mask whose batch is only known at run time is 1 (broadcast) or B: each
// tile reads row 0 or row b. T = 5 < BQ: one static tile of 5 queries, and
// scratch of 5 rows, not 16.
// CHECK-LABEL: func.func @tile_mask_dynamic_batch(
//  CHECK-SAME:   %[[MASK:[a-z0-9]+]]: tensor<?x5x11xi1>)
//       CHECK:   %[[MB:.+]] = tensor.dim %[[MASK]], %c0
//       CHECK:   %[[BROADCASTS:.+]] = arith.cmpi eq, %[[MB]], %c1
//       CHECK:   scf.forall (%[[B:.+]], %{{.+}}, %{{.+}}) = (0, 0, 0) to (%{{.+}}, 2, 5) step (1, 1, 16)
//       CHECK:     %[[ROW:.+]] = arith.select %[[BROADCASTS]], %{{.+}}, %[[B]] : index
//       CHECK:     tensor.extract_slice %[[MASK]][%[[ROW]], %{{.+}}, 0] [1, 5, 11] [1, 1, 1] : tensor<?x5x11xi1> to tensor<5x11xi1>
//       CHECK:     bufferization.alloc_tensor() : tensor<5x8xf32>
//       CHECK:     scf.for

// A dynamic batch does not matter to the rule: T*S = 5*11 >= 16.
// AUTO-LABEL: func.func @tile_mask_dynamic_batch(
//   AUTO-NOT:   mha.sdpa
//       AUTO:   scf.forall
//       AUTO:   return
func.func @tile_mask_dynamic_batch(%q: tensor<?x2x5x8xf32>, %k: tensor<?x2x11x8xf32>, %v: tensor<?x2x11x8xf32>, %m: tensor<?x5x11xi1>) -> tensor<?x2x5x8xf32> {
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<?x2x5x8xf32>, tensor<?x2x11x8xf32>, tensor<?x2x11x8xf32>, tensor<?x5x11xi1>) -> tensor<?x2x5x8xf32>
  return %o : tensor<?x2x5x8xf32>
}

// -----

// Decoding one token of one head: 1 query tile is fewer than the 2 key
// splits, so the keys are split too: scf::tileUsingSCF's
// PartialReductionOuterParallel through mha.sdpa's
// PartialReductionOpInterface makes an scf.forall over the splits whose
// shared outputs are the partial states, and its mergeReductions merges
// them in split order. Each split's range is whole blocks ([0, 152) and
// [152, 300)), run by the online softmax into the split's slice of the
// partial states (the range's whole blocks, then its short last block,
// peeled); with one batch element, head and query tile, the split has no
// loop over query tiles.
//   CHECK-DAG: #[[$END:.+]] = affine_map<(d0) -> (300, d0 * 152 + 152)>
//   CHECK-DAG: #[[$COUNT:.+]] = affine_map<(d0, d1) -> (d0 - d1 * 152, 0)>
// CHECK-LABEL: func.func @split_keys_decode(
//       CHECK:   %[[ACCS:.+]] = bufferization.alloc_tensor() : tensor<2x1x1x1x8xf32>
//       CHECK:   %[[MAXS:.+]] = bufferization.alloc_tensor() : tensor<2x1x1x1xf32>
//       CHECK:   %[[SUMS:.+]] = bufferization.alloc_tensor() : tensor<2x1x1x1xf32>
//       CHECK:   %[[PARTS:.+]]:3 = scf.forall (%[[P:[a-z0-9]+]]) in (2) shared_outs(%[[ACC:.+]] = %[[ACCS]], %[[MAX:.+]] = %[[MAXS]], %[[SUM:.+]] = %[[SUMS]])
//       CHECK:     %[[ACCP:.+]] = tensor.extract_slice %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 1, 1, 1, 8]
//       CHECK:     %[[MAXP:.+]] = tensor.extract_slice %[[MAX]][%[[P]], 0, 0, 0] [1, 1, 1, 1]
//       CHECK:     %[[SUMP:.+]] = tensor.extract_slice %[[SUM]][%[[P]], 0, 0, 0] [1, 1, 1, 1]
//       CHECK:     %[[END:.+]] = affine.min #[[$END]](%[[P]])
//       CHECK:     %[[COUNT:.+]] = affine.max #[[$COUNT]](%[[END]], %[[P]])
//       CHECK:     %[[WHOLE:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step
//       CHECK:     %[[STATE:.+]]:7 = scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step %{{.+}} iter_args(%{{.+}} = %[[WHOLE]]#0,
//       CHECK:     %[[ACCOUT:.+]] = tensor.insert_slice %[[STATE]]#2 into %[[ACCP]]
//       CHECK:     %[[MAXOUT:.+]] = tensor.insert_slice %[[STATE]]#0 into %[[MAXP]]
//       CHECK:     %[[SUMOUT:.+]] = tensor.insert_slice %[[STATE]]#1 into %[[SUMP]]
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[ACCOUT]] into %[[ACC]][%[[P]], 0, 0, 0, 0] [1, 1, 1, 1, 8]
//       CHECK:       tensor.parallel_insert_slice %[[MAXOUT]] into %[[MAX]][%[[P]], 0, 0, 0] [1, 1, 1, 1]
//       CHECK:       tensor.parallel_insert_slice %[[SUMOUT]] into %[[SUM]][%[[P]], 0, 0, 0] [1, 1, 1, 1]
//       CHECK:   %[[MALL:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#1 : tensor<2x1x1x1xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[LALL:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#2, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:     %[[EMPTYSPLIT:.+]] = arith.cmpf oeq
//       CHECK:     %[[W:.+]] = math.exp2
//       CHECK:     arith.select %[[EMPTYSPLIT]], %{{.+}}, %[[W]] : f32
//       CHECK:   %[[AALL:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#0, %[[PARTS]]#1, %[[MALL]] :
//       CHECK:   %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[LALL]] : tensor<1x1x1xf32>) outs(%[[AALL]] : tensor<1x1x1x8xf32>)
//       CHECK:     arith.divf
//       CHECK:   return %[[OUT]]
func.func @split_keys_decode(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x300x8xf32>, %v: tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x1x1x8xf32>, tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}

// -----

// Causal: with T <= BQ the queries see the first T keys only; the keys are
// not split.
// CHECK-LABEL: func.func @negative_split_keys_causal(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 1, 1) step (1, 1, 16) shared_outs
//   CHECK-NOT:   scf.forall (
//       CHECK:   return
func.func @negative_split_keys_causal(%q: tensor<1x1x1x8xf32>, %k: tensor<1x1x300x8xf32>, %v: tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32> {
  %o = mha.sdpa %q, %k, %v causal : (tensor<1x1x1x8xf32>, tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}

// -----

// Only f32 is tiled; the decomposed lowering reports other element types.
// CHECK-LABEL: func.func @negative_f16(
//       CHECK:   %[[O:.+]] = mha.sdpa
//   CHECK-NOT:   scf.forall
//       CHECK:   return %[[O]]
func.func @negative_f16(%q: tensor<1x1x4x8xf16>, %k: tensor<1x1x4x8xf16>, %v: tensor<1x1x4x8xf16>) -> tensor<1x1x4x8xf16> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>) -> tensor<1x1x4x8xf16>
  return %o : tensor<1x1x4x8xf16>
}
