// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s

// mha.sdpa_split, the state of every query of an mha.sdpa over one of its
// key splits, which mha-tile-attention makes when it splits the keys
// (docs/dialect.md): it prints and parses back, with and without its
// optional operands.

// CHECK-LABEL: func.func @split(
//       CHECK:   %{{.+}}, %{{.+}}, %{{.+}} = mha.sdpa_split %{{.+}}, %{{.+}}, %{{.+}} split(%{{.+}}) splits(4) key_block(64) scale(1.250000e-01) outs(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<2x8x1x64xf32>, tensor<2x2x4096x64xf32>, tensor<2x2x4096x64xf32>, index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
func.func @split(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x4096x64xf32>, %v: tensor<2x2x4096x64xf32>,
                 %p: index, %acc: tensor<2x8x1x64xf32>, %m: tensor<2x8x1xf32>,
                 %l: tensor<2x8x1xf32>) -> tensor<2x8x1x64xf32> {
  %acc_r, %m_r, %l_r = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(64)
      scale(0.125) outs(%acc, %m, %l)
      : (tensor<2x8x1x64xf32>, tensor<2x2x4096x64xf32>, tensor<2x2x4096x64xf32>,
         index, tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
      -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return %acc_r : tensor<2x8x1x64xf32>
}

// -----

// A mask, bottom-right causal, dynamic batch and lengths.
// CHECK-LABEL: func.func @split_masked(
//       CHECK:   mha.sdpa_split %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}}) split(%{{.+}}) splits(2) key_block(16) scale(5.000000e-01) causal causal_bottom_right outs(
func.func @split_masked(%q: tensor<?x4x?x8xf32>, %k: tensor<?x4x?x8xf32>, %v: tensor<?x4x?x6xf32>,
                        %mask: tensor<1x?x?xi1>, %p: index, %acc: tensor<?x4x?x6xf32>,
                        %m: tensor<?x4x?xf32>, %l: tensor<?x4x?xf32>) -> tensor<?x4x?x6xf32> {
  %acc_r, %m_r, %l_r = mha.sdpa_split %q, %k, %v mask(%mask) split(%p) splits(2)
      key_block(16) scale(0.5) causal causal_bottom_right outs(%acc, %m, %l)
      : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x6xf32>, tensor<1x?x?xi1>,
         index, tensor<?x4x?x6xf32>, tensor<?x4x?xf32>, tensor<?x4x?xf32>)
      -> (tensor<?x4x?x6xf32>, tensor<?x4x?xf32>, tensor<?x4x?xf32>)
  return %acc_r : tensor<?x4x?x6xf32>
}

// -----

// A bf16 cache read at each sequence's own positions.
// CHECK-LABEL: func.func @split_cache(
//       CHECK:   mha.sdpa_split %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}) split(%{{.+}}) splits(8) key_block(128) scale(1.250000e-01) causal outs(
func.func @split_cache(%q: tensor<4x8x1x64xf32>, %k: tensor<4x8x4096x64xbf16>, %v: tensor<4x8x4096x64xbf16>,
                       %len: tensor<4xi64>, %p: index, %acc: tensor<4x8x1x64xf32>,
                       %m: tensor<4x8x1xf32>, %l: tensor<4x8x1xf32>) -> tensor<4x8x1x64xf32> {
  %acc_r, %m_r, %l_r = mha.sdpa_split %q, %k, %v positions(%len) split(%p) splits(8)
      key_block(128) scale(0.125) causal outs(%acc, %m, %l)
      : (tensor<4x8x1x64xf32>, tensor<4x8x4096x64xbf16>, tensor<4x8x4096x64xbf16>,
         tensor<4xi64>, index, tensor<4x8x1x64xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>)
      -> (tensor<4x8x1x64xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>)
  return %acc_r : tensor<4x8x1x64xf32>
}
