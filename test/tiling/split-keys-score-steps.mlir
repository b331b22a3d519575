// RUN: mha-opt %s -split-input-file \
// RUN:   -mha-strategy="query-tile=16 key-tile=8 key-splits=8" \
// RUN:   -mha-tile-attention \
// RUN:   | FileCheck %s --implicit-check-not=mha.sdpa

// Key splits of a decoding step with score steps: each mha.sdpa_split
// carries the softcap, the slopes and the window to its tiles' blocks (their
// states over the modified scores), the bias is sliced per tile, and the
// sink joins the merged denominator once: after the splits' sums are
// merged, before the normalization.

// CHECK-LABEL: func.func @split_keys_steps(
//  CHECK-SAME:   %[[SLOPES:[a-z0-9]+]]: tensor<2xf32>, %{{.+}}: tensor<2x1x1x64xf32>, %[[SINKS:[a-z0-9]+]]: tensor<2xf32>
//       CHECK:   %[[PARTS:.+]]:3 = scf.forall
//       CHECK:     tensor.extract %[[SLOPES]]
//       CHECK:     scf.for
//       CHECK:       math.tanh
//       CHECK:       arith.cmpi sgt
//       CHECK:     scf.forall.in_parallel
//       CHECK:   %[[LALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#2, %[[PARTS]]#1, %{{.+}} :
//       CHECK:   %[[AALL:.+]] = linalg.generic {{.*}} ins(%[[PARTS]]#0, %[[PARTS]]#1, %{{.+}} :
//       CHECK:   %[[DENOM:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[SINKS]] : tensor<2x2x1xf32>, tensor<2xf32>) outs(%[[LALL]] : tensor<2x2x1xf32>)
//       CHECK:     math.exp2
//       CHECK:   %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[DENOM]] : tensor<2x2x1xf32>) outs(%[[AALL]] : tensor<2x2x1x8xf32>)
//       CHECK:   return %[[OUT]]
func.func @split_keys_steps(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>, %slopes: tensor<2xf32>, %bias: tensor<2x1x1x64xf32>, %sinks: tensor<2xf32>) -> tensor<2x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) softcap(30.0) alibi(%slopes) bias(%bias) window(20) sinks(%sinks) : (tensor<2x2x1x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x1x1x64xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}
