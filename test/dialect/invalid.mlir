// RUN: mha-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the mha verifiers (and a few of the ODS type
// constraints). Each case is the smallest change to a valid op that
// triggers it; the message says what was expected and what was found.

// ODS: activations and weights are float tensors.
func.func @project_input_i32(%x: tensor<4x8xi32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.project' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<4x8xi32>'}}
  %p = mha.project %x, %w : (tensor<4x8xi32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// ODS: unranked tensors are rejected.
func.func @project_unranked(%x: tensor<4x8xf32>, %w: tensor<*xf32>) {
  // expected-error @+1 {{'mha.project' op operand #1 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<*xf32>'}}
  %p = mha.project %x, %w : (tensor<4x8xf32>, tensor<*xf32>) -> tensor<4x8xf32>
  return
}

// -----

// type($input) in the custom form only parses ranked tensors.
func.func @concat_heads_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %o = mha.concat_heads %x : tensor<*xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @project_weight_element_type(%x: tensor<4x8xf32>, %w: tensor<8x8xf16>) {
  // expected-error @+1 {{'mha.project' op failed to verify that all of {input, weight} have same element type}}
  %p = mha.project %x, %w : (tensor<4x8xf32>, tensor<8x8xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @project_bias_element_type(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{'mha.project' op failed to verify that bias (where present) has the element type of input}}
  %p = mha.project %x, %w bias(%b) : (tensor<4x8xf16>, tensor<8x8xf16>, tensor<8xbf16>) -> tensor<4x8xf16>
  return
}

// -----

func.func @project_dynamic_weight(%x: tensor<4x8xf32>, %w: tensor<?x8xf32>) {
  // expected-error @+1 {{'mha.project' op operand #1 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?x8xf32>'}}
  %p = mha.project %x, %w : (tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @project_rank0_input(%x: tensor<f32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.project' op expects input to have rank at least 1 ([..., D_in]), got rank 0}}
  %p = mha.project %x, %w : (tensor<f32>, tensor<8x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @project_dynamic_input_width(%x: tensor<1x4x?xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.project' op expects a static input width (dimension 2 of input), got ?}}
  %p = mha.project %x, %w : (tensor<1x4x?xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @project_weight_rows(%x: tensor<1x4x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{'mha.project' op expects weight rows (D_in) to be 8, got 16}}
  %p = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @project_bias_rank(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<1x6xf32>) {
  // expected-error @+1 {{'mha.project' op operand #2 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x6xf32>'}}
  %p = mha.project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x6xf32>, tensor<1x6xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @project_dynamic_bias(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<?xf32>) {
  // expected-error @+1 {{'mha.project' op operand #2 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %p = mha.project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x6xf32>, tensor<?xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @project_bias_size(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'mha.project' op expects bias size to be 6, got 8}}
  %p = mha.project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x6xf32>, tensor<8xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @project_weight_rank(%x: tensor<1x2x4x4xf32>, %w: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects weight to have rank 2 ([D_in, D_out]) or 3 ([H, w, d]), got rank 4}}
  %p = mha.project %x, %w : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Per head: the input is the heads, or the unsplit [B, T, H*w].
func.func @project_per_head_input_rank(%x: tensor<4x8xf32>, %w: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects input to have rank 3 ([B, T, H*w]) or 4 ([B, H, T, w]) with per-head weights, got rank 2}}
  %p = mha.project %x, %w : (tensor<4x8xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

// Per head, unsplit input: its width must be the heads' slices side by side.
func.func @project_per_head_unsplit_width(%x: tensor<1x4x6xf32>, %w: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects input width (H*w) to be 8, got 6}}
  %p = mha.project %x, %w : (tensor<1x4x6xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @project_per_head_unsplit_dynamic_width(%x: tensor<1x4x?xf32>, %w: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects a static input width (dimension 2 of input), got ?}}
  %p = mha.project %x, %w : (tensor<1x4x?xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// heads(H) belongs to the shared form: per-head weights carry their heads.
func.func @project_per_head_with_heads(%x: tensor<1x2x4x4xf32>, %w: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects no num_heads with per-head weights (the weight's leading dimension is the head count)}}
  %p = mha.project %x, %w heads(2) : (tensor<1x2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Writing heads: the input is [B, T, D_in].
func.func @project_heads_input_rank(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.project' op expects input to have rank 3 ([B, T, D_in]), got rank 2}}
  %p = mha.project %x, %w heads(2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x2x4xf32>
  return
}

// -----

func.func @project_heads_zero(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.project' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %p = mha.project %x, %w heads(0) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x0x4x8xf32>
  return
}

// -----

func.func @project_heads_not_dividing(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.project' op expects num_heads (4) to divide the weight columns (6)}}
  %p = mha.project %x, %w heads(4) : (tensor<1x4x8xf32>, tensor<8x6xf32>) -> tensor<1x4x4x1xf32>
  return
}

// -----

func.func @project_heads_result_shape(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.project' op expects result type 'tensor<1x2x4x3xf32>', got 'tensor<1x4x6xf32>'}}
  %p = mha.project %x, %w heads(2) : (tensor<1x4x8xf32>, tensor<8x6xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @project_per_head_dynamic_slice(%x: tensor<1x2x4x?xf32>, %w: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects a static slice width (dimension 3 of input), got ?}}
  %p = mha.project %x, %w : (tensor<1x2x4x?xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @project_per_head_heads(%x: tensor<1x2x4x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects weight heads to be 2, got 3}}
  %p = mha.project %x, %w : (tensor<1x2x4x4xf32>, tensor<3x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @project_per_head_rows(%x: tensor<1x2x4x4xf32>, %w: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'mha.project' op expects weight rows (slice width) to be 4, got 8}}
  %p = mha.project %x, %w : (tensor<1x2x4x4xf32>, tensor<2x8x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Per head: the bias is laid out head after head, [H*d].
func.func @project_per_head_bias_size(%x: tensor<1x2x4x4xf32>, %w: tensor<2x4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'mha.project' op expects bias size to be 6, got 3}}
  %p = mha.project %x, %w bias(%b) : (tensor<1x2x4x4xf32>, tensor<2x4x3xf32>, tensor<3xf32>) -> tensor<1x2x4x3xf32>
  return
}

// -----

func.func @project_result_shape(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.project' op expects result type 'tensor<1x4x6xf32>', got 'tensor<1x4x8xf32>'}}
  %p = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<8x6xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @project_result_element_type(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.project' op expects result type 'tensor<1x4x6xf32>', got 'tensor<1x4x6xf16>'}}
  %p = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<8x6xf32>) -> tensor<1x4x6xf16>
  return
}

// -----

// ODS: num_heads is required (generic form).
func.func @split_heads_missing_num_heads(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.split_heads' op requires attribute 'num_heads'}}
  %o = "mha.split_heads"(%x) : (tensor<1x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @split_heads_memref_result(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'memref<1x2x4x4xf32>'}}
  %o = mha.split_heads %x heads(2) : tensor<1x4x8xf32> -> memref<1x2x4x4xf32>
  return
}

// -----

func.func @split_heads_input_rank(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'mha.split_heads' op operand #0 must be 3D tensor [B, T, D] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x2x4x4xf32>'}}
  %o = mha.split_heads %x heads(2) : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @split_heads_dynamic_width(%x: tensor<1x4x?xf32>) {
  // expected-error @+1 {{'mha.split_heads' op expects a static width (dimension 2 of input), got ?}}
  %o = mha.split_heads %x heads(2) : tensor<1x4x?xf32> -> tensor<1x2x4x?xf32>
  return
}

// -----

func.func @split_heads_zero_heads(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.split_heads' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %o = mha.split_heads %x heads(0) : tensor<1x4x8xf32> -> tensor<1x0x4x8xf32>
  return
}

// -----

func.func @split_heads_negative_heads(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.split_heads' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %o = mha.split_heads %x heads(-2) : tensor<1x4x8xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @split_heads_not_dividing(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.split_heads' op expects num_heads (3) to divide the width (8)}}
  %o = mha.split_heads %x heads(3) : tensor<1x4x8xf32> -> tensor<1x3x4x2xf32>
  return
}

// -----

func.func @split_heads_result(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.split_heads' op expects result type 'tensor<1x2x4x4xf32>', got 'tensor<1x4x4x2xf32>'}}
  %o = mha.split_heads %x heads(2) : tensor<1x4x8xf32> -> tensor<1x4x4x2xf32>
  return
}

// -----

// ODS: the mask is a tensor of i1.
func.func @sdpa_mask_element_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x4x4xf32>) {
  // expected-error @+1 {{'mha.sdpa' op operand #3 must be 3D tensor [B or 1, T, S] of 1-bit signless integer values, but got 'tensor<1x4x4xf32>'}}
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4x4xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// ODS: scale is an f32 attribute.
func.func @sdpa_scale_f64(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = "mha.sdpa"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, scale = 5.000000e-01 : f64}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_key_element_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op failed to verify that all of {query, key, value} have same element type}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_value_element_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xbf16>) {
  // expected-error @+1 {{'mha.sdpa' op failed to verify that all of {query, key, value} have same element type}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_query_rank(%q: tensor<1x4x16xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op operand #0 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x16xf32>'}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x4x16xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_key_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<1x4x16xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op operand #1 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x16xf32>'}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x4x16xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_value_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8x1xf32>) {
  // expected-error @+1 {{'mha.sdpa' op operand #2 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x2x4x8x1xf32>'}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8x1xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_query_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static head count (dimension 1 of query), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x?x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_query_head_dim(%q: tensor<1x2x4x?xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static head dimension (dimension 3 of query), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x?xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_key_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x?x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static head count (dimension 1 of key), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_key_head_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x?xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static head dimension (dimension 3 of key), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x?xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_value_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x?x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static head count (dimension 1 of value), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x?x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_dynamic_value_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x?xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects a static value dimension (dimension 3 of value), got ?}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x?xf32>) -> tensor<1x2x4x?xf32>
  return
}

// -----

func.func @sdpa_key_batch(%q: tensor<1x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects key batch to be 1, got 2}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_value_batch(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects value batch to be 1, got 2}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// With a dynamic query batch, key and value batches still have to agree.
func.func @sdpa_value_batch_dynamic_query(%q: tensor<?x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<3x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects value batch to be 2, got 3}}
  %o = mha.sdpa %q, %k, %v : (tensor<?x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<3x2x4x8xf32>) -> tensor<?x2x4x8xf32>
  return
}

// -----

func.func @sdpa_key_head_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects key head dimension (dk) to be 8, got 4}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_value_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects value heads (Hkv) to be 2, got 1}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_value_length(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x6x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects value length (S) to be 4, got 6}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_zero_kv_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x0x4x8xf32>, %v: tensor<1x0x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects the key/value head count to be positive, got 0}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x0x4x8xf32>, tensor<1x0x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// Grouped-query: H must be a multiple of Hkv.
func.func @sdpa_gqa_not_multiple(%q: tensor<1x8x4x8xf32>, %k: tensor<1x3x4x8xf32>, %v: tensor<1x3x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects the key/value head count (3) to divide the query head count (8)}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x8x4x8xf32>, tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32>) -> tensor<1x8x4x8xf32>
  return
}

// -----

func.func @sdpa_mask_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{'mha.sdpa' op operand #3 must be 3D tensor [B or 1, T, S] of 1-bit signless integer values, but got 'tensor<4x4xi1>'}}
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xi1>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_mask_batch(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<3x4x4xi1>) {
  // expected-error @+1 {{'mha.sdpa' op expects mask batch (B or 1) to be 2, got 3}}
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<3x4x4xi1>) -> tensor<2x2x4x8xf32>
  return
}

// -----

func.func @sdpa_mask_query_length(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %m: tensor<1x5x6xi1>) {
  // expected-error @+1 {{'mha.sdpa' op expects mask query length (T) to be 4, got 5}}
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x5x6xi1>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// S != T: the mask is [B, T, S], not [B, S, T].
func.func @sdpa_mask_key_length(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %m: tensor<1x4x4xi1>) {
  // expected-error @+1 {{'mha.sdpa' op expects mask key length (S) to be 6, got 4}}
  %o = mha.sdpa %q, %k, %v mask(%m) : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x4x4xi1>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_scale_zero(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects scale to be positive and finite, got 0.000000e+00}}
  %o = mha.sdpa %q, %k, %v scale(0.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_scale_negative(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects scale to be positive and finite, got -1.250000e-01}}
  %o = mha.sdpa %q, %k, %v scale(-0.125) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_scale_infinite(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects scale to be positive and finite, got INF}}
  %o = mha.sdpa %q, %k, %v scale(0x7F800000) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// The result takes dv from the value, not dk from the query.
func.func @sdpa_result_value_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects result type 'tensor<1x2x4x16xf32>', got 'tensor<1x2x4x8xf32>'}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @sdpa_result_element_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.sdpa' op expects result type 'tensor<1x2x4x8xf32>', got 'tensor<1x2x4x8xf16>'}}
  %o = mha.sdpa %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf16>
  return
}

// -----

func.func @concat_heads_input_rank(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'mha.concat_heads' op operand #0 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x8xf32>'}}
  %o = mha.concat_heads %x : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @concat_heads_dynamic_heads(%x: tensor<1x?x4x8xf32>) {
  // expected-error @+1 {{'mha.concat_heads' op expects a static head count (dimension 1 of input), got ?}}
  %o = mha.concat_heads %x : tensor<1x?x4x8xf32> -> tensor<1x4x?xf32>
  return
}

// -----

func.func @concat_heads_dynamic_head_dim(%x: tensor<1x2x4x?xf32>) {
  // expected-error @+1 {{'mha.concat_heads' op expects a static head dimension (dimension 3 of input), got ?}}
  %o = mha.concat_heads %x : tensor<1x2x4x?xf32> -> tensor<1x4x?xf32>
  return
}

// -----

func.func @concat_heads_result(%x: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'mha.concat_heads' op expects result type 'tensor<1x4x16xf32>', got 'tensor<1x2x32xf32>'}}
  %o = mha.concat_heads %x : tensor<1x2x4x8xf32> -> tensor<1x2x32xf32>
  return
}

// -----

func.func @output_project_weight_element_type(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf16>) {
  // expected-error @+1 {{'mha.output_project' op failed to verify that all of {input, weight} have same element type}}
  %y = mha.output_project %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_bias_element_type(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'mha.output_project' op failed to verify that bias (where present) has the element type of input}}
  %y = mha.output_project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_weight_rank(%x: tensor<1x4x8xf32>, %w: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects weight to have rank 2 ([H*dv, D_out]), got rank 3}}
  %y = mha.output_project %x, %w : (tensor<1x4x8xf32>, tensor<2x4x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_dynamic_weight(%x: tensor<1x4x8xf32>, %w: tensor<8x?xf32>) {
  // expected-error @+1 {{'mha.output_project' op operand #1 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8x?xf32>'}}
  %y = mha.output_project %x, %w : (tensor<1x4x8xf32>, tensor<8x?xf32>) -> tensor<1x4x?xf32>
  return
}

// -----

func.func @output_project_heads_dynamic_head_count(%x: tensor<1x?x4x4xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects a static head count (dimension 1 of input), got ?}}
  %y = mha.output_project %x, %w : (tensor<1x?x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_heads_dynamic_value_dim(%x: tensor<1x2x4x?xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects a static value dimension (dimension 3 of input), got ?}}
  %y = mha.output_project %x, %w : (tensor<1x2x4x?xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_dynamic_width(%x: tensor<1x4x?xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects a static width (dimension 2 of input), got ?}}
  %y = mha.output_project %x, %w : (tensor<1x4x?xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_input_rank(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects input to have rank 3 ([B, T, H*dv]) or 4 ([B, H, T, dv]), got rank 2}}
  %y = mha.output_project %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_weight_rows(%x: tensor<1x4x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects weight rows (H*dv) to be 8, got 16}}
  %y = mha.output_project %x, %w : (tensor<1x4x8xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Reading the heads: the weight has H*dv rows.
func.func @output_project_heads_weight_rows(%x: tensor<1x2x4x6xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects weight rows (H*dv) to be 12, got 8}}
  %y = mha.output_project %x, %w : (tensor<1x2x4x6xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_bias_rank(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'mha.output_project' op operand #2 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<f32>'}}
  %y = mha.output_project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_dynamic_bias(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<?xf32>) {
  // expected-error @+1 {{'mha.output_project' op operand #2 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %y = mha.output_project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @output_project_bias_size(%x: tensor<1x4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects bias size to be 6, got 8}}
  %y = mha.output_project %x, %w bias(%b) : (tensor<1x4x8xf32>, tensor<8x6xf32>, tensor<8xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

// Reading the heads [B, H, T, dv]: the sequence is dimension 2, not 1.
func.func @output_project_result(%x: tensor<1x2x4x4xf32>, %w: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.output_project' op expects result type 'tensor<1x4x6xf32>', got 'tensor<1x2x6xf32>'}}
  %y = mha.output_project %x, %w : (tensor<1x2x4x4xf32>, tensor<8x6xf32>) -> tensor<1x2x6xf32>
  return
}

// -----

func.func @attention_query_i32(%x: tensor<1x4x8xi32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #0 must be 3D tensor [B, T, D] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x8xi32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xi32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_mask_f32(%x: tensor<1x4x8xf32>, %m: tensor<1x4x4xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #1 must be 3D tensor [B or 1, T, S] of 1-bit signless integer values, but got 'tensor<1x4x4xf32>'}}
  %y = mha.attention %x mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x4x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_kv_element_type(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x8xf16>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that kv (where present) has the element type of query}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Mixing f16 weights into an f32 layer.
func.func @attention_weight_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf16>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that all of {query, w_q, w_k, w_v, w_o} have same element type}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_bias_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_o: tensor<8xbf16>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that b_o (where present) has the element type of query}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_o(%b_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xbf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_q_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xbf16>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that all of {query, w_q, w_k, w_v, w_o} have same element type}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xbf16>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_v_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xbf16>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that all of {query, w_q, w_k, w_v, w_o} have same element type}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xbf16>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_o_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xbf16>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that all of {query, w_q, w_k, w_v, w_o} have same element type}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xbf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_q_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_q: tensor<8xf16>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that b_q (where present) has the element type of query}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_k_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_k: tensor<8xf16>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that b_k (where present) has the element type of query}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_k(%b_k) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_v_element_type(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_v: tensor<8xf16>) {
  // expected-error @+1 {{'mha.attention' op failed to verify that b_v (where present) has the element type of query}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_v(%b_v) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf16>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_query_rank(%x: tensor<4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #0 must be 3D tensor [B, T, D] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<4x8xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_model_width(%x: tensor<1x4x?xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects a static model width (dimension 2 of query), got ?}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x?xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_kv_rank(%x: tensor<1x4x8xf32>, %kv: tensor<1x1x6x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #1 must be 3D tensor [B, T, D] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x1x6x8xf32>'}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_kv_width(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x?xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects a static key/value width (dimension 2 of kv), got ?}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x?xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_kv_batch(%x: tensor<1x4x8xf32>, %kv: tensor<2x6x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects kv batch to be 1, got 2}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_zero_heads(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(0)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_zero_kv_heads(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op attribute 'num_kv_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) kv_heads(0)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_gqa_not_multiple(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x6xf32>, %w_v: tensor<8x6xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects num_kv_heads (3) to divide num_heads (4)}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(3)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_w_q(%x: tensor<1x4x8xf32>, %w_q: tensor<8x?xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #1 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8x?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x?xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_w_v(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<?x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #3 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?x8xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_w_k(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x?xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #2 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8x?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x?xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_q_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_q to have rank 2 ([D, H*dk]), got rank 1}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Shared and split-first weights cannot be mixed.
func.func @attention_w_k_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k to have rank 2 ([D_kv, Hkv*dk]), got rank 3}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_v_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_v to have rank 2 ([D_kv, Hkv*dv]), got rank 3}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_q_rows(%x: tensor<1x4x8xf32>, %w_q: tensor<16x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_q rows (D) to be 8, got 16}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_heads_not_dividing_w_q(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects num_heads (3) to divide the w_q columns (8)}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(3)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Cross-attention: w_k and w_v have D_kv rows, the width of kv.
func.func @attention_w_k_rows(%x: tensor<1x4x8xf32>, %kv: tensor<1x5x6xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<6x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k rows (D_kv) to be 6, got 8}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x5x6xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_v_rows(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<6x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_v rows (D_kv) to be 8, got 6}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_kv_heads_not_dividing_w_v(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x4xf32>, %w_v: tensor<8x5xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects num_kv_heads (2) to divide the w_v columns (5)}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x5xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Grouped-query: w_k has Hkv*dk columns, not H*dk.
func.func @attention_w_k_columns(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k columns (Hkv*dk) to be 4, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(4) kv_heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_q_size(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_q: tensor<4xf32>) {
  // expected-error @+1 {{'mha.attention' op expects b_q size to be 8, got 4}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_k_size(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x4xf32>, %w_v: tensor<8x4xf32>, %w_o: tensor<8x8xf32>, %b_k: tensor<8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects b_k size to be 4, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_k(%b_k) heads(4) kv_heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// dv = 6 != dk = 4: b_v has H*dv entries.
func.func @attention_b_v_size(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x12xf32>, %w_o: tensor<12x8xf32>, %b_v: tensor<8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects b_v size to be 12, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_v(%b_v) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x12xf32>, tensor<12x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_q_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_q: tensor<1x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x8xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_b_k(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_k: tensor<?xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_k(%b_k) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Split first (w_q of rank 3): w_k and w_v must be per-head too.
func.func @attention_split_first_w_k_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k to have rank 3 ([Hkv, D_kv/Hkv, dk]), got rank 2}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_v_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_v to have rank 3 ([Hkv, D_kv/Hkv, dv]), got rank 2}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_heads_not_dividing_width(%x: tensor<1x4x8xf32>, %w_q: tensor<3x2x4xf32>, %w_k: tensor<1x8x4xf32>, %w_v: tensor<1x8x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects num_heads (3) to divide the model width (8)}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(3) kv_heads(1)
      : (tensor<1x4x8xf32>, tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_kv_heads_not_dividing_kv_width(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x5xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects num_kv_heads (2) to divide the key/value width (5)}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x5xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_q_heads(%x: tensor<1x4x8xf32>, %w_q: tensor<4x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_q heads to be 2, got 4}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<4x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_q_rows(%x: tensor<1x4x8xf32>, %w_q: tensor<2x8x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_q rows (D/H) to be 4, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x8x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_k_heads(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<1x8x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k heads to be 1, got 2}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) kv_heads(1)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x8x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_k_rows(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x6xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x3x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k rows (D_kv/Hkv) to be 3, got 4}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x6xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x3x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_k_columns(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x2xf32>, %w_v: tensor<2x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_k columns (dk) to be 4, got 2}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x2xf32>, tensor<2x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_v_heads(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<1x4x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_v heads to be 2, got 1}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x4x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_split_first_w_v_rows(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x2x4xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_v rows (D_kv/Hkv) to be 4, got 2}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Split first: b_v is [Hkv*dv], head after head.
func.func @attention_split_first_b_v_size(%x: tensor<1x4x8xf32>, %w_q: tensor<2x4x4xf32>, %w_k: tensor<2x4x4xf32>, %w_v: tensor<2x4x6xf32>, %w_o: tensor<12x8xf32>, %b_v: tensor<8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects b_v size to be 12, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_v(%b_v) heads(2)
      : (tensor<1x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x6xf32>, tensor<12x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_k_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_k: tensor<2x4xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<2x4xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_k(%b_k) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_v_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_v: tensor<2x4xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<2x4xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_v(%b_v) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_o_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_o: tensor<2x4xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<2x4xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_o(%b_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_b_q(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_q: tensor<?xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_b_v(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_v: tensor<?xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_v(%b_v) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_b_o(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>, %b_o: tensor<?xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #5 must be statically shaped 1-D tensor (a bias [D_out]) of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_o(%b_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_w_o_rank(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_o to have rank 2 ([H*dv, D_out]), got rank 3}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_w_o(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x?xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #4 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8x?xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x?xf32>) -> tensor<1x4x?xf32>
  return
}

// -----

// dv = 6: w_o has H*dv rows, not D.
func.func @attention_w_o_rows(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x12xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects w_o rows (H*dv) to be 12, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x12xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_b_o_size(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x6xf32>, %b_o: tensor<8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects b_o size to be 6, got 8}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_o(%b_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>, tensor<8xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @attention_mask_rank(%x: tensor<1x4x8xf32>, %m: tensor<1x1x4x4xi1>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op operand #1 must be 3D tensor [B or 1, T, S] of 1-bit signless integer values, but got 'tensor<1x1x4x4xi1>'}}
  %y = mha.attention %x mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x1x4x4xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_mask_batch(%x: tensor<2x4x8xf32>, %m: tensor<3x4x4xi1>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects mask batch (B or 1) to be 2, got 3}}
  %y = mha.attention %x mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<2x4x8xf32>, tensor<3x4x4xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

// With a dynamic query batch the mask still has to match kv's batch.
func.func @attention_mask_batch_dynamic_query(%x: tensor<?x4x8xf32>, %kv: tensor<2x6x8xf32>, %m: tensor<3x4x6xi1>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects mask batch (B or 1) to be 2, got 3}}
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<?x4x8xf32>, tensor<2x6x8xf32>, tensor<3x4x6xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  return
}

// -----

func.func @attention_mask_query_length(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x8xf32>, %m: tensor<1x6x6xi1>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects mask query length (T) to be 4, got 6}}
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6x6xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Cross-attention: the mask is [B, T, S] with S the length of kv.
func.func @attention_mask_key_length(%x: tensor<1x4x8xf32>, %kv: tensor<1x6x8xf32>, %m: tensor<1x4x4xi1>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects mask key length (S) to be 6, got 4}}
  %y = mha.attention %x kv(%kv) mask(%m) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x4x4xi1>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_scale_negative(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects scale to be positive and finite, got -2.000000e+00}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2) scale(-2.0)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// The result has D_out = the columns of w_o.
func.func @attention_result(%x: tensor<1x4x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x6xf32>) {
  // expected-error @+1 {{'mha.attention' op expects result type 'tensor<1x4x6xf32>', got 'tensor<1x4x8xf32>'}}
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @attention_result_kv_batch(%x: tensor<?x4x8xf32>, %kv: tensor<2x6x8xf32>, %w_q: tensor<8x8xf32>, %w_k: tensor<8x8xf32>, %w_v: tensor<8x8xf32>, %w_o: tensor<8x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects result type 'tensor<2x4x8xf32>', got 'tensor<3x4x8xf32>'}}
  %y = mha.attention %x kv(%kv) weights(%w_q, %w_k, %w_v, %w_o) heads(2)
      : (tensor<?x4x8xf32>, tensor<2x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<3x4x8xf32>
  return
}

// -----

// mha.attention_weights shares mha.sdpa's rules on query, key, mask and
// scale (one case of each kind here, the rest are sdpa's cases above); its
// result is [B, H, T, S].
func.func @attention_weights_key_element_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xbf16>) {
  // expected-error @+1 {{'mha.attention_weights' op failed to verify that all of {query, key} have same element type}}
  %p = mha.attention_weights %q, %k : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xbf16>) -> tensor<1x2x4x6xf32>
  return
}

// -----

func.func @attention_weights_key_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'mha.attention_weights' op operand #1 must be 4D tensor [B, H, T, d] of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<2x6x8xf32>'}}
  %p = mha.attention_weights %q, %k : (tensor<1x2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<1x2x4x6xf32>
  return
}

// -----

func.func @attention_weights_gqa_not_multiple(%q: tensor<1x4x4x8xf32>, %k: tensor<1x3x6x8xf32>) {
  // expected-error @+1 {{'mha.attention_weights' op expects the key/value head count (3) to divide the query head count (4)}}
  %p = mha.attention_weights %q, %k : (tensor<1x4x4x8xf32>, tensor<1x3x6x8xf32>) -> tensor<1x4x4x6xf32>
  return
}

// -----

func.func @attention_weights_mask_key_length(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<1x4x4xi1>) {
  // expected-error @+1 {{'mha.attention_weights' op expects mask key length (S) to be 6, got 4}}
  %p = mha.attention_weights %q, %k mask(%m) : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x4x4xi1>) -> tensor<1x2x4x6xf32>
  return
}

// -----

func.func @attention_weights_scale_negative(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>) {
  // expected-error @+1 {{'mha.attention_weights' op expects scale to be positive and finite, got -1.000000e+00}}
  %p = mha.attention_weights %q, %k scale(-1.0) : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  return
}

// -----

// The result has one column per key (S = 6), not one per value dimension.
func.func @attention_weights_result(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>) {
  // expected-error @+1 {{'mha.attention_weights' op expects result type 'tensor<1x2x4x6xf32>', got 'tensor<1x2x4x8xf32>'}}
  %p = mha.attention_weights %q, %k : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// Sizes from a file can be anything: heads times value dimension past 64
// bits is an error, not a wrapped-around (undefined) product.
func.func @attention_heads_times_value_dim_overflow(%x: tensor<1x4x8xf32>, %wq: tensor<8x1099511627776xf32>, %wk: tensor<8x1xf32>, %wv: tensor<8x1099511627776xf32>, %wo: tensor<4x8xf32>) {
  // expected-error @+1 {{'mha.attention' op expects H*dv (1099511627776 * 1099511627776) to fit in 64 bits}}
  %y = mha.attention %x weights(%wq, %wk, %wv, %wo) heads(1099511627776) kv_heads(1) : (tensor<1x4x8xf32>, tensor<8x1099511627776xf32>, tensor<8x1xf32>, tensor<8x1099511627776xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @concat_heads_width_overflow(%x: tensor<1x4294967296x2x4294967296xf32>) {
  // expected-error @+1 {{'mha.concat_heads' op expects H*d (4294967296 * 4294967296) to fit in 64 bits}}
  %c = mha.concat_heads %x : tensor<1x4294967296x2x4294967296xf32> -> tensor<1x2x8xf32>
  return
}
