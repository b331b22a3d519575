// RUN: mha-opt %s -split-input-file -mha-lower-to-linalg | FileCheck %s

// The decomposed lowering of the score steps: the scores are scaled first,
// soft-capped with math.tanh, get ALiBi's slope·(key - query position) and
// the bias, whose dimensions of size 1 read index 0; the softmax then takes
// them with a scale of 1 (log2(e) in the exponent, not scale·log2(e)).

// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, d3)>
// CHECK-DAG: #[[HEAD:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @softcap_alibi_bias(
//       CHECK:   %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
//       CHECK:   %[[OFFSET:.+]] = arith.constant 2 : index
//       CHECK:   %[[SCALE:.+]] = arith.constant 0.353553385 : f32
//       CHECK:   %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #[[HEAD]], #{{.+}}]
//       CHECK:   ^bb0(%[[S:.+]]: f32, %[[B:.+]]: f32, %[[SLOPE:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[J:.+]] = linalg.index 3 : index
//       CHECK:     %[[I:.+]] = linalg.index 2 : index
//       CHECK:     %[[P:.+]] = arith.addi %[[I]], %[[OFFSET]] : index
//       CHECK:     %[[SCALED:.+]] = arith.mulf %[[S]], %[[SCALE]] : f32
//       CHECK:     %[[RATIO:.+]] = arith.divf %[[SCALED]], %[[CAP]] : f32
//       CHECK:     %[[TANH:.+]] = math.tanh %[[RATIO]] : f32
//       CHECK:     %[[CAPPED:.+]] = arith.mulf %[[CAP]], %[[TANH]] : f32
//       CHECK:     %[[DIST:.+]] = arith.subi %[[J]], %[[P]] : index
//       CHECK:     %[[WIDE:.+]] = arith.index_cast %[[DIST]] : index to i64
//       CHECK:     %[[FDIST:.+]] = arith.sitofp %[[WIDE]] : i64 to f32
//       CHECK:     %[[ALIBI:.+]] = arith.mulf %[[SLOPE]], %[[FDIST]] : f32
//       CHECK:     %[[WITH:.+]] = arith.addf %[[CAPPED]], %[[ALIBI]] : f32
//       CHECK:     arith.addf %[[WITH]], %[[B]] : f32
//       CHECK:   arith.maxnumf
//       CHECK:   arith.mulf %{{.+}}, %[[LOG2E]] : f32
//       CHECK:   math.exp2
func.func @softcap_alibi_bias(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %b: tensor<1x2x1x5xf32>, %slopes: tensor<2xf32>) -> tensor<2x2x3x8xf32> {
  %o = mha.sdpa %q, %k, %v causal(bottom_right) bias(%b) alibi(%slopes) softcap(30.0) : (tensor<2x2x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x2x1x5xf32>, tensor<2xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// The bias's full dimensions read the loop's; [B, 1, T, S] broadcasts only
// the head.
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @bias_per_batch(
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}]
func.func @bias_per_batch(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %b: tensor<2x1x3x5xf32>) -> tensor<2x2x3x8xf32> {
  %o = mha.sdpa %q, %k, %v bias(%b) : (tensor<2x2x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x1x3x5xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// The window alone changes no score: the raw scores keep their late scale,
// and key j is allowed when j <= i and j + W > i, in the row maximum and
// in the exponentials alike.
// CHECK-LABEL: func.func @window(
//   CHECK-DAG:   %[[LOG2SCALE:.+]] = arith.constant 0.510069728 : f32
//   CHECK-DAG:   %[[W:.+]] = arith.constant 3 : index
//       CHECK:   linalg.generic
//       CHECK:     %[[I:.+]] = linalg.index 2 : index
//       CHECK:     %[[J:.+]] = linalg.index 3 : index
//       CHECK:     %[[CAUSAL:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
//       CHECK:     %[[END:.+]] = arith.addi %[[J]], %[[W]] : index
//       CHECK:     %[[IN:.+]] = arith.cmpi sgt, %[[END]], %[[I]] : index
//       CHECK:     arith.andi %[[CAUSAL]], %[[IN]] : i1
//       CHECK:     arith.maxnumf
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf %{{.+}}, %[[LOG2SCALE]] : f32
//       CHECK:     math.exp2
//       CHECK:     arith.cmpi sgt
func.func @window(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32> {
  %o = mha.sdpa %q, %k, %v causal window(3) : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  return %o : tensor<1x2x6x8xf32>
}

// -----

// Sinks: the row maxima start at the head's sink, the row sums at
// e^(sink - max), with a max of -inf (a row that no key reaches) read as 0.
// attention_weights shares the softmax.
// CHECK-DAG: #[[SINK:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sinks(
//  CHECK-SAME:     %[[SINKS:[^:]+]]: tensor<2xf32>
//       CHECK:   %[[MAXINIT:.+]] = linalg.generic {indexing_maps = [#[[SINK]], #[[ROW]]]{{.*}} ins(%[[SINKS]] : tensor<2xf32>)
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.+}} outs(%[[MAXINIT]] :
//       CHECK:     arith.maxnumf
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpf oeq
//       CHECK:     math.exp2
//       CHECK:   %[[SUMINIT:.+]] = linalg.generic {indexing_maps = [#[[SINK]], #[[ROW]], #[[ROW]]]{{.*}} ins(%[[SINKS]], %[[MAX]] :
//       CHECK:     %[[NONE:.+]] = arith.cmpf oeq, %{{.+}}, %{{.+}} : f32
//       CHECK:     %[[FINITE:.+]] = arith.select %[[NONE]], %{{.+}}, %{{.+}} : f32
//       CHECK:     arith.subf %{{.+}}, %[[FINITE]] : f32
//       CHECK:     math.exp2
//       CHECK:   linalg.generic {{.+}} outs(%[[SUMINIT]] :
//       CHECK:     arith.addf
func.func @sinks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %sinks: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %p = mha.attention_weights %q, %k causal sinks(%sinks) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}

// -----

// With a cache, ALiBi and the window measure from positions[b] + i.
// CHECK-LABEL: func.func @positions(
//  CHECK-SAME:     %[[POS:[^:]+]]: tensor<2xi64>
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[POS]] :
//       CHECK:     %[[I:.+]] = linalg.index 2 : index
//       CHECK:     %[[AT:.+]] = arith.addi %[[I]], %{{.+}} : index
//       CHECK:     math.tanh
//       CHECK:     arith.subi %{{.+}}, %[[AT]] : index
func.func @positions(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x2x16x8xf32>, %pos: tensor<2xi64>, %slopes: tensor<2xf32>) -> tensor<2x2x1x8xf32> {
  %o = mha.sdpa %q, %k, %v causal positions(%pos) alibi(%slopes) window(4) softcap(20.0) : (tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}
