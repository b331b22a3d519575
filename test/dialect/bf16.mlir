// RUN: mha-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The element types of a bf16 layer: every op on bf16 values gives bf16,
// except the layer's last contraction (mha.output_project, or mha.attention
// as a whole), which may also give its output in f32, unrounded. No other
// mix is accepted.

// CHECK-LABEL: func.func @layer_f32_output
// CHECK: mha.attention {{.*}} -> tensor<1x4x8xf32>
func.func @layer_f32_output(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>, %b: tensor<8xbf16>) -> tensor<1x4x8xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) bias_q(%b) bias_k(%b) bias_v(%b) bias_o(%b) heads(2)
      : (tensor<1x4x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_bf16_output
// CHECK: mha.attention {{.*}} -> tensor<1x4x8xbf16>
func.func @layer_bf16_output(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>) -> tensor<1x4x8xbf16> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2)
      : (tensor<1x4x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xbf16>
  return %y : tensor<1x4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @steps
// CHECK: mha.project {{.*}} -> tensor<1x4x8xbf16>
// CHECK: mha.sdpa {{.*}} -> tensor<1x2x4x4xbf16>
// CHECK: mha.output_project {{.*}} -> tensor<1x4x8xf32>
func.func @steps(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>) -> tensor<1x4x8xf32> {
  %p = mha.project %x, %w : (tensor<1x4x8xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xbf16>
  %h = mha.split_heads %p heads(2) : tensor<1x4x8xbf16> -> tensor<1x2x4x4xbf16>
  %o = mha.sdpa %h, %h, %h : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  %y = mha.output_project %o, %w : (tensor<1x2x4x4xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @project_f32_result(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>) {
  // Q, K and V are stored in bf16: only the layer's output may be f32.
  // expected-error @+1 {{'mha.project' op expects result type 'tensor<1x4x8xbf16>', got 'tensor<1x4x8xf32>'}}
  %p = mha.project %x, %w : (tensor<1x4x8xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @sdpa_f32_result(%q: tensor<1x2x4x4xbf16>) {
  // expected-error @+1 {{'mha.sdpa' op expects result type 'tensor<1x2x4x4xbf16>', got 'tensor<1x2x4x4xf32>'}}
  %o = mha.sdpa %q, %q, %q : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @output_project_f16_result(%o: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>) {
  // expected-error @+1 {{'mha.output_project' op expects result type 'tensor<1x4x8xbf16>', got 'tensor<1x4x8xf16>'}}
  %y = mha.output_project %o, %w : (tensor<1x4x8xbf16>, tensor<8x8xbf16>) -> tensor<1x4x8xf16>
  return
}

// -----

func.func @output_project_f32_to_bf16(%o: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) {
  // f32 operands give f32: a bf16 output would be a rounding the layer never does.
  // expected-error @+1 {{'mha.output_project' op expects result type 'tensor<1x4x8xf32>', got 'tensor<1x4x8xbf16>'}}
  %y = mha.output_project %o, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xbf16>
  return
}

// -----

func.func @f16_layer_f32_output(%x: tensor<1x4x8xf16>, %w: tensor<8x8xf16>) {
  // expected-error @+1 {{'mha.attention' op expects result type 'tensor<1x4x8xf16>', got 'tensor<1x4x8xf32>'}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2)
      : (tensor<1x4x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @mixed_weights(%x: tensor<1x4x8xbf16>, %w: tensor<8x8xbf16>, %wo: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that all of {query, w_q, w_k, w_v, w_o} have same element type}}
  %y = mha.attention %x weights(%w, %w, %w, %wo) heads(2)
      : (tensor<1x4x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}
