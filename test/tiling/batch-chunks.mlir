// RUN: mha-opt %s -split-input-file -mha-batch-chunks="cache-bytes=4194304 min-rows=384" \
// RUN:   | FileCheck %s
// RUN: mha-opt %s -split-input-file -mha-batch-chunks="chunk=2" \
// RUN:   | FileCheck %s --check-prefix=TWO
// RUN: mha-opt %s -split-input-file \
// RUN:   -mha-batch-chunks="cache-bytes=4194304 min-rows=1024" \
// RUN:   | FileCheck %s --check-prefix=WHOLE

// mha.attention tiled over its batch by scf::tileUsingSCF through the op's
// TilingInterface (AttentionBatchTiling.h). A sequence of (T 512, D 512)
// keeps 512·(4·512) + 512·1024 floats (6 MiB) between the layer's stages,
// more than the 4 MiB given: chunks of one sequence, an scf.for over the 4
// of them, each a whole layer on its slice of x, written into its part of
// the result. The weights are not sliced.
// CHECK-LABEL: func.func @one_per_chunk(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x512x512xf32>, %[[W:[a-z0-9]+]]: tensor<512x512xf32>
//       CHECK:   %[[EMPTY:.+]] = tensor.empty() : tensor<4x512x512xf32>
//       CHECK:   %[[LOOP:.+]] = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[EMPTY]])
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%[[B]], 0, 0] [1, 512, 512] [1, 1, 1]
//       CHECK:     %[[Y:.+]] = mha.attention %[[XB]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(8) {{.*}} -> tensor<1x512x512xf32>
//       CHECK:     %[[INS:.+]] = tensor.insert_slice %[[Y]] into %[[ACC]][%[[B]], 0, 0] [1, 512, 512] [1, 1, 1]
//       CHECK:     scf.yield %[[INS]]
//       CHECK:   return %[[LOOP]]
// TWO-LABEL: func.func @one_per_chunk(
//       TWO:   scf.for
//       TWO:     tensor.extract_slice {{.+}} [2, 512, 512]
//       TWO:     mha.attention {{.+}} -> tensor<2x512x512xf32>
func.func @one_per_chunk(%x: tensor<4x512x512xf32>, %w: tensor<512x512xf32>)
    -> tensor<4x512x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<4x512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<4x512x512xf32>
  return %y : tensor<4x512x512xf32>
}

// -----

// Cross-attention with a mask per sequence and a bf16 layer's f32 result:
// kv and the mask are sliced with x; a chunk is the largest divisor of the
// batch (6) that fits: 64·(4·64) + 100·(128 + 32) floats per sequence
// (about 128 KiB), 32 of them fit, so 6 do and the op is left whole.
// CHECK-LABEL: func.func @negative_whole_batch_fits(
//   CHECK-NOT:   scf.for
//       CHECK:   mha.attention {{.+}} -> tensor<6x64x64xf32>
// TWO-LABEL: func.func @negative_whole_batch_fits(
//       TWO:   scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
//       TWO:     %[[XB:.+]] = tensor.extract_slice %{{.+}}[%[[B]], 0, 0] [2, 64, 64]
//       TWO:     %[[KVB:.+]] = tensor.extract_slice %{{.+}}[%[[B]], 0, 0] [2, 100, 32]
//       TWO:     %[[MB:.+]] = tensor.extract_slice %{{.+}}[%[[B]], 0, 0] [2, 64, 100]
//       TWO:     mha.attention %[[XB]] kv(%[[KVB]]) mask(%[[MB]]) {{.+}} -> tensor<2x64x64xf32>
func.func @negative_whole_batch_fits(%x: tensor<6x64x64xbf16>,
    %kv: tensor<6x100x32xbf16>, %mask: tensor<6x64x100xi1>,
    %wq: tensor<64x64xbf16>, %wkv: tensor<32x64xbf16>,
    %wo: tensor<64x64xbf16>) -> tensor<6x64x64xf32> {
  %y = mha.attention %x kv(%kv) mask(%mask) weights(%wq, %wkv, %wkv, %wo)
      heads(4)
      : (tensor<6x64x64xbf16>, tensor<6x100x32xbf16>, tensor<6x64x100xi1>,
         tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>,
         tensor<64x64xbf16>) -> tensor<6x64x64xf32>
  return %y : tensor<6x64x64xf32>
}

// -----

// A mask shared by the batch ([1, T, S]) is passed whole to every chunk.
// A batch of 6 whose sequences fit 4 at a time (400·(256 + 16 + 16 + 256) +
// 400·32 floats each) takes chunks of 3, the largest divisor of 6 that
// fits, so that every chunk has the same static shape.
// CHECK-LABEL: func.func @shared_mask(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<6x400x256xf32>, %[[M:[a-z0-9]+]]: tensor<1x400x400xi1>
//       CHECK:   scf.for
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%{{.+}}, 0, 0] [3, 400, 256]
//       CHECK:     mha.attention %[[XB]] mask(%[[M]]) {{.+}} -> tensor<3x400x256xf32>
func.func @shared_mask(%x: tensor<6x400x256xf32>, %mask: tensor<1x400x400xi1>,
    %w: tensor<256x16xf32>, %wo: tensor<16x256xf32>) -> tensor<6x400x256xf32> {
  %y = mha.attention %x mask(%mask) weights(%w, %w, %w, %wo) heads(1)
      : (tensor<6x400x256xf32>, tensor<1x400x400xi1>, tensor<256x16xf32>,
         tensor<256x16xf32>, tensor<256x16xf32>, tensor<16x256xf32>)
      -> tensor<6x400x256xf32>
  return %y : tensor<6x400x256xf32>
}

// -----

// A `?` batch of (T 512, D 512): chunks of one sequence, a static shape
// inside the loop, the loop to the batch read at run time.
// CHECK-LABEL: func.func @dynamic_batch(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<?x512x512xf32>
//       CHECK:   %[[N:.+]] = tensor.dim %[[X]], %{{.+}}
//       CHECK:   scf.for %{{.+}} = %{{.+}} to %[[N]]
//       CHECK:     mha.attention {{.+}} -> tensor<1x512x512xf32>
func.func @dynamic_batch(%x: tensor<?x512x512xf32>, %w: tensor<512x512xf32>)
    -> tensor<?x512x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<?x512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<?x512x512xf32>
  return %y : tensor<?x512x512xf32>
}

// -----

// `?` lengths: the chunk is computed at run time from them: as many
// sequences as fit in 4 MiB / 4 bytes ((4·512) floats per query, 1024 per
// key), but at least those of 384 query rows (min-rows), and 1.
// CHECK-LABEL: func.func @dynamic_lengths(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<?x?x512xf32>
//       CHECK:   %[[T:.+]] = arith.maxsi %{{.+}}, %[[ONE:.+]] :
//       CHECK:   %[[PQ:.+]] = arith.muli %[[T]], %c2048
//       CHECK:   %[[PK:.+]] = arith.muli %{{.+}}, %c1024
//       CHECK:   %[[F:.+]] = arith.addi %[[PQ]], %[[PK]]
//       CHECK:   %[[FIT:.+]] = arith.divui %c1048576, %[[F]]
//       CHECK:   %[[FEWEST:.+]] = arith.ceildivui %c384, %[[T]]
//       CHECK:   %[[MAX:.+]] = arith.maxsi %[[FIT]], %[[FEWEST]]
//       CHECK:   %[[CHUNK:.+]] = arith.maxsi %[[MAX]], %[[ONE]]
//       CHECK:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[CHUNK]]
//       CHECK:     mha.attention {{.+}} -> tensor<?x?x512xf32>
func.func @dynamic_lengths(%x: tensor<?x?x512xf32>, %w: tensor<512x512xf32>)
    -> tensor<?x?x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<?x?x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  return %y : tensor<?x?x512xf32>
}

// -----

// A mask whose batch is `?` may be shared ([1, T, S]) or per sequence,
// known at run time only: each chunk reads row 0 and 1 row when the mask's
// batch is 1, else its own rows (getMaskBatchRow, as every lowering of the
// mask reads it).
// CHECK-LABEL: func.func @dynamic_mask_batch(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x512x512xf32>, %[[M:[a-z0-9]+]]: tensor<?x512x512xi1>
//       CHECK:   scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%[[B]], 0, 0] [1, 512, 512]
//       CHECK:     %[[MB:.+]] = tensor.dim %[[M]], %{{.+}}
//       CHECK:     %[[SHARED:.+]] = arith.cmpi eq, %[[MB]], %[[ONE:.+]] :
//       CHECK:     %[[ROWS:.+]] = arith.select %[[SHARED]], %{{.+}}, %{{.+}} : index
//       CHECK:     %[[ROW:.+]] = arith.select %[[SHARED]], %{{.+}}, %[[B]] : index
//       CHECK:     %[[MASK:.+]] = tensor.extract_slice %[[M]][%[[ROW]], 0, 0] [%[[ROWS]], 512, 512]
//       CHECK:     mha.attention %[[XB]] mask(%[[MASK]]) {{.+}} -> tensor<1x512x512xf32>
// TWO-LABEL: func.func @dynamic_mask_batch(
//       TWO:     mha.attention {{.+}} : (tensor<2x512x512xf32>, tensor<?x512x512xi1>
func.func @dynamic_mask_batch(%x: tensor<4x512x512xf32>,
    %mask: tensor<?x512x512xi1>, %w: tensor<512x512xf32>)
    -> tensor<4x512x512xf32> {
  %y = mha.attention %x mask(%mask) weights(%w, %w, %w, %w) heads(8)
      : (tensor<4x512x512xf32>, tensor<?x512x512xi1>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>)
      -> tensor<4x512x512xf32>
  return %y : tensor<4x512x512xf32>
}

// -----

// A static batch with `?` lengths: the chunk would be known at run time
// only, and the chunks' batch would be `?` where the layer's is static; the
// op is left whole. A chunk set by hand is static: chunks of 2.
// TWO-LABEL: func.func @negative_static_batch_dynamic_lengths(
//       TWO:   scf.for
//       TWO:     mha.attention {{.+}} -> tensor<2x?x512xf32>
// CHECK-LABEL: func.func @negative_static_batch_dynamic_lengths(
//  CHECK-NEXT:   mha.attention {{.+}} -> tensor<4x?x512xf32>
//  CHECK-NEXT:   return
func.func @negative_static_batch_dynamic_lengths(%x: tensor<4x?x512xf32>,
    %w: tensor<512x512xf32>) -> tensor<4x?x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<4x?x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<4x?x512xf32>
  return %y : tensor<4x?x512xf32>
}

// -----

// Short sequences: 16 of 64 tokens, 5 of which fit in 4 MiB
// (64·(4·512) + 64·1024 floats each), but a chunk has at least 384 query
// rows (min-rows), 6 sequences; the largest divisor of 16 up to 6 is 4,
// too few rows, so the chunk is the smallest divisor with enough: 8. With
// min-rows=1024 (16 sequences, the whole batch) the op stays whole.
// CHECK-LABEL: func.func @short_sequences(
//       CHECK:   scf.for
//       CHECK:     mha.attention {{.+}} -> tensor<8x64x512xf32>
// TWO-LABEL: func.func @short_sequences(
//       TWO:     mha.attention {{.+}} -> tensor<2x64x512xf32>
// WHOLE-LABEL: func.func @short_sequences(
//   WHOLE-NOT:   scf.for
//       WHOLE:   mha.attention {{.+}} -> tensor<16x64x512xf32>
func.func @short_sequences(%x: tensor<16x64x512xf32>, %w: tensor<512x512xf32>)
    -> tensor<16x64x512xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) heads(8)
      : (tensor<16x64x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
         tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<16x64x512xf32>
  return %y : tensor<16x64x512xf32>
}
