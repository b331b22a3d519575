// mha-split-heads: one rank's share of the heads, as `mha-run --parallel
// heads` compiles it on each rank (docs/distributed.md).
// RUN: mha-opt %s --mha-split-heads="rank=0 ranks=2" | FileCheck %s --check-prefix=RANK0
// RUN: mha-opt %s --mha-split-heads="rank=1 ranks=2" | FileCheck %s --check-prefix=RANK1
// RUN: mha-opt %s --mha-split-heads="rank=3 ranks=4" | FileCheck %s --check-prefix=RANK3OF4
// RUN: mha-opt %s --mha-split-heads="rank=0 ranks=1" | FileCheck %s --check-prefix=WHOLE

// Four query heads of dk = 2 on two key/value heads: each of two ranks keeps
// two query heads and the one key/value head they read; its columns of the
// projections, its rows of w_o, its slopes, sinks and score bias. The output
// bias stays on rank 0: the ranks' outputs add up to the layer's.
// RANK0-LABEL: func.func @gqa(
// RANK0-SAME: %{{.*}}: tensor<1x4x8xf32> {mha.name = "x"}
// RANK0-SAME: %{{.*}}: tensor<8x4xf32> {mha.name = "w_q", mha.shard = array<i64: 1, 0, 4>}
// RANK0-SAME: %{{.*}}: tensor<8x2xf32> {mha.name = "w_k", mha.shard = array<i64: 1, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<8x2xf32> {mha.name = "w_v", mha.shard = array<i64: 1, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<4x8xf32> {mha.name = "w_o", mha.shard = array<i64: 0, 0, 4>}
// RANK0-SAME: %{{.*}}: tensor<4xf32> {mha.name = "b_q", mha.shard = array<i64: 0, 0, 4>}
// RANK0-SAME: %{{.*}}: tensor<2xf32> {mha.name = "b_k", mha.shard = array<i64: 0, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<2xf32> {mha.name = "b_v", mha.shard = array<i64: 0, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<8xf32> {mha.name = "b_o"}
// RANK0-SAME: %{{.*}}: tensor<2xf32> {mha.name = "alibi_slopes", mha.shard = array<i64: 0, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<2xf32> {mha.name = "sinks", mha.shard = array<i64: 0, 0, 2>}
// RANK0-SAME: %{{.*}}: tensor<1x2x4x4xf32> {mha.name = "attn_bias", mha.shard = array<i64: 1, 0, 2>}
// RANK0: mha.attention {{.*}} bias_o(%{{.*}}) heads(2) kv_heads(1)
// RANK1-LABEL: func.func @gqa(
// RANK1-SAME: mha.shard = array<i64: 1, 4, 4>
// RANK1-SAME: mha.shard = array<i64: 1, 2, 2>
// RANK1-SAME: mha.shard = array<i64: 1, 2, 2>
// RANK1-SAME: tensor<4x8xf32> {mha.name = "w_o", mha.shard = array<i64: 0, 4, 4>}
// RANK1-SAME: tensor<8xf32> {mha.name = "b_o"}
// RANK1-SAME: tensor<1x2x4x4xf32> {mha.name = "attn_bias", mha.shard = array<i64: 1, 2, 2>}
// RANK1: mha.attention
// RANK1-NOT: bias_o
// RANK1-SAME: heads(2) kv_heads(1)
// Four ranks of one query head: the ranks that share a key/value head each
// keep a copy of it.
// RANK3OF4-LABEL: func.func @gqa(
// RANK3OF4-SAME: tensor<8x2xf32> {mha.name = "w_q", mha.shard = array<i64: 1, 6, 2>}
// RANK3OF4-SAME: tensor<8x2xf32> {mha.name = "w_k", mha.shard = array<i64: 1, 2, 2>}
// RANK3OF4: heads(1) kv_heads(1)
// One rank keeps the whole layer.
// WHOLE-LABEL: func.func @gqa(
// WHOLE-NOT: mha.shard
// WHOLE: heads(4) kv_heads(2)
func.func @gqa(%x: tensor<1x4x8xf32> {mha.name = "x"},
               %w_q: tensor<8x8xf32> {mha.name = "w_q"},
               %w_k: tensor<8x4xf32> {mha.name = "w_k"},
               %w_v: tensor<8x4xf32> {mha.name = "w_v"},
               %w_o: tensor<8x8xf32> {mha.name = "w_o"},
               %b_q: tensor<8xf32> {mha.name = "b_q"},
               %b_k: tensor<4xf32> {mha.name = "b_k"},
               %b_v: tensor<4xf32> {mha.name = "b_v"},
               %b_o: tensor<8xf32> {mha.name = "b_o"},
               %slopes: tensor<4xf32> {mha.name = "alibi_slopes"},
               %sinks: tensor<4xf32> {mha.name = "sinks"},
               %bias: tensor<1x4x4x4xf32> {mha.name = "attn_bias"})
    -> tensor<1x4x8xf32> {
  %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o) bias_q(%b_q)
      bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(4) kv_heads(2)
      alibi(%slopes) bias(%bias) sinks(%sinks)
      : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>,
         tensor<8x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>,
         tensor<8xf32>, tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// A weight the layer does not have to itself (here w_k is also w_v) is
// sliced in the graph; the argument keeps its full size.
// RANK1-LABEL: func.func @shared_weight(
// RANK1-SAME: %[[W:[a-z0-9]+]]: tensor<8x8xf32>, %{{.*}}: tensor<4x8xf32> {mha.shard = array<i64: 0, 4, 4>})
// RANK1: %[[K:.*]] = tensor.extract_slice %[[W]][0, 4] [8, 4] [1, 1]
// RANK1: %[[V:.*]] = tensor.extract_slice %[[W]][0, 4] [8, 4] [1, 1]
// RANK1: mha.attention %{{.*}} weights(%{{.*}}, %[[K]], %[[V]], %{{.*}}) heads(2)
func.func @shared_weight(%x: tensor<2x?x8xf32>, %w_q: tensor<8x8xf32>,
                         %w_kv: tensor<8x8xf32>, %w_o: tensor<8x8xf32>)
    -> tensor<2x?x8xf32> {
  %y = mha.attention %x weights(%w_q, %w_kv, %w_kv, %w_o) heads(4) causal
      : (tensor<2x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>) -> tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}
