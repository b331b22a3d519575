// RUN: mha-opt %s -split-input-file -verify-diagnostics

// The mha.name of a function argument is an identifier: mha-run reads it
// from DIR/<name>.npy and mha-compile writes it into C, so a name with a
// path in it ("../../x") must not read a file outside DIR.

// expected-error @+1 {{expects the mha.name of argument #0 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got "../../x"}}
func.func @name_with_path(%x: tensor<4xf32> {mha.name = "../../x"}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #1 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got "x/y"}}
func.func @name_with_separator(%x: tensor<4xf32> {mha.name = "x"}, %y: tensor<4xf32> {mha.name = "x/y"}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #0 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got ""}}
func.func @empty_name(%x: tensor<4xf32> {mha.name = ""}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #0 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got "1x"}}
func.func @name_starts_with_digit(%x: tensor<4xf32> {mha.name = "1x"}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #0 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got ".."}}
func.func @name_dot_dot(%x: tensor<4xf32> {mha.name = ".."}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #0 to be an identifier ([A-Za-z_][A-Za-z0-9_]*), got "x\0A"}}
func.func @name_with_newline(%x: tensor<4xf32> {mha.name = "x\n"}) {
  return
}

// -----

// expected-error @+1 {{expects the mha.name of argument #0 to be a string, got 3 : i64}}
func.func @name_not_a_string(%x: tensor<4xf32> {mha.name = 3}) {
  return
}

// -----

// Identifiers of every allowed kind verify.
func.func @negative_identifiers(%a: tensor<4xf32> {mha.name = "_"},
                                %b: tensor<4xf32> {mha.name = "w_q"},
                                %c: tensor<4xf32> {mha.name = "X9_z"}) {
  return
}
