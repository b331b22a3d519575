// RUN: mha-opt %s --mha-mask-bytes --split-input-file | FileCheck %s
// RUN: mha-opt %s --mha-mask-bytes --mha-vectorize --split-input-file | FileCheck %s --check-prefix=VEC

// A mask read only by generics, through slices: bytes up to the generic,
// which compares each with 0 before it selects; the function's type
// follows. Vectorized, the bytes are loaded as a vector of i8 and widened
// in registers (an i1 mask would have kept the op scalar).
// CHECK-LABEL: func.func @masked_max(
// CHECK-SAME: %[[MASK:[a-z0-9]+]]: tensor<4x16xi8>
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[MASK]]{{.*}} to tensor<2x16xi8>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[ROWS]] : tensor<2x16xf32>, tensor<2x16xi8>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[BYTE:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[OK:.*]] = arith.cmpi ne, %[[BYTE]], %{{.*}} : i8
// CHECK: arith.select %[[OK]], %[[S]]
// VEC-LABEL: func.func @masked_max(
// VEC: vector.transfer_read {{.*}} : tensor<4x16xi8>, vector<16xi8>
// VEC: arith.cmpi ne, {{.*}} : vector<16xi8>
// VEC: vector.multi_reduction <maximumf>
func.func @masked_max(%scores: tensor<2x16xf32>, %mask: tensor<4x16xi1>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %rows = tensor.extract_slice %mask[1, 0] [2, 16] [1, 1] : tensor<4x16xi1> to tensor<2x16xi1>
  %minf = arith.constant 0xFF800000 : f32
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%scores, %rows : tensor<2x16xf32>, tensor<2x16xi1>) outs(%init : tensor<2xf32>) {
  ^bb0(%s: f32, %ok: i1, %acc: f32):
    %v = arith.select %ok, %s, %minf : f32
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  return %max : tensor<2xf32>
}

// -----

// Another reader (here a copy, whose i8 result would be wrong) keeps the
// mask i1, and so does the argument of a function that is called: its
// caller passes i1.
// CHECK-LABEL: func.func @copied(
// CHECK-SAME: tensor<4xi1>
// CHECK: linalg.copy ins(%{{.*}} : tensor<4xi1>)
// CHECK-LABEL: func.func private @callee(
// CHECK-SAME: tensor<4xi1>
// CHECK-NOT: i8
func.func @copied(%mask: tensor<4xi1>, %out: tensor<4xi1>, %f: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf32>) {
  %copy = linalg.copy ins(%mask : tensor<4xi1>) outs(%out : tensor<4xi1>) -> tensor<4xi1>
  %r = call @callee(%mask, %f) : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
  return %copy, %r : tensor<4xi1>, tensor<4xf32>
}
func.func private @callee(%mask: tensor<4xi1>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%mask : tensor<4xi1>) outs(%out : tensor<4xf32>) {
  ^bb0(%ok: i1, %o: f32):
    %v = arith.select %ok, %o, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
