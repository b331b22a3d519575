// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The shape rules of a paged cache: pages of 16 to 128 rows (a multiple of
// 16), one table row and one length per sequence, the update's heads and
// row width the pool's, and a view of M * P rows per sequence.

func.func @page_size_small(%k: tensor<2x2x1x8xf32>, %pool: tensor<8x2x8x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x8x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects the page size (dimension 2 of pool) to be a multiple of 16 from 16 to 128, got 8}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x8xf32> into tensor<8x2x8x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x8x8xf32>
}

// -----

func.func @page_size_not_16s(%pool: tensor<8x2x24x8xf32>, %t: tensor<2x4xi32>) -> tensor<2x2x96x8xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects the page size (dimension 2 of pool) to be a multiple of 16 from 16 to 128, got 24}}
  %r = mha.paged_view %pool through %t : tensor<8x2x24x8xf32> through tensor<2x4xi32> -> tensor<2x2x96x8xf32>
  return %r : tensor<2x2x96x8xf32>
}

// -----

func.func @page_size_dynamic(%pool: tensor<8x2x?x8xf32>, %t: tensor<2x4xi32>) -> tensor<2x2x?x8xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects a static page size (dimension 2 of pool), got ?}}
  %r = mha.paged_view %pool through %t : tensor<8x2x?x8xf32> through tensor<2x4xi32> -> tensor<2x2x?x8xf32>
  return %r : tensor<2x2x?x8xf32>
}

// -----

func.func @table_rows(%k: tensor<2x2x1x8xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<3x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects table rows (B) to be 2, got 3}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x8xf32> into tensor<8x2x16x8xf32> through tensor<3x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @table_element(%k: tensor<2x2x1x8xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi64>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op operand #2 must be 2D tensor [B, M] of 32-bit signless integer values, but got 'tensor<2x4xi64>'}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x8xf32> into tensor<8x2x16x8xf32> through tensor<2x4xi64> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @lengths_size(%k: tensor<?x2x1x8xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<3xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects lengths size (B) to be 2, got 3}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<?x2x1x8xf32> into tensor<8x2x16x8xf32> through tensor<2x4xi32> at tensor<3xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @update_heads(%k: tensor<2x4x1x8xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects update heads (Hkv) to be 2, got 4}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x4x1x8xf32> into tensor<8x2x16x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @update_too_long(%k: tensor<2x2x80x8xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects the update length (T = 80) to be at most the rows of a table row (M * P = 4 * 16 = 64)}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x80x8xf32> into tensor<8x2x16x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @update_element(%k: tensor<2x2x1x8xbf16>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op failed to verify that all of {update, pool} have same element type}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x8xbf16> into tensor<8x2x16x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @view_rows(%pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>) -> tensor<2x2x60x8xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects result rows (M * P) to be 64, got 60}}
  %r = mha.paged_view %pool through %t : tensor<8x2x16x8xf32> through tensor<2x4xi32> -> tensor<2x2x60x8xf32>
  return %r : tensor<2x2x60x8xf32>
}

// -----

func.func @view_batch(%pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>) -> tensor<3x2x64x8xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects result batch (B) to be 2, got 3}}
  %r = mha.paged_view %pool through %t : tensor<8x2x16x8xf32> through tensor<2x4xi32> -> tensor<3x2x64x8xf32>
  return %r : tensor<3x2x64x8xf32>
}

// -----

func.func @view_width(%pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>) -> tensor<2x2x64x4xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects result row width (d) to be 8, got 4}}
  %r = mha.paged_view %pool through %t : tensor<8x2x16x8xf32> through tensor<2x4xi32> -> tensor<2x2x64x4xf32>
  return %r : tensor<2x2x64x4xf32>
}

// -----

func.func @update_width(%k: tensor<2x2x1x4xf32>, %pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x2x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects update row width (d) to be 8, got 4}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x4xf32> into tensor<8x2x16x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x2x16x8xf32>
}

// -----

func.func @pool_heads_dynamic(%k: tensor<2x2x1x8xf32>, %pool: tensor<8x?x16x8xf32>, %t: tensor<2x4xi32>, %len: tensor<2xi64>) -> tensor<8x?x16x8xf32> {
  // expected-error @+1 {{'mha.paged_cache_append' op expects a static head count (dimension 1 of pool), got ?}}
  %r = mha.paged_cache_append %k into %pool through %t at %len : tensor<2x2x1x8xf32> into tensor<8x?x16x8xf32> through tensor<2x4xi32> at tensor<2xi64>
  return %r : tensor<8x?x16x8xf32>
}

// -----

func.func @view_heads(%pool: tensor<8x2x16x8xf32>, %t: tensor<2x4xi32>) -> tensor<2x4x64x8xf32> {
  // expected-error @+1 {{'mha.paged_view' op expects result heads (Hkv) to be 2, got 4}}
  %r = mha.paged_view %pool through %t : tensor<8x2x16x8xf32> through tensor<2x4xi32> -> tensor<2x4x64x8xf32>
  return %r : tensor<2x4x64x8xf32>
}

// -----

// The int8 append writes i8 codes.
func.func @int8_codes(%k: tensor<2x2x1x8xf32>, %codes: tensor<6x2x16x8xf32>, %scales: tensor<6x2x16xf32>, %t: tensor<2x3xi32>, %len: tensor<2xi64>) {
  // expected-error @+1 {{'mha.paged_cache_append_quantized' op expects i8 codes, got 'f32'}}
  %c, %s = mha.paged_cache_append_quantized %k into %codes, %scales through %t at %len : tensor<2x2x1x8xf32> into tensor<6x2x16x8xf32>, tensor<6x2x16xf32> through tensor<2x3xi32> at tensor<2xi64>
  return
}

// -----

// One scale per row of the codes' pages.
func.func @int8_scale_pages(%k: tensor<2x2x1x8xf32>, %codes: tensor<6x2x16x8xi8>, %scales: tensor<6x2x32xf32>, %t: tensor<2x3xi32>, %len: tensor<2xi64>) {
  // expected-error @+1 {{'mha.paged_cache_append_quantized' op expects scales page size (P) to be 16, got 32}}
  %c, %s = mha.paged_cache_append_quantized %k into %codes, %scales through %t at %len : tensor<2x2x1x8xf32> into tensor<6x2x16x8xi8>, tensor<6x2x32xf32> through tensor<2x3xi32> at tensor<2xi64>
  return
}

// -----

func.func @int8_scale_count(%k: tensor<2x2x1x8xf32>, %codes: tensor<6x2x16x8xi8>, %scales: tensor<5x2x16xf32>, %t: tensor<2x3xi32>, %len: tensor<2xi64>) {
  // expected-error @+1 {{'mha.paged_cache_append_quantized' op expects scales pages (N) to be 6, got 5}}
  %c, %s = mha.paged_cache_append_quantized %k into %codes, %scales through %t at %len : tensor<2x2x1x8xf32> into tensor<6x2x16x8xi8>, tensor<5x2x16xf32> through tensor<2x3xi32> at tensor<2xi64>
  return
}

// -----

func.func @int8_update_heads(%k: tensor<2x4x1x8xf32>, %codes: tensor<6x2x16x8xi8>, %scales: tensor<6x2x16xf32>, %t: tensor<2x3xi32>, %len: tensor<2xi64>) {
  // expected-error @+1 {{'mha.paged_cache_append_quantized' op expects update heads (Hkv) to be 2, got 4}}
  %c, %s = mha.paged_cache_append_quantized %k into %codes, %scales through %t at %len : tensor<2x4x1x8xf32> into tensor<6x2x16x8xi8>, tensor<6x2x16xf32> through tensor<2x3xi32> at tensor<2xi64>
  return
}

// -----

// A view of scales keeps their rank.
func.func @scales_view_rank(%s: tensor<6x2x16xf32>, %t: tensor<2x3xi32>) {
  // expected-error @+1 {{'mha.paged_view' op expects a result of the pool's rank (3), got rank 4}}
  %v = mha.paged_view %s through %t : tensor<6x2x16xf32> through tensor<2x3xi32> -> tensor<2x2x48x1xf32>
  return
}
