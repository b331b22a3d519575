// RUN: mha-opt %s -split-input-file --mha-expand | FileCheck %s

// mha-expand puts the layer's QK-norm and then its rotary embedding between
// the heads' projections and attention, on Q and on K (not on V), with the
// layer's options and their defaults.

// CHECK-LABEL: func.func @qk_norm_and_rope
// CHECK-SAME: %[[WQN:[^:]+]]: tensor<16xf32>, %[[WKN:[^:]+]]: tensor<16xf32>)
// CHECK: %[[Q:.+]] = mha.split_heads %{{.+}} heads(4) : tensor<2x12x64xf32> -> tensor<2x4x12x16xf32>
// CHECK: %[[K:.+]] = mha.split_heads %{{.+}} heads(2) : tensor<2x12x32xf32> -> tensor<2x2x12x16xf32>
// CHECK: %[[V:.+]] = mha.split_heads %{{.+}} heads(2)
// CHECK: %[[QN:.+]] = mha.rms_norm %[[Q]], %[[WQN]] eps(9.9999999999999995E-7)
// CHECK: %[[KN:.+]] = mha.rms_norm %[[K]], %[[WKN]] eps(9.9999999999999995E-7)
// CHECK: %[[QR:.+]] = mha.rope %[[QN]] layout("half") rotary_dim(16) base(1.000000e+06) scale(1.000000e+00) mscale(1.000000e+00) : (tensor<2x4x12x16xf32>) -> tensor<2x4x12x16xf32>
// CHECK: %[[KR:.+]] = mha.rope %[[KN]] layout("half") rotary_dim(16) base(1.000000e+06) scale(1.000000e+00) mscale(1.000000e+00) : (tensor<2x2x12x16xf32>) -> tensor<2x2x12x16xf32>
// CHECK: mha.sdpa %[[QR]], %[[KR]], %[[V]] causal
// CHECK-NOT: mha.attention
func.func @qk_norm_and_rope(%x: tensor<2x12x32xf32>, %w_q: tensor<32x64xf32>,
                            %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                            %w_o: tensor<64x32xf32>, %q_norm: tensor<16xf32>,
                            %k_norm: tensor<16xf32>) -> tensor<2x12x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(2)
      causal q_norm(%q_norm) k_norm(%k_norm) rope("half")
      rope_base(1.000000e+06)
      : (tensor<2x12x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<64x32xf32>, tensor<16xf32>, tensor<16xf32>)
      -> tensor<2x12x32xf32>
  return %y : tensor<2x12x32xf32>
}

// -----

// Every rotary option, and the frequencies given; no QK-norm.
// CHECK-LABEL: func.func @rope_options
// CHECK-SAME: %[[F:[^:]+]]: tensor<4xf32>)
// CHECK-NOT: mha.rms_norm
// CHECK: %[[QR:.+]] = mha.rope %{{.+}} inv_freq(%[[F]]) layout("interleaved") rotary_dim(8) base(5.000000e+05) scale(4.000000e+00) mscale(1.500000e+00)
// CHECK: %[[KR:.+]] = mha.rope %{{.+}} inv_freq(%[[F]]) layout("interleaved") rotary_dim(8)
// CHECK: mha.sdpa %[[QR]], %[[KR]], %{{.+}} :
func.func @rope_options(%x: tensor<1x10x32xf32>, %w_q: tensor<32x32xf32>,
                        %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                        %w_o: tensor<32x32xf32>, %f: tensor<4xf32>)
    -> tensor<1x10x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      rope("interleaved") rotary_dim(8) rope_base(5.000000e+05)
      rope_scale(4.000000e+00) rope_mscale(1.500000e+00) rope_inv_freq(%f)
      : (tensor<1x10x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<4xf32>)
      -> tensor<1x10x32xf32>
  return %y : tensor<1x10x32xf32>
}

// -----

// QK-norm alone, with its own epsilon; no rotation.
// CHECK-LABEL: func.func @qk_norm_only
// CHECK: %[[QN:.+]] = mha.rms_norm %{{.+}}, %{{.+}} eps(1.000000e-05)
// CHECK: %[[KN:.+]] = mha.rms_norm %{{.+}}, %{{.+}} eps(1.000000e-05)
// CHECK-NOT: mha.rope
// CHECK: mha.sdpa %[[QN]], %[[KN]], %{{.+}} :
func.func @qk_norm_only(%x: tensor<1x10x32xf32>, %w_q: tensor<32x32xf32>,
                        %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                        %w_o: tensor<32x32xf32>, %qn: tensor<16xf32>,
                        %kn: tensor<16xf32>) -> tensor<1x10x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      q_norm(%qn) k_norm(%kn) qk_norm_eps(1.000000e-05)
      : (tensor<1x10x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<16xf32>, tensor<16xf32>)
      -> tensor<1x10x32xf32>
  return %y : tensor<1x10x32xf32>
}

// -----

// The score steps go to mha.sdpa, after the rotation.
// CHECK-LABEL: func.func @score_steps
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xf32>)
// CHECK: %[[QR:.+]] = mha.rope
// CHECK: %[[KR:.+]] = mha.rope
// CHECK: mha.sdpa %[[QR]], %[[KR]], %{{.+}} causal softcap(3.000000e+01) window(4) sinks(%[[S]]) :
func.func @score_steps(%x: tensor<1x10x32xf32>, %w_q: tensor<32x32xf32>,
                       %w_k: tensor<32x32xf32>, %w_v: tensor<32x32xf32>,
                       %w_o: tensor<32x32xf32>, %s: tensor<2xf32>)
    -> tensor<1x10x32xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) causal
      window(4) softcap(30.0) sinks(%s) rope("half")
      : (tensor<1x10x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xf32>)
      -> tensor<1x10x32xf32>
  return %y : tensor<1x10x32xf32>
}
