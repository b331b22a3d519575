// RUN: mha-opt %s --split-input-file --mha-vectorize | FileCheck %s
// RUN: mha-opt %s --split-input-file --mha-vectorize="rows=6 cols=64" --mha-hoist-accumulators --canonicalize --cse | FileCheck %s --check-prefix=MATMUL

// mha-vectorize's last step drops the mask of a contraction whose
// masked-off lanes no one reads (compiler/codegen/UnmaskContractions.h);
// these cases are vector code already, which the pass's first stage
// leaves alone.

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// A peeled block's reduction loop: the accumulator carried through the
// loop and written with the mask of its rows and columns. The FMAs need no
// mask; the reads and the write keep theirs.
// CHECK-LABEL: func.func @carried_then_written
//  CHECK-SAME:   (%{{.+}}: vector<6x1xf32>, %{{.+}}: vector<1x64xf32>, %{{.+}}: tensor<6x?xf32>, %[[N:.+]]: index)
//       CHECK:   %[[WRITE:.+]] = vector.create_mask %{{.+}}, %[[N]] : vector<6x64xi1>
//       CHECK:   scf.for
//   CHECK-NOT:     vector.mask
//       CHECK:     vector.contract
//       CHECK:   vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}], %[[WRITE]]
func.func @carried_then_written(%a: vector<6x1xf32>, %b: vector<1x64xf32>, %out: tensor<6x?xf32>, %n: index) -> tensor<6x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : vector<6x64xf32>
  %mask = vector.create_mask %c6, %n, %c1 : vector<6x64x1xi1>
  %write = vector.create_mask %c6, %n : vector<6x64xi1>
  %sum = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<6x64xf32>) {
    %next = vector.mask %mask { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32> } : vector<6x64x1xi1> -> vector<6x64xf32>
    scf.yield %next : vector<6x64xf32>
  }
  %r = vector.transfer_write %sum, %out[%c0, %c0], %write {in_bounds = [true, true]} : vector<6x64xf32>, tensor<6x?xf32>
  return %r : tensor<6x?xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// The write's mask keeps fewer lanes (3 of the 6 rows, a constant mask):
// still only lanes the contraction computes.
// CHECK-LABEL: func.func @narrower_write
//   CHECK-NOT:   vector.mask
//       CHECK:   vector.contract
//       CHECK:   vector.transfer_write
func.func @narrower_write(%a: vector<6x1xf32>, %b: vector<1x64xf32>, %acc: vector<6x64xf32>, %out: tensor<6x64xf32>) -> tensor<6x64xf32> {
  %c0 = arith.constant 0 : index
  %mask = vector.constant_mask [6, 36, 1] : vector<6x64x1xi1>
  %write = vector.constant_mask [3, 36] : vector<6x64xi1>
  %next = vector.mask %mask { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32> } : vector<6x64x1xi1> -> vector<6x64xf32>
  %r = vector.transfer_write %next, %out[%c0, %c0], %write {in_bounds = [true, true]} : vector<6x64xf32>, tensor<6x64xf32>
  return %r : tensor<6x64xf32>
}

// -----

#lhs1 = affine_map<(d0, d1) -> (d1)>
#rhs1 = affine_map<(d0, d1) -> (d1, d0)>
#acc1 = affine_map<(d0, d1) -> (d0)>

// A block of one row, as linalg::vectorize leaves it: its write's mask is
// row 0 of the block's 2-d mask (vector.extract).
// CHECK-LABEL: func.func @one_row
//   CHECK-NOT:   vector.mask
//       CHECK:   vector.contract
//       CHECK:   vector.transfer_write
func.func @one_row(%a: vector<1xf32>, %b: vector<1x64xf32>, %acc: vector<64xf32>, %out: tensor<64xf32>, %n: index) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %mask = vector.create_mask %n, %c1 : vector<64x1xi1>
  %block = vector.create_mask %c1, %n : vector<1x64xi1>
  %write = vector.extract %block[0] : vector<64xi1> from vector<1x64xi1>
  %next = vector.mask %mask { vector.contract {indexing_maps = [#lhs1, #rhs1, #acc1], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<1xf32>, vector<1x64xf32> into vector<64xf32> } : vector<64x1xi1> -> vector<64xf32>
  %r = vector.transfer_write %next, %out[%c0], %write {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// Each of these reads a lane that the mask keeps at its accumulator's
// value, or sums masked-off terms into kept lanes: the mask stays.
// - the reduction dimension is masked (%k of 4);
// - the result is also written without a mask;
// - the write keeps more columns (%wide) than the contraction (%n);
// - the result is a multiplicand of another op.
// CHECK-LABEL: func.func @masks_that_stay
//   CHECK-COUNT-4: vector.mask %{{.+}} { vector.contract
//   CHECK-NOT: vector.contract
//       CHECK: return
func.func @masks_that_stay(%a: vector<6x4xf32>, %b: vector<4x64xf32>, %acc: vector<6x64xf32>, %out: tensor<6x64xf32>, %n: index, %k: index, %wide: index) -> (tensor<6x64xf32>, tensor<6x64xf32>, tensor<6x64xf32>, vector<6x64xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %reduction = vector.create_mask %c6, %n, %k : vector<6x64x4xi1>
  %columns = vector.create_mask %c6, %n, %c4 : vector<6x64x4xi1>
  %write = vector.create_mask %c6, %n : vector<6x64xi1>
  %wider = vector.create_mask %c6, %wide : vector<6x64xi1>
  %0 = vector.mask %reduction { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x4xf32>, vector<4x64xf32> into vector<6x64xf32> } : vector<6x64x4xi1> -> vector<6x64xf32>
  %r0 = vector.transfer_write %0, %out[%c0, %c0], %write {in_bounds = [true, true]} : vector<6x64xf32>, tensor<6x64xf32>
  %1 = vector.mask %columns { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x4xf32>, vector<4x64xf32> into vector<6x64xf32> } : vector<6x64x4xi1> -> vector<6x64xf32>
  %r1 = vector.transfer_write %1, %r0[%c0, %c0] {in_bounds = [true, true]} : vector<6x64xf32>, tensor<6x64xf32>
  %2 = vector.mask %columns { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x4xf32>, vector<4x64xf32> into vector<6x64xf32> } : vector<6x64x4xi1> -> vector<6x64xf32>
  %r2 = vector.transfer_write %2, %r1[%c0, %c0], %wider {in_bounds = [true, true]} : vector<6x64xf32>, tensor<6x64xf32>
  %3 = vector.mask %columns { vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<6x4xf32>, vector<4x64xf32> into vector<6x64xf32> } : vector<6x64x4xi1> -> vector<6x64xf32>
  %scaled = arith.mulf %3, %acc : vector<6x64xf32>
  return %r0, %r1, %r2, %scaled : tensor<6x64xf32>, tensor<6x64xf32>, tensor<6x64xf32>, vector<6x64xf32>
}

// -----

// From linalg: a matmul whose `?` columns end in a peeled block of 64
// masked to the rest. That block's reads and write keep their masks, its
// FMAs have none.
// MATMUL-LABEL: func.func @peeled_columns
//       MATMUL:   scf.for
//   MATMUL-NOT:     vector.mask
//       MATMUL:   scf.for
//       MATMUL:     %[[ROW:.+]] = vector.create_mask %{{.+}} : vector<64xi1>
//       MATMUL:     %[[BLOCK:.+]] = vector.create_mask %{{.+}}, %{{.+}} : vector<6x64xi1>
//       MATMUL:     vector.transfer_read {{.+}}, %[[BLOCK]]
//       MATMUL:     scf.for
//       MATMUL:       vector.transfer_read {{.+}}, %[[ROW]]
//   MATMUL-NOT:       vector.mask
//       MATMUL:       vector.contract
//       MATMUL:     vector.transfer_write {{.+}}, %[[BLOCK]]
func.func @peeled_columns(%a: tensor<6x16xf32>, %b: tensor<16x?xf32>, %c: tensor<6x?xf32>) -> tensor<6x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<6x16xf32>, tensor<16x?xf32>) outs(%c : tensor<6x?xf32>) -> tensor<6x?xf32>
  return %r : tensor<6x?xf32>
}
