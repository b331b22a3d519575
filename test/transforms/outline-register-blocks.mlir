// RUN: mha-opt %s -split-input-file -mha-outline-register-blocks | FileCheck %s

// In a function with a `?` size, a register block's reduction of 768 / 2
// iterations of 2 contractions goes into a function of its own, with the
// read that starts its accumulators (the bias) and the write of its result;
// the constants it uses are cloned in, and the call takes the buffers and
// indices. The function is internal and never inlined.
// CHECK-LABEL: func.func private @projection_register_block0(
//  CHECK-SAME:     attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
//   CHECK-DAG:   arith.constant 768 : index
//   CHECK-DAG:   arith.constant 0.000000e+00 : f32
//       CHECK:   %[[BIAS:.+]] = vector.transfer_read
//       CHECK:   %[[SUM:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[BIAS]]) -> (vector<2x64xf32>)
//  CHECK-NEXT:     vector.transfer_read
//       CHECK:     vector.contract
//       CHECK:     vector.contract
//       CHECK:   vector.transfer_write %[[SUM]]
//  CHECK-NEXT:   return
// CHECK-LABEL: func.func @projection(
//  CHECK-SAME:     %[[X:[^:]+]]: memref<?x768xf32>, %[[W:[^:]+]]: memref<768x64xf32>, %[[B:[^:]+]]: memref<64xf32>, %[[Y:[^:]+]]: memref<?x64xf32>, %[[ROW:[^:]+]]: index)
//   CHECK-NOT:   scf.for
//       CHECK:   call @projection_register_block0(%[[B]], %[[X]], %[[ROW]], %[[W]], %[[Y]]) : (memref<64xf32>, memref<?x768xf32>, index, memref<768x64xf32>, memref<?x64xf32>) -> ()
//  CHECK-NEXT:   return
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#acc = affine_map<(i, j, k) -> (i, j)>
func.func @projection(%x: memref<?x768xf32>, %w: memref<768x64xf32>,
                      %b: memref<64xf32>, %y: memref<?x64xf32>, %row: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c768 = arith.constant 768 : index
  %pad = arith.constant 0.0 : f32
  %init = vector.transfer_read %b[%c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, d0)>} : memref<64xf32>, vector<2x64xf32>
  %sum = scf.for %k = %c0 to %c768 step %c2 iter_args(%acc = %init) -> (vector<2x64xf32>) {
    %a0 = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true, true]} : memref<?x768xf32>, vector<2x1xf32>
    %w0 = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true, true]} : memref<768x64xf32>, vector<1x64xf32>
    %s0 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a0, %w0, %acc : vector<2x1xf32>, vector<1x64xf32> into vector<2x64xf32>
    %k1 = arith.addi %k, %c1 : index
    %a1 = vector.transfer_read %x[%row, %k1], %pad {in_bounds = [true, true]} : memref<?x768xf32>, vector<2x1xf32>
    %w1 = vector.transfer_read %w[%k1, %c0], %pad {in_bounds = [true, true]} : memref<768x64xf32>, vector<1x64xf32>
    %s1 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a1, %w1, %s0 : vector<2x1xf32>, vector<1x64xf32> into vector<2x64xf32>
    scf.yield %s1 : vector<2x64xf32>
  }
  vector.transfer_write %sum, %y[%row, %c0] {in_bounds = [true, true]} : vector<2x64xf32>, memref<?x64xf32>
  return
}

// -----

// A reduction over heads of 64 steps each (the output projection: 12 x 32
// iterations) is outlined whole, from its outer loop. Its start is used twice,
// so it stays and is passed; its result is stored after a write to another
// buffer, which the write may not pass: the call returns it.
// CHECK-LABEL: func.func private @over_heads_register_block0(
//  CHECK-SAME:     -> vector<1x64xf32>
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       vector.contract
//   CHECK-NOT:   vector.transfer_write
//       CHECK:   return %{{.+}} : vector<1x64xf32>
// CHECK-LABEL: func.func @over_heads(
//       CHECK:   %[[INIT:.+]] = vector.transfer_read
//       CHECK:   %[[SUM:.+]] = call @over_heads_register_block0({{.+}}, %[[INIT]]) : ({{.+}}) -> vector<1x64xf32>
//       CHECK:   memref.store
//       CHECK:   vector.transfer_write %[[SUM]]
//       CHECK:   vector.transfer_write %[[INIT]]
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#acc = affine_map<(i, j, k) -> (i, j)>
func.func @over_heads(%a: memref<12x?x64xf32>, %w: memref<12x64x64xf32>,
                      %y: memref<?x64xf32>, %log: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c12 = arith.constant 12 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %init = vector.transfer_read %y[%c0, %c0], %pad {in_bounds = [true, true]} : memref<?x64xf32>, vector<1x64xf32>
  %sum = scf.for %h = %c0 to %c12 step %c1 iter_args(%outer = %init) -> (vector<1x64xf32>) {
    %head = scf.for %k = %c0 to %c64 step %c2 iter_args(%acc = %outer) -> (vector<1x64xf32>) {
      %a0 = vector.transfer_read %a[%h, %c0, %k], %pad {in_bounds = [true, true]} : memref<12x?x64xf32>, vector<1x1xf32>
      %w0 = vector.transfer_read %w[%h, %k, %c0], %pad {in_bounds = [true, true]} : memref<12x64x64xf32>, vector<1x64xf32>
      %s0 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a0, %w0, %acc : vector<1x1xf32>, vector<1x64xf32> into vector<1x64xf32>
      scf.yield %s0 : vector<1x64xf32>
    }
    scf.yield %head : vector<1x64xf32>
  }
  memref.store %pad, %log[%c0] : memref<1xf32>
  vector.transfer_write %sum, %y[%c0, %c0] {in_bounds = [true, true]} : vector<1x64xf32>, memref<?x64xf32>
  vector.transfer_write %init, %y[%c1, %c0] {in_bounds = [true, true]} : vector<1x64xf32>, memref<?x64xf32>
  return
}

// -----

// Left inline: attention's short blocks (64 / 2 iterations of one
// contraction, fewer than 256 per call), a loop with a `?` trip count, and
// every loop of a function whose sizes are all static.
// CHECK-LABEL: func.func @short_block(
//       CHECK:   scf.for
//       CHECK:   scf.for
//   CHECK-NOT:   call
// CHECK-LABEL: func.func @static_sizes(
//       CHECK:   scf.for
//   CHECK-NOT:   call
//   CHECK-NOT: func.func private
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#acc = affine_map<(i, j, k) -> (i, j)>
func.func @short_block(%q: memref<?x64xf32>, %kt: memref<64x128xf32>,
                       %s: memref<?x128xf32>, %n: index) -> vector<1x128xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x128xf32>
  %sum = scf.for %k = %c0 to %c64 step %c2 iter_args(%acc = %zero) -> (vector<1x128xf32>) {
    %a = vector.transfer_read %q[%c0, %k], %pad {in_bounds = [true, true]} : memref<?x64xf32>, vector<1x1xf32>
    %b = vector.transfer_read %kt[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x128xf32>, vector<1x128xf32>
    %c = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<1x1xf32>, vector<1x128xf32> into vector<1x128xf32>
    scf.yield %c : vector<1x128xf32>
  }
  %dyn = scf.for %k = %c0 to %n step %c2 iter_args(%acc = %sum) -> (vector<1x128xf32>) {
    %a = vector.transfer_read %q[%c0, %k], %pad {in_bounds = [true, true]} : memref<?x64xf32>, vector<1x1xf32>
    %b = vector.transfer_read %kt[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x128xf32>, vector<1x128xf32>
    %c = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<1x1xf32>, vector<1x128xf32> into vector<1x128xf32>
    scf.yield %c : vector<1x128xf32>
  }
  return %dyn : vector<1x128xf32>
}

func.func @static_sizes(%x: memref<8x768xf32>, %w: memref<768x64xf32>)
    -> vector<1x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c768 = arith.constant 768 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x64xf32>
  %sum = scf.for %k = %c0 to %c768 step %c1 iter_args(%acc = %zero) -> (vector<1x64xf32>) {
    %a = vector.transfer_read %x[%c0, %k], %pad {in_bounds = [true, true]} : memref<8x768xf32>, vector<1x1xf32>
    %b = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true, true]} : memref<768x64xf32>, vector<1x64xf32>
    %c = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<1x1xf32>, vector<1x64xf32> into vector<1x64xf32>
    scf.yield %c : vector<1x64xf32>
  }
  return %sum : vector<1x64xf32>
}
