// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The rules of mha.cache_append_quantized and mha.dequantize, one function
// each.

func.func @codes_element_type(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xf32>, %s: tensor<1x2x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op operand #1 must be 4D tensor [B, Hkv, C, d] of 8-bit signless integer values, but got 'tensor<1x2x16x8xf32>'}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xf32>, tensor<1x2x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @update_element_type(%u: tensor<1x2x1x8xbf16>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op operand #0 must be 4D tensor [B, Hkv, T, d] of 32-bit float values, but got 'tensor<1x2x1x8xbf16>'}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x8xbf16> into tensor<1x2x16x8xi8>, tensor<1x2x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @scales_rank(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16x1xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op operand #2 must be 3D tensor [B, Hkv, C] of 32-bit float values, but got 'tensor<1x2x16x1xf32>'}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xi8>, tensor<1x2x16x1xf32> at tensor<1xi64>
  return
}

// -----

func.func @dynamic_heads(%u: tensor<1x?x1x8xf32>, %c: tensor<1x?x16x8xi8>, %s: tensor<1x?x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects a static head count (dimension 1 of codes), got ?}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x?x1x8xf32> into tensor<1x?x16x8xi8>, tensor<1x?x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @update_heads(%u: tensor<1x4x1x8xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects update heads (Hkv) to be 2, got 4}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x4x1x8xf32> into tensor<1x2x16x8xi8>, tensor<1x2x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @update_width(%u: tensor<1x2x1x4xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects update row width (d) to be 8, got 4}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x4xf32> into tensor<1x2x16x8xi8>, tensor<1x2x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @lengths_size(%u: tensor<2x2x1x8xf32>, %c: tensor<2x2x16x8xi8>, %s: tensor<2x2x16xf32>, %l: tensor<3xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects lengths size (B) to be 2, got 3}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<2x2x1x8xf32> into tensor<2x2x16x8xi8>, tensor<2x2x16xf32> at tensor<3xi64>
  return
}

// -----

func.func @too_many_rows(%u: tensor<1x2x17x8xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects the update length (T = 17) to be at most the codes capacity (C = 16)}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x17x8xf32> into tensor<1x2x16x8xi8>, tensor<1x2x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @scales_batch(%u: tensor<2x2x1x8xf32>, %c: tensor<2x2x16x8xi8>, %s: tensor<1x2x16xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects scales batch (B) to be 2, got 1}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<2x2x1x8xf32> into tensor<2x2x16x8xi8>, tensor<1x2x16xf32> at tensor<2xi64>
  return
}

// -----

func.func @scales_heads(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x4x16xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects scales heads (Hkv) to be 2, got 4}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xi8>, tensor<1x4x16xf32> at tensor<1xi64>
  return
}

// -----

func.func @scales_rows(%u: tensor<1x2x1x8xf32>, %c: tensor<1x2x16x8xi8>, %s: tensor<1x2x8xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{'mha.cache_append_quantized' op expects scales rows (C) to be 16, got 8}}
  %rc, %rs = mha.cache_append_quantized %u into %c, %s at %l : tensor<1x2x1x8xf32> into tensor<1x2x16x8xi8>, tensor<1x2x8xf32> at tensor<1xi64>
  return
}

// -----

func.func @dequantize_codes_type(%c: tensor<1x2x16x8xi32>, %s: tensor<1x2x16xf32>) {
  // expected-error @+1 {{'mha.dequantize' op operand #0 must be 4D tensor [B, Hkv, C, d] of 8-bit signless integer values, but got 'tensor<1x2x16x8xi32>'}}
  %k = mha.dequantize %c, %s : tensor<1x2x16x8xi32>, tensor<1x2x16xf32> -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @dequantize_scales_rows(%c: tensor<1x2x16x8xi8>, %s: tensor<1x2x15xf32>) {
  // expected-error @+1 {{'mha.dequantize' op expects scales rows (C) to be 16, got 15}}
  %k = mha.dequantize %c, %s : tensor<1x2x16x8xi8>, tensor<1x2x15xf32> -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @dequantize_scales_heads(%c: tensor<1x2x16x8xi8>, %s: tensor<1x1x16xf32>) {
  // expected-error @+1 {{'mha.dequantize' op expects scales heads (Hkv) to be 2, got 1}}
  %k = mha.dequantize %c, %s : tensor<1x2x16x8xi8>, tensor<1x1x16xf32> -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @dequantize_result_width(%c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>) {
  // expected-error @+2 {{'mha.dequantize' op inferred type(s) 'tensor<1x2x16x8xf32>' are incompatible with return type(s) of operation 'tensor<1x2x16x4xf32>'}}
  // expected-error @+1 {{'mha.dequantize' op failed to infer returned types}}
  %k = mha.dequantize %c, %s : tensor<1x2x16x8xi8>, tensor<1x2x16xf32> -> tensor<1x2x16x4xf32>
  return
}

// -----

func.func @dequantize_result_type(%c: tensor<1x2x16x8xi8>, %s: tensor<1x2x16xf32>) {
  // expected-error @+1 {{'mha.dequantize' op result #0 must be 4D tensor [B, Hkv, T, d] of 32-bit float values, but got 'tensor<1x2x16x8xbf16>'}}
  %k = mha.dequantize %c, %s : tensor<1x2x16x8xi8>, tensor<1x2x16xf32> -> tensor<1x2x16x8xbf16>
  return
}
