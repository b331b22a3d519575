// RUN: mha-opt %s -split-input-file -mha-vectorize -mha-hoist-accumulators | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-vectorize="rows=4 cols=16" -mha-hoist-accumulators | FileCheck %s --check-prefix=BLOCK
// RUN: mha-opt %s -split-input-file -mha-vectorize="max-vector-length=48" -mha-hoist-accumulators | FileCheck %s --check-prefix=LEN
// RUN: mha-opt %s -split-input-file -mha-vectorize -mha-hoist-accumulators -canonicalize -cse | FileCheck %s --check-prefix=CANON
// RUN: mha-opt %s -split-input-file -mha-vectorize -mha-hoist-accumulators -mha-unroll-reductions -canonicalize -cse | FileCheck %s --check-prefix=UNROLL
// RUN: mha-opt %s -split-input-file -mha-vectorize="rows=6 cols=64" -mha-hoist-accumulators -canonicalize -cse | FileCheck %s --check-prefix=REST
// RUN: %expect-exit 3 mha-opt %s -split-input-file -mha-vectorize=rows=0 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: %expect-exit 3 mha-opt %s -split-input-file -mha-vectorize=max-vector-length=-2 2>&1 | FileCheck %s --check-prefix=ERRLEN
// RUN: %expect-exit 3 mha-opt %s -split-input-file -mha-unroll-reductions=unroll=0 2>&1 | FileCheck %s --check-prefix=ERRUNROLL

// ERR: error: mha-vectorize expects rows, cols, max-vector-length and lanes >= 1, got rows=0 cols=32 max-vector-length=256 lanes=16
// ERRLEN: error: mha-vectorize expects rows, cols, max-vector-length and lanes >= 1, got rows=8 cols=32 max-vector-length=-2 lanes=16
// ERRUNROLL: error: mha-unroll-reductions expects unroll >= 1, got 0

// mha-vectorize cuts the register blocks and vectorizes them;
// mha-hoist-accumulators keeps their accumulators in registers through the
// reduction loops, and mha-unroll-reductions (the UNROLL cases only) does
// 2 reduction steps per iteration.

// A matmul: 8x32 blocks of C (2 row blocks x 2 column blocks), each summed
// over k one step at a time. The block of C is read before the k loop and
// written after it: inside, it is a vector<8x32xf32> loop value, and each
// step is one outer product of an 8x1 column of A by a 1x32 row of B.
// CHECK-LABEL: func.func @matmul
//  CHECK-SAME:   (%[[A:.+]]: tensor<16x64xf32>, %[[B:.+]]: tensor<64x64xf32>, %[[C:.+]]: tensor<16x64xf32>)
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.+]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C8:.+]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.+]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C32:.+]] = arith.constant 32 : index
//   CHECK-DAG:   %[[C64:.+]] = arith.constant 64 : index
//       CHECK:   %[[R:.+]] = scf.for %[[I:.+]] = %[[C0]] to %[[C16]] step %[[C8]] iter_args(%[[OUT0:.+]] = %[[C]])
//       CHECK:     scf.for %[[J:.+]] = %[[C0]] to %[[C64]] step %[[C32]] iter_args(%[[OUT1:.+]] = %[[OUT0]])
//       CHECK:       %[[INIT:.+]] = vector.transfer_read %[[OUT1]][%[[I]], %[[J]]], %{{.+}} : tensor<16x64xf32>, vector<8x32xf32>
//       CHECK:       %[[SUM:.+]]:2 = scf.for %[[K:.+]] = %[[C0]] to %[[C64]] step %[[C1]] iter_args(%{{.+}} = %[[OUT1]], %[[ACC:.+]] = %[[INIT]]) -> (tensor<16x64xf32>, vector<8x32xf32>)
//   CHECK-NOT:         vector.transfer_write
//       CHECK:         %[[COL:.+]] = vector.transfer_read %[[A]][%[[I]], %[[K]]], %{{.+}} : tensor<16x64xf32>, vector<8x1xf32>
//       CHECK:         %[[ROW:.+]] = vector.transfer_read %[[B]][%[[K]], %[[J]]], %{{.+}} : tensor<64x64xf32>, vector<32xf32>
//       CHECK:         %[[ROW2:.+]] = vector.broadcast %[[ROW]] : vector<32xf32> to vector<1x32xf32>
//       CHECK:         %[[NEXT:.+]] = vector.contract {{.+}} %[[COL]], %[[ROW2]], %[[ACC]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//   CHECK-NOT:         vector.transfer_write
//       CHECK:         scf.yield %{{.+}}, %[[NEXT]]
//       CHECK:       vector.transfer_write %[[SUM]]#1, %[[SUM]]#0[%[[I]], %[[J]]] {{.+}} : vector<8x32xf32>, tensor<16x64xf32>
//       CHECK:   return %[[R]]
//   CHECK-NOT:   linalg.matmul
// Smaller register blocks: 4 x 16.
// BLOCK-LABEL: func.func @matmul
//   BLOCK-DAG:   %[[C4:.+]] = arith.constant 4 : index
//   BLOCK-DAG:   %[[C16:.+]] = arith.constant 16 : index
//       BLOCK:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C4]] iter_args
//       BLOCK:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C16]] iter_args
//       BLOCK:       vector.transfer_read {{.+}} : tensor<16x64xf32>, vector<4x16xf32>
//       BLOCK:       scf.for
//       BLOCK:         vector.contract {{.+}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// After cleanup, the k loop carries the block alone.
// CANON-LABEL: func.func @matmul
//       CANON:   %[[INIT:.+]] = vector.transfer_read {{.+}} : tensor<16x64xf32>, vector<8x32xf32>
//       CANON:   %[[SUM:.+]] = scf.for %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (vector<8x32xf32>)
//       CANON:     %[[NEXT:.+]] = vector.contract {{.+}}, %[[ACC]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       CANON:     scf.yield %[[NEXT]] : vector<8x32xf32>
//       CANON:   vector.transfer_write %[[SUM]], {{.+}} : vector<8x32xf32>, tensor<16x64xf32>
// By default the k loop does 2 steps per iteration, in their order: the
// second outer product adds to the first's result.
// UNROLL-LABEL: func.func @matmul
//   UNROLL-DAG:   %[[C2:.+]] = arith.constant 2 : index
//   UNROLL-DAG:   %[[C64:.+]] = arith.constant 64 : index
//       UNROLL:   %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %[[C64]] step %[[C2]] iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<8x32xf32>)
//       UNROLL:     %[[COL:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[K]]]
//       UNROLL:     %[[S1:.+]] = vector.contract {{.+}} %[[COL]], %{{.+}}, %[[ACC]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       UNROLL:     %[[K1:.+]] = arith.addi %[[K]], %{{.+}} : index
//       UNROLL:     %[[COL1:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[K1]]]
//       UNROLL:     %[[S2:.+]] = vector.contract {{.+}} %[[COL1]], %{{.+}}, %[[S1]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       UNROLL:     scf.yield %[[S2]] : vector<8x32xf32>
//       UNROLL:   vector.transfer_write %[[SUM]], {{.+}} : vector<8x32xf32>, tensor<16x64xf32>
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Attention's QK^T as a generic over (rows, k, columns): it is a matmul and
// gets the same register blocks. The 32 columns are one block: no column
// loop.
// CHECK-LABEL: func.func @qk_generic
//  CHECK-SAME:   (%[[Q:.+]]: tensor<16x8xf32>, %[[KT:.+]]: tensor<8x32xf32>, %[[S:.+]]: tensor<16x32xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %[[S]])
//       CHECK:     %[[INIT:.+]] = vector.transfer_read %[[OUT]][%[[I]], %{{.+}}], %{{.+}} : tensor<16x32xf32>, vector<8x32xf32>
//       CHECK:     scf.for %[[K:.+]] = {{.+}} iter_args(%{{.+}} = %[[OUT]], %[[ACC:.+]] = %[[INIT]])
//       CHECK:       %[[QC:.+]] = vector.transfer_read %[[Q]][%[[I]], %[[K]]], %{{.+}} : tensor<16x8xf32>, vector<8x1xf32>
//       CHECK:       %[[KR:.+]] = vector.transfer_read %[[KT]][%[[K]], %{{.+}}], %{{.+}} : tensor<8x32xf32>, vector<32xf32>
//       CHECK:       %[[KR2:.+]] = vector.broadcast %[[KR]]
//       CHECK:       vector.contract {{.+}} %[[QC]], %[[KR2]], %[[ACC]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
#q = affine_map<(d0, d1, d2) -> (d0, d1)>
#k = affine_map<(d0, d1, d2) -> (d1, d2)>
#s = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @qk_generic(%q: tensor<16x8xf32>, %kt: tensor<8x32xf32>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<16x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %sum = arith.addf %o, %m : f32
    linalg.yield %sum : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// The output projection's batch_reduce_matmul: the batch and k loops are both
// innermost, around the hoisted 8x32 block, and each step is a matmul of one
// batch's slices, so its vector.contract has one reduction dimension.
// CHECK-LABEL: func.func @batch_reduce
//  CHECK-SAME:   (%[[A:.+]]: tensor<4x16x8xf32>, %[[B:.+]]: tensor<4x8x32xf32>, %[[C:.+]]: tensor<16x32xf32>)
//   CHECK-DAG:   %[[C4:.+]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C8:.+]] = arith.constant 8 : index
//       CHECK:   scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %[[C8]] iter_args(%[[OUT:.+]] = %[[C]])
//       CHECK:     %[[INIT:.+]] = vector.transfer_read %[[OUT]][%[[I]], %{{.+}}], %{{.+}} : tensor<16x32xf32>, vector<8x32xf32>
//       CHECK:     %[[BSUM:.+]]:2 = scf.for %[[BI:.+]] = %{{.+}} to %[[C4]] step %{{.+}} iter_args(%{{.+}}, %[[BACC:.+]] = %[[INIT]])
//       CHECK:       %[[KSUM:.+]]:2 = scf.for %[[K:.+]] = %{{.+}} to %[[C8]] step %{{.+}} iter_args(%{{.+}}, %[[ACC:.+]] = %[[BACC]])
//       CHECK:         %[[COL:.+]] = vector.transfer_read %[[A]][%[[BI]], %[[I]], %[[K]]], %{{.+}} : tensor<4x16x8xf32>, vector<8x1xf32>
//       CHECK:         vector.transfer_read %[[B]][%[[BI]], %[[K]], %{{.+}}], %{{.+}} : tensor<4x8x32xf32>, vector<32xf32>
//       CHECK:         vector.contract {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %[[COL]], %{{.+}}, %[[ACC]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       CHECK:       scf.yield %[[KSUM]]#0, %[[KSUM]]#1
//       CHECK:     vector.transfer_write %[[BSUM]]#1, %[[BSUM]]#0[%[[I]], %{{.+}}] {{.+}} : vector<8x32xf32>, tensor<16x32xf32>
//   CHECK-NOT:   linalg.
//       CHECK:   return
func.func @batch_reduce(%a: tensor<4x16x8xf32>, %b: tensor<4x8x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x16x8xf32>, tensor<4x8x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Elementwise exp: one vector<128xf32> per row, whose exp is an exp of the
// vector (mha-approximate-exp makes it a polynomial after bufferization;
// a scalar math.exp would become a libm call per element). With
// max-vector-length=48, rows are split into vectors of 32 (the largest
// divisor of 128 not above 48).
// CHECK-LABEL: func.func @exp
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x128xf32>, %[[O:.+]]: tensor<4x128xf32>)
//   CHECK-NOT:   math.exp
//       CHECK:   scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %[[O]])
//       CHECK:     %[[V:.+]] = vector.transfer_read %[[X]][%[[I]], %{{.+}}], %{{.+}} : tensor<4x128xf32>, vector<128xf32>
//       CHECK:     %[[E:.+]] = math.exp %[[V]] : vector<128xf32>
//       CHECK:     %[[W:.+]] = vector.transfer_write %[[E]], %{{.+}} : vector<128xf32>, tensor<1x128xf32>
//       CHECK:     tensor.insert_slice %[[W]] into %[[OUT]][%[[I]], 0] [1, 128] [1, 1]
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
// LEN-LABEL: func.func @exp
//   LEN-DAG:   %[[C32:.+]] = arith.constant 32 : index
//   LEN-DAG:   %[[C128:.+]] = arith.constant 128 : index
//       LEN:   scf.for
//       LEN:     scf.for %{{.+}} = %{{.+}} to %[[C128]] step %[[C32]] iter_args
//       LEN:       vector.transfer_read {{.+}} : tensor<4x128xf32>, vector<32xf32>
//       LEN:       math.exp %{{.+}} : vector<32xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @exp(%x: tensor<4x128xf32>, %o: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf32>) outs(%o : tensor<4x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// -----

// A row max: one vector.multi_reduction per row. With max-vector-length=48
// the row is reduced 32 elements at a time into the hoisted row maximum.
// CHECK-LABEL: func.func @row_max
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x128xf32>, %[[M:.+]]: tensor<4xf32>)
//       CHECK:   scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %[[M]])
//       CHECK:     %[[ROW:.+]] = vector.transfer_read %[[X]][%[[I]], %{{.+}}], %{{.+}} : tensor<4x128xf32>, vector<128xf32>
//       CHECK:     %[[ROW2:.+]] = vector.broadcast %[[ROW]] : vector<128xf32> to vector<1x128xf32>
//       CHECK:     %[[ACC:.+]] = vector.transfer_read %[[OUT]][%[[I]]], %{{.+}} : tensor<4xf32>, vector<1xf32>
//       CHECK:     %[[MAX:.+]] = vector.multi_reduction <maximumf>, %[[ROW2]], %[[ACC]] [1] : vector<1x128xf32> to vector<1xf32>
//       CHECK:     vector.transfer_write %[[MAX]], %[[OUT]][%[[I]]] {{.+}} : vector<1xf32>, tensor<4xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
// LEN-LABEL: func.func @row_max
//   LEN-DAG:   %[[C32:.+]] = arith.constant 32 : index
//       LEN:   %[[INIT:.+]] = vector.transfer_read {{.+}} : tensor<4xf32>, vector<1xf32>
//       LEN:   scf.for {{.+}} step %[[C32]] iter_args(%{{.+}}, %[[ACC:.+]] = %[[INIT]])
//       LEN:     vector.transfer_read {{.+}} : tensor<4x128xf32>, vector<32xf32>
//       LEN:     vector.multi_reduction <maximumf>, %{{.+}}, %[[ACC]] [1] : vector<1x32xf32> to vector<1xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<4x128xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x128xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %b, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A transpose moves 16x16 blocks: block (I, J) of the result is the
// transposed block (J, I) of the source.
// CHECK-LABEL: func.func @transpose
//  CHECK-SAME:   (%[[X:.+]]: tensor<32x64xf32>, %[[O:.+]]: tensor<64x32xf32>)
//   CHECK-DAG:   %[[C16:.+]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C32:.+]] = arith.constant 32 : index
//   CHECK-DAG:   %[[C64:.+]] = arith.constant 64 : index
//       CHECK:   scf.for %[[I:.+]] = %{{.+}} to %[[C64]] step %[[C16]] iter_args(%[[OUT0:.+]] = %[[O]])
//       CHECK:     scf.for %[[J:.+]] = %{{.+}} to %[[C32]] step %[[C16]] iter_args(%[[OUT1:.+]] = %[[OUT0]])
//       CHECK:       %[[BLK:.+]] = vector.transfer_read %[[X]][%[[J]], %[[I]]], %{{.+}} {in_bounds = [true, true], permutation_map = #{{.+}}} : tensor<32x64xf32>, vector<16x16xf32>
//       CHECK:       vector.transfer_write %[[BLK]], %[[OUT1]][%[[I]], %[[J]]] {{.+}} : vector<16x16xf32>, tensor<64x32xf32>
//   CHECK-NOT:   linalg.transpose
//       CHECK:   return
func.func @transpose(%x: tensor<32x64xf32>, %o: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.transpose ins(%x : tensor<32x64xf32>) outs(%o : tensor<64x32xf32>) permutation = [1, 0]
  return %r : tensor<64x32xf32>
}

// -----

// A `?` number of rows (a partial tile, a `?` sequence, a decode step's one
// token per sequence): whole 8x32 blocks while at least 8 rows are left,
// then the rest (fewer than 8) as at most one block of 4 rows, one of 2 and
// then single rows, each static and without masks, with wider columns as
// the rows get fewer (4x64, 2x64, 1x64: the block's 64 columns), so that
// each weight row read serves as many FMAs as the block has rows. Every
// accumulator stays in registers.
// CANON-LABEL: func.func @dynamic_matmul
//       CANON:   %[[ROWS:.+]] = tensor.dim
//       CANON:   %[[FULL:.+]] = affine.apply #{{.+}}()[%[[ROWS]]]
//       CANON:   scf.for %{{.+}} = %{{.+}} to %[[FULL]] step %{{.+}} iter_args
//   CANON-NOT:     vector.mask
//   CANON-NOT:     create_mask
//       CANON:     vector.transfer_read {{.+}} : tensor<8x64xf32>, vector<8x32xf32>
//       CANON:     scf.for {{.+}} -> (vector<8x32xf32>)
//       CANON:       vector.contract {{.+}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       CANON:   scf.for %{{.+}} = %[[FULL]] to %[[ROWS]] step %c8
//       CANON:     scf.for {{.+}} step %c4
//   CANON-NOT:       vector.mask
//   CANON-NOT:       create_mask
//       CANON:       vector.transfer_read {{.+}} : tensor<4x64xf32>, vector<4x64xf32>
//       CANON:       scf.for {{.+}} -> (vector<4x64xf32>)
//       CANON:         vector.contract {{.+}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
//       CANON:     scf.for {{.+}} step %c4
//       CANON:       scf.for {{.+}} step %c2
//       CANON:         vector.transfer_read {{.+}} : tensor<2x64xf32>, vector<2x64xf32>
//       CANON:           vector.contract {{.+}} : vector<2x1xf32>, vector<1x64xf32> into vector<2x64xf32>
//       CANON:       scf.for {{.+}} step %c2
//       CANON:         scf.for {{.+}} step %c1
//   CANON-NOT:           vector.mask
//   CANON-NOT:           create_mask
//       CANON:           vector.transfer_read {{.+}} : tensor<1x64xf32>, vector<64xf32>
//       CANON:           scf.for {{.+}} -> (vector<64xf32>)
//       CANON:             vector.contract {{.+}} : vector<1xf32>, vector<1x64xf32> into vector<64xf32>
//       CANON:           vector.transfer_write {{.+}} : vector<64xf32>, tensor<1x64xf32>
//   CANON-NOT:   vector.mask
//       CANON:   return
// CHECK-LABEL: func.func @dynamic_matmul
//   CHECK-NOT:   linalg.matmul
func.func @dynamic_matmul(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>) outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

// A row maximum over a `?` number of keys: whole 256-wide vectors, then the
// peeled last one, whose lanes past the end are replaced by -inf (the
// maximum's identity) before an unmasked reduction.
// CANON-LABEL: func.func @dynamic_row_max
//   CANON-DAG:   %[[NEGINF:.+]] = arith.constant dense<0xFF800000> : vector<256xf32>
//       CANON:   scf.for
//       CANON:     vector.multi_reduction <maximumf>, %{{.+}}, %{{.+}} [1] : vector<1x256xf32> to vector<1xf32>
//       CANON:   scf.for
//       CANON:     %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<256xi1>
//       CANON:     %[[READ:.+]] = vector.transfer_read {{.+}}, %[[MASK]]
//       CANON:     %[[KEPT:.+]] = arith.select %[[MASK]], %[[READ]], %[[NEGINF]] : vector<256xi1>, vector<256xf32>
//   CANON-NOT:     vector.mask
//       CANON:     vector.multi_reduction <maximumf>
func.func @dynamic_row_max(%s: tensor<4x?xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x?xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A generic that reads an i1 mask stays scalar (a vector of i1 would read
// packed bits from a buffer of bytes).
// CHECK-LABEL: func.func @negative_bool_mask
//   CHECK-NOT:   vector.
//   CHECK-NOT:   scf.for
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}} : tensor<4x128xi1>, tensor<4x128xf32>)
//       CHECK:     arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
//   CHECK-NOT:   vector.
//       CHECK:   return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @negative_bool_mask(%m: tensor<4x128xi1>, %x: tensor<4x128xf32>, %o: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : tensor<4x128xi1>, tensor<4x128xf32>) outs(%o : tensor<4x128xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %s = arith.select %c, %a, %ninf : f32
    linalg.yield %s : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// -----

// A reduction whose accumulator is used twice (select(c, max(acc, x), acc))
// is not a plain combiner: it stays scalar.
// CHECK-LABEL: func.func @negative_select_reduction
//   CHECK-NOT:   vector.
//   CHECK-NOT:   scf.for
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "reduction"]
//       CHECK:   ^bb0(%{{.+}}: f32, %[[V:.+]]: f32, %[[ACC:.+]]: f32):
//       CHECK:     %[[MAX:.+]] = arith.maximumf %[[ACC]], %[[V]] : f32
//       CHECK:     %[[SEL:.+]] = arith.select %{{.+}}, %[[MAX]], %[[ACC]] : f32
//       CHECK:     linalg.yield %[[SEL]] : f32
//   CHECK-NOT:   vector.
//       CHECK:   return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @negative_select_reduction(%c: tensor<4x128xf32>, %x: tensor<4x128xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c, %x : tensor<4x128xf32>, tensor<4x128xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%f: f32, %a: f32, %acc: f32):
    %zero = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %f, %zero : f32
    %m = arith.maximumf %acc, %a : f32
    %s = arith.select %keep, %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An elementwise step of the decomposed path over [B, H, T, S] (4 loops)
// stays a scalar generic with its scalar exp (which mha-approximate-exp
// makes upstream's polynomial later).
// CHECK-LABEL: func.func @negative_four_loops
//   CHECK-NOT:   vector.
//   CHECK-NOT:   scf.for
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//  CHECK-SAME:     ins(%{{.+}} : tensor<1x2x4x8xf32>) outs(%{{.+}} : tensor<1x2x4x8xf32>)
//       CHECK:     math.exp %{{.+}} : f32
//   CHECK-NOT:   vector.
//       CHECK:   return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @negative_four_loops(%x: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

// A key block of `?` keys that is at most 128 long (a tile's
// affine.min(128, rest)): one masked 128-wide vector per row, no loop of
// 256-wide blocks.
// CANON-LABEL: func.func @bounded_dynamic_row
//   CANON-NOT:   vector<256xf32>
//   CANON-NOT:   scf.for
//       CANON:   %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<128xi1>
//       CANON:   vector.transfer_read {{.+}}, %[[MASK]] {{.+}} : tensor<?xf32>, vector<128xf32>
//       CANON:   math.exp %{{.+}} : vector<128xf32>
//       CANON:   vector.transfer_write {{.+}}, %[[MASK]] {{.+}} : vector<128xf32>, tensor<?xf32>
func.func @bounded_dynamic_row(%s: tensor<?xf32>, %o: tensor<?xf32>, %at: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?xf32>
  %size = affine.min affine_map<(d0)[s0] -> (128, s0 - d0)>(%at)[%n]
  %in = tensor.extract_slice %s[%at] [%size] [1] : tensor<?xf32> to tensor<?xf32>
  %out = tensor.extract_slice %o[%at] [%size] [1] : tensor<?xf32> to tensor<?xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%in : tensor<?xf32>) outs(%out : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %v = math.exp %x : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %r = tensor.insert_slice %e into %o[%at] [%size] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// 5 reduction steps, 2 per iteration: the loop does the first 4, the last
// one follows it, still before the block is written.
// UNROLL-LABEL: func.func @matmul_odd_steps
//   UNROLL-DAG:   %[[C2:.+]] = arith.constant 2 : index
//   UNROLL-DAG:   %[[C4:.+]] = arith.constant 4 : index
//       UNROLL:   %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C4]] step %[[C2]] iter_args(%{{.+}} = %{{.+}}) -> (vector<8x32xf32>)
//       UNROLL:     vector.contract
//       UNROLL:     vector.contract
//       UNROLL:     scf.yield
//       UNROLL:   %[[COL:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[C4]]]
//       UNROLL:   %[[LAST:.+]] = vector.contract {{.+}} %[[COL]], %{{.+}}, %[[SUM]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
//       UNROLL:   vector.transfer_write %[[LAST]]
func.func @matmul_odd_steps(%a: tensor<8x5xf32>, %b: tensor<5x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x5xf32>, tensor<5x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// 15 static rows with blocks of 6 (an AVX-512 target's): two whole blocks
// of 6 rows, then the rest as a static block of 3, all unmasked. A masked
// block of 6 would throw away half its FMAs.
// REST-LABEL: func.func @static_rest
//   REST-DAG:   %[[C12:.+]] = arith.constant 12 : index
//   REST-NOT:   vector.mask
//       REST:   scf.for %{{.+}} = %{{.+}} to %[[C12]]
//       REST:     vector.contract {{.+}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
//   REST-NOT:   vector.mask
//       REST:   vector.contract {{.+}} : vector<3x1xf32>, vector<1x64xf32> into vector<3x64xf32>
//   REST-NOT:   vector.mask
//       REST:   return
func.func @static_rest(%a: tensor<15x16xf32>, %b: tensor<16x64xf32>, %c: tensor<15x64xf32>) -> tensor<15x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<15x16xf32>, tensor<16x64xf32>) outs(%c : tensor<15x64xf32>) -> tensor<15x64xf32>
  return %r : tensor<15x64xf32>
}

// -----

// 9 static rows (T = 9) with blocks of 6 × 64: one block of all 9 rows and
// full columns, so that the right operand (a projection's weights) is read
// once, in whole rows of its panels; not a block of 6 rows and another of
// 3, and not 9 × 32 (two passes over half of each row, slower though its
// accumulators fit the registers). 11 rows are a block of 6 and one of 5,
// each 64 wide.
// REST-LABEL: func.func @rows_below_two_blocks
//   REST-NOT:   vector<6x
//   REST-NOT:   vector<3x
//       REST:   vector.contract {{.+}} : vector<9x1xf32>, vector<1x64xf32> into vector<9x64xf32>
//   REST-NOT:   vector<6x
//   REST-NOT:   vector<3x
//       REST:   return
// REST-LABEL: func.func @eleven_rows
//   REST-NOT:   vector<11x
//       REST:   vector.contract {{.+}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
//   REST-NOT:   vector<11x
//       REST:   vector.contract {{.+}} : vector<5x1xf32>, vector<1x64xf32> into vector<5x64xf32>
//   REST-NOT:   vector<11x
//       REST:   return
func.func @rows_below_two_blocks(%a: tensor<9x16xf32>, %b: tensor<16x64xf32>, %c: tensor<9x64xf32>) -> tensor<9x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<9x16xf32>, tensor<16x64xf32>) outs(%c : tensor<9x64xf32>) -> tensor<9x64xf32>
  return %r : tensor<9x64xf32>
}
func.func @eleven_rows(%a: tensor<11x16xf32>, %b: tensor<16x64xf32>, %c: tensor<11x64xf32>) -> tensor<11x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<11x16xf32>, tensor<16x64xf32>) outs(%c : tensor<11x64xf32>) -> tensor<11x64xf32>
  return %r : tensor<11x64xf32>
}

// -----

// 64 rows (a query tile) with blocks of 6: ten whole blocks and a static
// block of the 4 left, not sixteen blocks of the divisor 4, which would
// read each row of the right operand for 16 FMAs instead of 24; and the
// rest as one block, though the peeled loop that holds it counts `?` rows.
// REST-LABEL: func.func @many_blocks_and_rest
//   REST-DAG:   %[[C60:.+]] = arith.constant 60 : index
//   REST-DAG:   %[[C6:.+]] = arith.constant 6 : index
//   REST-NOT:   vector.mask
//       REST:   scf.for %{{.+}} = %{{.+}} to %[[C60]] step %[[C6]]
//       REST:     vector.contract {{.+}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
//   REST-NOT:   vector.mask
//   REST-NOT:   vector<3x
//       REST:   vector.contract {{.+}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
//   REST-NOT:   vector.contract
//       REST:   return
func.func @many_blocks_and_rest(%a: tensor<64x16xf32>, %b: tensor<16x128xf32>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x16xf32>, tensor<16x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// Columns in blocks of 64 and a peeled last block: 77 leave 13, whose block
// is a masked vector of 16 lanes (one register), not a 64-wide vector with
// 51 of its lanes masked off; 100 leave 36, which stay 64 wide (a mask of
// 48 lanes is no legal mask type for LLVM, and ran slower).
// The peeled block's reads and write are masked; its FMAs are not (their
// masked-off lanes are never written: UnmaskContractions.h).
// REST-LABEL: func.func @rest_columns
//       REST:   vector.contract {{.+}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
//       REST:   %[[M:.+]] = vector.constant_mask [6, 13] : vector<6x16xi1>
//       REST:   vector.transfer_read {{.+}}, %[[M]] {{.+}} : tensor<6x13xf32>, vector<6x16xf32>
//   REST-NOT:   vector.mask
//       REST:   vector.contract {{.+}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
//       REST:   vector.transfer_write {{.+}}, %[[M]] {{.+}} : vector<6x16xf32>, tensor<6x13xf32>
// REST-LABEL: func.func @rest_columns_36
//       REST:   %[[M36:.+]] = vector.constant_mask [6, 36] : vector<6x64xi1>
//   REST-NOT:   vector.mask
//       REST:   vector.contract {{.+}} into vector<6x64xf32>
//       REST:   vector.transfer_write {{.+}}, %[[M36]] {{.+}} : vector<6x64xf32>, tensor<6x36xf32>
func.func @rest_columns(%a: tensor<6x8xf32>, %b: tensor<8x77xf32>, %c: tensor<6x77xf32>) -> tensor<6x77xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<6x8xf32>, tensor<8x77xf32>) outs(%c : tensor<6x77xf32>) -> tensor<6x77xf32>
  return %r : tensor<6x77xf32>
}
func.func @rest_columns_36(%a: tensor<6x8xf32>, %b: tensor<8x100xf32>, %c: tensor<6x100xf32>) -> tensor<6x100xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<6x8xf32>, tensor<8x100xf32>) outs(%c : tensor<6x100xf32>) -> tensor<6x100xf32>
  return %r : tensor<6x100xf32>
}

// -----

// A row of 100 (a key block of T = 100) is 6 whole registers and a peeled
// block of 4, read as one register masked to 4 lanes whose other lanes
// become the reduction's identity: not one vector<100xf32>, which LLVM
// widens to 128 lanes, filling the 28 extra ones lane by lane.
// REST-LABEL: func.func @row_max_odd_length
//       REST:   scf.for
//       REST:     %[[WHOLE:.+]] = vector.transfer_read {{.+}} : tensor<1x96xf32>, vector<96xf32>
//       REST:     %[[MAX:.+]] = vector.multi_reduction <maximumf>, %{{.+}}, %{{.+}} [1] : vector<1x96xf32> to vector<1xf32>
//       REST:     %[[M:.+]] = vector.extract %{{.+}}[0] : vector<16xi1> from vector<1x16xi1>
//       REST:     %[[PART:.+]] = vector.transfer_read %{{.+}}, %{{.+}}, %[[M]] {{.+}} : tensor<1x4xf32>, vector<16xf32>
//       REST:     %[[KEPT:.+]] = arith.select %[[M]], %[[PART]], %{{.+}} : vector<16xi1>, vector<16xf32>
//       REST:     %[[KEPT2:.+]] = vector.broadcast %[[KEPT]] : vector<16xf32> to vector<1x16xf32>
//       REST:     vector.multi_reduction <maximumf>, %[[KEPT2]], %[[MAX]] [1] : vector<1x16xf32> to vector<1xf32>
//   REST-NOT:   vector<100xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max_odd_length(%x: tensor<4x100xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %b, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A block of fewer rows than 6 (the rest of a query tile) takes wider
// column blocks (columnLimit: 128 for 3 rows), and 100 columns are one
// masked block of a power of two of registers, 128 lanes: a mask of 112
// (7 registers) has no legal type in LLVM, whose code for it assembled the
// product lane by lane through the stack (T = 100 ran 5 % slower).
// REST-LABEL: func.func @rest_rows_wide
//       REST:   %[[M:.+]] = vector.constant_mask [3, 100] : vector<3x128xi1>
//       REST:   vector.transfer_read {{.+}}, %[[M]] {{.+}} : tensor<3x100xf32>, vector<3x128xf32>
//       REST:   vector.contract {{.+}} : vector<3x1xf32>, vector<1x128xf32> into vector<3x128xf32>
//       REST:   vector.transfer_write {{.+}}, %[[M]] {{.+}} : vector<3x128xf32>, tensor<3x100xf32>
//   REST-NOT:   vector<3x112xf32>
func.func @rest_rows_wide(%a: tensor<3x8xf32>, %b: tensor<8x100xf32>, %c: tensor<3x100xf32>) -> tensor<3x100xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x8xf32>, tensor<8x100xf32>) outs(%c : tensor<3x100xf32>) -> tensor<3x100xf32>
  return %r : tensor<3x100xf32>
}

// -----

// Accumulators that start from a fill (attention's zeroed block of scores)
// start from zeros in registers: the fill is fused into the register
// blocks' parallel loops, before their reduction loops, and no pass zeroes
// the whole buffer for the blocks to load the zeros back. Both the whole
// 6-row blocks and the peeled block of 4 rows.
// REST-LABEL: func.func @zeroed_accumulators
//   REST-DAG:   %[[Z4:.+]] = arith.constant dense<0.000000e+00> : vector<4x64xf32>
//   REST-DAG:   %[[Z6:.+]] = arith.constant dense<0.000000e+00> : vector<6x64xf32>
//   REST-NOT:   linalg.fill
//       REST:   scf.for %{{.+}} iter_args(%{{.+}} = %[[Z6]]) -> (vector<6x64xf32>)
//       REST:   scf.for %{{.+}} iter_args(%{{.+}} = %[[Z4]]) -> (vector<4x64xf32>)
//   REST-NOT:   linalg.fill
//       REST:   return
func.func @zeroed_accumulators(%a: tensor<64x16xf32>, %b: tensor<16x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x16xf32>, tensor<16x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// Accumulators that start from a bias broadcast to the rows (a projection's,
// as a generic) start from the bias read into registers, in each block:
// the read stays in the row loop (mha-hoist-accumulators moves no block of
// registers out of a loop), where moved out it would hold 24 registers
// through the blocks.
// REST-LABEL: func.func @bias_accumulators
//   REST-NOT:   linalg.generic
//       REST:   scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
//       REST:     %[[BIAS:.+]] = vector.transfer_read %{{.+}} {in_bounds = [true, true], permutation_map = #{{.+}}} : tensor<64xf32>, vector<6x64xf32>
//       REST:     scf.for %{{.+}} iter_args(%{{.+}} = %[[BIAS]]) -> (vector<6x64xf32>)
//   REST-NOT:   linalg.generic
//       REST:   return
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @bias_accumulators(%a: tensor<12x16xf32>, %b: tensor<16x64xf32>, %bias: tensor<64xf32>) -> tensor<12x64xf32> {
  %empty = tensor.empty() : tensor<12x64xf32>
  %c = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<64xf32>) outs(%empty : tensor<12x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<12x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<12x16xf32>, tensor<16x64xf32>) outs(%c : tensor<12x64xf32>) -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}
