// RUN: mha-opt %s -split-input-file | mha-opt -split-input-file | FileCheck %s

// The served models' attention: the score steps of mha.sdpa (softcap,
// ALiBi, bias, window, sinks), given in any order and printed in the order
// they apply, mha.rms_norm and mha.rope, and the layer's options.

// CHECK-LABEL: func.func @score_steps(
//       CHECK:   mha.sdpa %{{.+}}, %{{.+}}, %{{.+}} causal scale(5.000000e-01) softcap(5.000000e+01) alibi(%{{.+}}) bias(%{{.+}}) window(8) sinks(%{{.+}}) :
//       CHECK:   mha.attention_weights %{{.+}}, %{{.+}} causal softcap(3.000000e+01) window(2) sinks(%{{.+}}) :
func.func @score_steps(%q: tensor<2x4x6x8xf32>, %k: tensor<2x2x6x8xf32>, %v: tensor<2x2x6x8xf32>, %slopes: tensor<4xf32>, %bias: tensor<1x4x1x6xf32>, %sinks: tensor<4xf32>) -> (tensor<2x4x6x8xf32>, tensor<2x4x6x6xf32>) {
  %o = mha.sdpa %q, %k, %v sinks(%sinks) window(8) bias(%bias) causal alibi(%slopes) softcap(50.0) scale(0.5) : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<1x4x1x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x8xf32>
  %p = mha.attention_weights %q, %k window(2) causal softcap(30.0) sinks(%sinks) : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  return %o, %p : tensor<2x4x6x8xf32>, tensor<2x4x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @rope_and_norm(
//       CHECK:   mha.rms_norm %{{.+}}, %{{.+}} eps(9.9999999999999995E-7) :
//       CHECK:   mha.rope %{{.+}} offsets(%{{.+}}) inv_freq(%{{.+}}) layout("interleaved") rotary_dim(4) base(5.000000e+05) scale(2.000000e+00) mscale(1.250000e+00) :
func.func @rope_and_norm(%q: tensor<?x4x?x8xf32>, %w: tensor<8xf32>, %len: tensor<?xi64>, %f: tensor<2xf32>) -> tensor<?x4x?x8xf32> {
  %n = mha.rms_norm %q, %w eps(1.0e-6) : (tensor<?x4x?x8xf32>, tensor<8xf32>) -> tensor<?x4x?x8xf32>
  %r = mha.rope %n offsets(%len) inv_freq(%f) layout("interleaved") rotary_dim(4) base(500000.0) scale(2.0) mscale(1.25) : (tensor<?x4x?x8xf32>, tensor<?xi64>, tensor<2xf32>) -> tensor<?x4x?x8xf32>
  return %r : tensor<?x4x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer(
//       CHECK:   mha.attention %{{.+}} weights(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) heads(4) kv_heads(2) causal window(4) sinks(%{{.+}}) q_norm(%{{.+}}) k_norm(%{{.+}}) qk_norm_eps(9.9999999999999995E-7) rope("half") rotary_dim(4) rope_base(1.000000e+06) rope_inv_freq(%{{.+}}) :
func.func @layer(%x: tensor<1x6x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x8xf32>, %wv: tensor<16x8xf32>, %wo: tensor<16x16xf32>, %sinks: tensor<4xf32>, %qn: tensor<4xf32>, %kn: tensor<4xf32>, %f: tensor<2xf32>) -> tensor<1x6x16xf32> {
  %y = mha.attention %x weights(%wq, %wk, %wv, %wo) heads(4) kv_heads(2) causal window(4) sinks(%sinks) q_norm(%qn) k_norm(%kn) qk_norm_eps(1.0e-6) rope("half") rotary_dim(4) rope_base(1.0e6) rope_inv_freq(%f) : (tensor<1x6x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x6x16xf32>
  return %y : tensor<1x6x16xf32>
}
