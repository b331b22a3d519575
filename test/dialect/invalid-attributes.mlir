// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The attributes the compiler puts on other dialects' ops are the dialect's
// (MhaDialect.td, discardableAttrs) and verified by it: a stale or mistyped
// one is refused where the graph is read, not ignored by a pass.

func.func @projection_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.projection to be a unit attribute, got 1 : i64}}
  %0 = linalg.matmul {mha.projection = 1} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @register_block_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.register_block to be a unit attribute, got "yes"}}
  %0 = linalg.matmul {mha.register_block = "yes"} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{expects mha.prepare_functions to be an array of function symbols, got ["layer_prepare0"]}}
func.func @layer(%x: tensor<4xf32>) attributes {mha.prepare_functions = ["layer_prepare0"]} {
  return
}

// -----

func.func @prepare_functions_not_on_a_function(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.prepare_functions on a function}}
  %0 = linalg.matmul {mha.prepare_functions = [@f]} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{unknown attribute mha.prepared of the mha dialect (on an operation)}}
func.func @unknown(%x: tensor<4xf32>) attributes {mha.prepared = [@f]} {
  return
}

// -----

func.func @name_on_an_operation(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.name on a function argument, not an operation}}
  %0 = linalg.matmul {mha.name = "x"} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @row_part_not_unit(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects mha.row_part to be a unit attribute, got 2 : i64}}
  %0 = linalg.matmul {mha.row_part = 2} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
