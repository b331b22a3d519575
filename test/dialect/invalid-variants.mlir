// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules on the served models' options: each names what it expected and
// what it found.

func.func @window_without_causal(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects window only together with causal, got window(2) without causal}}
  %o = mha.sdpa %q, %q, %q window(2) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @window_zero(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint}}
  %o = mha.sdpa %q, %q, %q causal window(0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @softcap_negative(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects softcap to be positive and finite, got -1}}
  %o = mha.sdpa %q, %q, %q softcap(-1.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @alibi_size(%q: tensor<1x2x4x8xf32>, %s: tensor<3xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects alibi slopes size (H) to be 2, got 3}}
  %o = mha.sdpa %q, %q, %q alibi(%s) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<3xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @sinks_size(%q: tensor<1x2x4x8xf32>, %s: tensor<1xf32>) -> tensor<1x2x4x6xf32> {
  // expected-error @+1 {{'mha.attention_weights' op expects sinks size (H) to be 2, got 1}}
  %p = mha.attention_weights %q, %q sinks(%s) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1xf32>) -> tensor<1x2x4x6xf32>
  return %p : tensor<1x2x4x6xf32>
}

// -----

func.func @bias_heads(%q: tensor<1x2x4x8xf32>, %b: tensor<1x3x4x4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects bias heads (H or 1) to be 2, got 3}}
  %o = mha.sdpa %q, %q, %q bias(%b) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @bias_keys(%q: tensor<1x2x4x8xf32>, %b: tensor<1x1x1x5xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.sdpa' op expects bias key length (S) to be 4, got 5}}
  %o = mha.sdpa %q, %q, %q bias(%b) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x1x5xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @twice(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{`softcap` is given twice}}
  %o = mha.sdpa %q, %q, %q softcap(1.0) softcap(2.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @rope_layout(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rope' op expects the rope layout "half" or "interleaved", got "neox"}}
  %r = mha.rope %q layout("neox") rotary_dim(8) base(1.0e4) scale(1.0) mscale(1.0) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @rope_odd(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rope' op expects rotary_dim to be even and at most the head dimension (8), got 5}}
  %r = mha.rope %q layout("half") rotary_dim(5) base(1.0e4) scale(1.0) mscale(1.0) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @rope_freq(%q: tensor<1x2x4x8xf32>, %f: tensor<3xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rope' op expects rope inverse frequencies size (R/2) to be 4, got 3}}
  %r = mha.rope %q inv_freq(%f) layout("half") rotary_dim(8) base(1.0e4) scale(1.0) mscale(1.0) : (tensor<1x2x4x8xf32>, tensor<3xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @rope_base(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rope' op expects the rope base to be positive and finite, got 0}}
  %r = mha.rope %q layout("half") rotary_dim(8) base(0.0) scale(1.0) mscale(1.0) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @norm_weight(%q: tensor<1x2x4x8xf32>, %w: tensor<4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rms_norm' op expects weight size (d) to be 8, got 4}}
  %n = mha.rms_norm %q, %w eps(1.0e-6) : (tensor<1x2x4x8xf32>, tensor<4xf32>) -> tensor<1x2x4x8xf32>
  return %n : tensor<1x2x4x8xf32>
}

// -----

func.func @norm_eps(%q: tensor<1x2x4x8xf32>, %w: tensor<8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'mha.rms_norm' op expects the norm epsilon to be finite and non-negative, got -1}}
  %n = mha.rms_norm %q, %w eps(-1.0) : (tensor<1x2x4x8xf32>, tensor<8xf32>) -> tensor<1x2x4x8xf32>
  return %n : tensor<1x2x4x8xf32>
}

// -----

func.func @one_norm(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %n: tensor<4xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'mha.attention' op expects q_norm and k_norm together, got only q_norm}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) q_norm(%n) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @rope_option_alone(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'mha.attention' op expects rotary_dim, rope_base, rope_scale, rope_mscale and rope_inv_freq only together with rope}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) rope_base(1.0e4) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @rope_cross(%x: tensor<1x4x8xf32>, %kv: tensor<1x5x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'mha.attention' op expects rope only in self-attention, got kv}}
  %y = mha.attention %x kv(%kv) weights(%w, %w, %w, %w) heads(2) rope("half") : (tensor<1x4x8xf32>, tensor<1x5x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @rope_rotary_dim(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'mha.attention' op expects rotary_dim to be even and at most the head dimension (4), got 6}}
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(2) rope("half") rotary_dim(6) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
