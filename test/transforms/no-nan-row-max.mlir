// RUN: mha-opt %s -mha-no-nan-row-max | FileCheck %s

// The softmax's row maximum (maxnumf) may be reduced without NaN checks;
// a maximumf (NaN-propagating, as the merge of key splits uses) and a sum
// keep their semantics, and flags already set are kept.
// CHECK-LABEL: func.func @reductions
//       CHECK:   vector.reduction <maxnumf>, %{{.+}} fastmath<nnan> : vector<16xf32> into f32
//       CHECK:   vector.reduction <maxnumf>, %{{.+}}, %{{.+}} fastmath<nnan,contract> : vector<16xf32> into f32
//       CHECK:   vector.reduction <maximumf>, %{{.+}} : vector<16xf32> into f32
//       CHECK:   vector.reduction <add>, %{{.+}} : vector<16xf32> into f32
func.func @reductions(%v: vector<16xf32>, %acc: f32) -> (f32, f32, f32, f32) {
  %0 = vector.reduction <maxnumf>, %v : vector<16xf32> into f32
  %1 = vector.reduction <maxnumf>, %v, %acc fastmath<contract> : vector<16xf32> into f32
  %2 = vector.reduction <maximumf>, %v : vector<16xf32> into f32
  %3 = vector.reduction <add>, %v : vector<16xf32> into f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}
