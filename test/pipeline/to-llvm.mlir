// RUN: mha-opt %s -mha-to-llvm | FileCheck %s \
// RUN:   --implicit-check-not=mha. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=bufferization. --implicit-check-not=affine. \
// RUN:   --implicit-check-not=scf. --implicit-check-not=cf. \
// RUN:   --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:   --implicit-check-not=func.func \
// RUN:   --implicit-check-not=unrealized_conversion_cast

// The whole compiler: a layer with dynamic batch and sequence sizes, grouped
// -query heads, a mask and causal attention, down to the LLVM dialect only,
// with a C-callable wrapper that takes each memref descriptor by pointer and
// returns the result through the first pointer. Nothing of the other
// dialects is left (--implicit-check-not).

// CHECK-LABEL: llvm.func @mha(
//  CHECK-SAME:   -> !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>
//  CHECK-SAME:   attributes {llvm.emit_c_interface}
//       CHECK:   llvm.call @_mlir_memref_to_llvm_alloc
//       CHECK:   llvm.intr.fma
//       CHECK:   llvm.call @_mlir_memref_to_llvm_free
//       CHECK:   llvm.return

// CHECK-LABEL: llvm.func @_mlir_ciface_mha(
//  CHECK-SAME:   %[[OUT:[a-z0-9]+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
//       CHECK:   %[[RES:.+]] = llvm.call @mha(
//       CHECK:   llvm.store %[[RES]], %[[OUT]] : !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>, !llvm.ptr

func.func @mha(%x: tensor<?x?x16xf32>, %mask: tensor<?x?x?xi1>,
               %w_q: tensor<16x16xf32>, %w_k: tensor<16x8xf32>,
               %w_v: tensor<16x8xf32>, %w_o: tensor<16x16xf32>,
               %b_o: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %y = mha.attention %x mask(%mask) weights(%w_q, %w_k, %w_v, %w_o) bias_o(%b_o)
      heads(4) kv_heads(2) causal
      : (tensor<?x?x16xf32>, tensor<?x?x?xi1>, tensor<16x16xf32>, tensor<16x8xf32>,
         tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
