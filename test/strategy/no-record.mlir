// RUN: mha-opt %s -split-input-file -mha-tile-attention -verify-diagnostics
// RUN: %expect-exit 3 mha-opt %s -split-input-file -mha-tile-attention 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT: error: mha-tile-attention: no #mha.codegen_sizes record
// RUN: mha-opt %s -split-input-file -mha-strategy -mha-tile-attention | FileCheck %s --check-prefix=STRATEGY

// A pass that reads a size from the function's #mha.codegen_sizes finds it
// there or in its own option; with neither it stops with an error rather
// than take a size of its own.

// The fused attention pads Kᵀ's rows and cuts its last key blocks by the
// record (row_padding, tail_keys); after mha-strategy it tiles.
// STRATEGY-LABEL: func.func @attention_without_record
// STRATEGY: scf.forall
// expected-error @+1 {{mha-tile-attention: no #mha.codegen_sizes record with row_padding and tail_keys: run mha-strategy first}}
func.func @attention_without_record(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>
  return %o : tensor<1x2x64x32xf32>
}
