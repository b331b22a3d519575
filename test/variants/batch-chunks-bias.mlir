// RUN: mha-opt %s -split-input-file --mha-batch-chunks="chunk=1" | FileCheck %s

// A chunk of the batch takes the score bias's rows of its sequences, as it
// takes the mask's; the parameters of the QK-norm, the rotary embedding and
// the sinks are per head or feature and go whole to every chunk.
// CHECK-LABEL: func.func @bias_per_sequence
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<3x2x6x6xf32>, %[[S:[^:]+]]: tensor<2xf32>, %[[QN:[^:]+]]: tensor<16xf32>, %[[KN:[^:]+]]: tensor<16xf32>)
// CHECK: scf.for %[[I:.+]] = %c0 to %c3 step %c1
// CHECK-DAG: %[[X:.+]] = tensor.extract_slice %{{.+}}[%[[I]], 0, 0] [1, 6, 32] [1, 1, 1]
// CHECK-DAG: %[[B:.+]] = tensor.extract_slice %[[BIAS]][%[[I]], 0, 0, 0] [1, 2, 6, 6] [1, 1, 1, 1]
// CHECK: mha.attention %[[X]] weights({{.+}}) heads(2) causal bias(%[[B]]) sinks(%[[S]]) q_norm(%[[QN]]) k_norm(%[[KN]]) rope("half") : {{.+}} -> tensor<1x6x32xf32>
func.func @bias_per_sequence(%x: tensor<3x6x32xf32>, %w_q: tensor<32x32xf32>,
                             %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                             %w_o: tensor<32x32xf32>, %bias: tensor<3x2x6x6xf32>,
                             %s: tensor<2xf32>, %qn: tensor<16xf32>,
                             %kn: tensor<16xf32>) -> tensor<3x6x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) causal
      bias(%bias) sinks(%s) q_norm(%qn) k_norm(%kn) rope("half")
      : (tensor<3x6x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<3x2x6x6xf32>,
         tensor<2xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<3x6x32xf32>
  return %y : tensor<3x6x32xf32>
}

// -----

// A bias of one row is shared by the batch: every chunk reads it whole.
// CHECK-LABEL: func.func @bias_shared
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<1x1x6x6xf32>)
// CHECK: scf.for
// CHECK-NOT: tensor.extract_slice %[[BIAS]]
// CHECK: mha.attention {{.+}} bias(%[[BIAS]])
func.func @bias_shared(%x: tensor<3x6x32xf32>, %w_q: tensor<32x32xf32>,
                       %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                       %w_o: tensor<32x32xf32>, %bias: tensor<1x1x6x6xf32>)
    -> tensor<3x6x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) bias(%bias)
      : (tensor<3x6x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<1x1x6x6xf32>)
      -> tensor<3x6x32xf32>
  return %y : tensor<3x6x32xf32>
}

// -----

// A `?` batch of the bias: one row shared, or the chunk's rows, decided at
// run time as for the mask.
// CHECK-LABEL: func.func @bias_dynamic
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<?x2x6x6xf32>)
// CHECK: scf.for
// CHECK: %[[N:.+]] = tensor.dim %[[BIAS]], %{{.+}}
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[N]], %{{.+}}
// CHECK: %[[ROW:.+]] = arith.select %[[ONE]], %c0{{[_0-9]*}}, %{{.+}} : index
// CHECK: %[[B:.+]] = tensor.extract_slice %[[BIAS]][%[[ROW]], 0, 0, 0]
// CHECK: mha.attention {{.+}} bias(%[[B]])
func.func @bias_dynamic(%x: tensor<3x6x32xf32>, %w_q: tensor<32x32xf32>,
                        %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                        %w_o: tensor<32x32xf32>, %bias: tensor<?x2x6x6xf32>)
    -> tensor<3x6x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) bias(%bias)
      : (tensor<3x6x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<?x2x6x6xf32>)
      -> tensor<3x6x32xf32>
  return %y : tensor<3x6x32xf32>
}
