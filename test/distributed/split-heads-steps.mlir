// mha-split-heads on a layer written as its steps around mha.sdpa, as a
// graph with a key/value cache is (mha-gen --kv-cache): each rank keeps the
// columns of the projections of its heads, the heads of the caches its query
// heads read, and the rows of w_o they multiply (docs/distributed.md).
// RUN: mha-opt %s --mha-split-heads="rank=1 ranks=2" | FileCheck %s --check-prefix=RANK1
// RUN: mha-opt %s --mha-split-heads="rank=0 ranks=4" | FileCheck %s --check-prefix=RANK0OF4

// Four query heads of width 2 on two key/value heads, RoPE on both: rank 1
// of 2 keeps query heads 2 and 3 and key/value head 1, in its caches too;
// the split_heads count the rank's heads and the caches it returns are its
// own. The output bias stays on rank 0.
// RANK1-LABEL: func.func @cache(
// RANK1-SAME: tensor<1x4x8xf32> {mha.name = "x"}
// RANK1-SAME: tensor<8x4xf32> {mha.name = "w_q", mha.shard = array<i64: 1, 4, 4>}
// RANK1-SAME: tensor<8x2xf32> {mha.name = "w_k", mha.shard = array<i64: 1, 2, 2>}
// RANK1-SAME: tensor<8x2xf32> {mha.name = "w_v", mha.shard = array<i64: 1, 2, 2>}
// RANK1-SAME: tensor<4x8xf32> {mha.name = "w_o", mha.shard = array<i64: 0, 4, 4>}
// RANK1-SAME: tensor<4xf32> {mha.name = "b_q", mha.shard = array<i64: 0, 4, 4>}
// RANK1-SAME: tensor<8xf32> {mha.name = "b_o"}
// RANK1-SAME: tensor<1x1x6x2xf32> {mha.name = "k_cache", mha.shard = array<i64: 1, 1, 1>}
// RANK1-SAME: tensor<1x1x6x2xf32> {mha.name = "v_cache", mha.shard = array<i64: 1, 1, 1>}
// RANK1-SAME: -> (tensor<1x4x8xf32>, tensor<1x1x6x2xf32>, tensor<1x1x6x2xf32>)
// RANK1: mha.split_heads %{{.*}} heads(2) : tensor<1x4x4xf32> -> tensor<1x2x4x2xf32>
// RANK1: mha.split_heads %{{.*}} heads(1) : tensor<1x4x2xf32> -> tensor<1x1x4x2xf32>
// RANK1: mha.split_heads %{{.*}} heads(1) : tensor<1x4x2xf32> -> tensor<1x1x4x2xf32>
// RANK1: mha.sdpa {{.*}} -> tensor<1x2x4x2xf32>
// RANK1: %[[Y:.*]] = mha.output_project %{{[0-9a-z]+}}, %{{[0-9a-z]+}} :
// RANK1-SAME: (tensor<1x4x4xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
// RANK1: return %[[Y]]
// Four ranks of one query head each: ranks 0 and 1 both keep key/value
// head 0.
// RANK0OF4-LABEL: func.func @cache(
// RANK0OF4-SAME: tensor<8x2xf32> {mha.name = "w_q", mha.shard = array<i64: 1, 0, 2>}
// RANK0OF4-SAME: tensor<8x2xf32> {mha.name = "w_k", mha.shard = array<i64: 1, 0, 2>}
// RANK0OF4-SAME: tensor<1x1x6x2xf32> {mha.name = "k_cache", mha.shard = array<i64: 1, 0, 1>}
// RANK0OF4: mha.output_project {{.*}} bias(
func.func @cache(%x: tensor<1x4x8xf32> {mha.name = "x"},
                 %w_q: tensor<8x8xf32> {mha.name = "w_q"},
                 %w_k: tensor<8x4xf32> {mha.name = "w_k"},
                 %w_v: tensor<8x4xf32> {mha.name = "w_v"},
                 %w_o: tensor<8x8xf32> {mha.name = "w_o"},
                 %b_q: tensor<8xf32> {mha.name = "b_q"},
                 %b_o: tensor<8xf32> {mha.name = "b_o"},
                 %k_cache: tensor<1x2x6x2xf32> {mha.name = "k_cache"},
                 %v_cache: tensor<1x2x6x2xf32> {mha.name = "v_cache"},
                 %lengths: tensor<1xi64> {mha.name = "cache_lengths"})
    -> (tensor<1x4x8xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) {
  %0 = mha.project %x, %w_q bias(%b_q) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  %1 = mha.split_heads %0 heads(4) : tensor<1x4x8xf32> -> tensor<1x4x4x2xf32>
  %2 = mha.project %x, %w_k : (tensor<1x4x8xf32>, tensor<8x4xf32>) -> tensor<1x4x4xf32>
  %3 = mha.split_heads %2 heads(2) : tensor<1x4x4xf32> -> tensor<1x2x4x2xf32>
  %4 = mha.project %x, %w_v : (tensor<1x4x8xf32>, tensor<8x4xf32>) -> tensor<1x4x4xf32>
  %5 = mha.split_heads %4 heads(2) : tensor<1x4x4xf32> -> tensor<1x2x4x2xf32>
  %6 = mha.rope %1 offsets(%lengths) layout("half") rotary_dim(2) base(1.000000e+04) scale(1.000000e+00) mscale(1.000000e+00) : (tensor<1x4x4x2xf32>, tensor<1xi64>) -> tensor<1x4x4x2xf32>
  %7 = mha.rope %3 offsets(%lengths) layout("half") rotary_dim(2) base(1.000000e+04) scale(1.000000e+00) mscale(1.000000e+00) : (tensor<1x2x4x2xf32>, tensor<1xi64>) -> tensor<1x2x4x2xf32>
  %8 = mha.cache_append %7 into %k_cache at %lengths : tensor<1x2x4x2xf32> into tensor<1x2x6x2xf32> at tensor<1xi64>
  %9 = mha.cache_append %5 into %v_cache at %lengths : tensor<1x2x4x2xf32> into tensor<1x2x6x2xf32> at tensor<1xi64>
  %10 = mha.sdpa %6, %8, %9 causal positions(%lengths) : (tensor<1x4x4x2xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>, tensor<1xi64>) -> tensor<1x4x4x2xf32>
  %11 = mha.concat_heads %10 : tensor<1x4x4x2xf32> -> tensor<1x4x8xf32>
  %12 = mha.output_project %11, %w_o bias(%b_o) : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  return %12, %8, %9 : tensor<1x4x8xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>
}

// A bf16 layer widens its weights with arith.extf: the split narrows the
// bf16 arguments, and the extf takes their shape.
// RANK1-LABEL: func.func @bf16(
// RANK1-SAME: tensor<8x4xbf16> {mha.name = "w_q", mha.shard = array<i64: 1, 4, 4>}
// RANK1: arith.extf %{{.*}} : tensor<8x4xbf16> to tensor<8x4xf32>
func.func @bf16(%x: tensor<1x4x8xf32>,
                %w_q: tensor<8x8xbf16> {mha.name = "w_q"},
                %w_kv: tensor<8x8xf32>, %w_o: tensor<8x8xf32>)
    -> tensor<1x4x8xf32> {
  %w = arith.extf %w_q : tensor<8x8xbf16> to tensor<8x8xf32>
  %0 = mha.project %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %1 = mha.split_heads %0 heads(4) : tensor<1x4x8xf32> -> tensor<1x4x4x2xf32>
  %2 = mha.project %x, %w_kv heads(4) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x4x2xf32>
  %3 = mha.project %x, %w_kv heads(4) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x4x2xf32>
  %4 = mha.sdpa %1, %2, %3 : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %5 = mha.output_project %4, %w_o : (tensor<1x4x4x2xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %5 : tensor<1x4x8xf32>
}
