// mha-split-heads on a layer with a score_mod region: the region still
// receives the head of the whole layer, so rank 1 of 2 adds its first head
// (2) to the local one; rank 0's heads are the layer's.
// RUN: mha-opt %s --mha-split-heads="rank=0 ranks=2" | FileCheck %s --check-prefix=RANK0
// RUN: mha-opt %s --mha-split-heads="rank=1 ranks=2" | FileCheck %s --check-prefix=RANK1

// RANK0-LABEL: func.func @region(
// RANK0: mha.attention {{.*}} heads(2) causal score_mod {
// RANK0-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// RANK0-NEXT: tensor.extract %{{.*}}[%[[H]]]
// RANK1-LABEL: func.func @region(
// RANK1: %[[FIRST:.*]] = arith.constant 2 : index
// RANK1: mha.attention {{.*}} heads(2) causal score_mod {
// RANK1-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// RANK1-NEXT: %[[WHOLE:.*]] = arith.addi %[[H]], %[[FIRST]] : index
// RANK1-NEXT: tensor.extract %{{.*}}[%[[WHOLE]]]
func.func @region(%x: tensor<1x4x8xf32> {mha.name = "x"},
                  %wq: tensor<8x8xf32> {mha.name = "w_q"},
                  %wk: tensor<8x8xf32> {mha.name = "w_k"},
                  %wv: tensor<8x8xf32> {mha.name = "w_v"},
                  %wo: tensor<8x8xf32> {mha.name = "w_o"},
                  %gain: tensor<4xf32> {mha.name = "gain"}) -> tensor<1x4x8xf32> {
  %y = mha.attention %x weights(%wq, %wk, %wv, %wo) heads(4) causal score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
    %g = tensor.extract %gain[%h] : tensor<4xf32>
    %t = arith.mulf %s, %g : f32
    mha.yield %t : f32
  } : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
       tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
