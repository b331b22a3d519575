func.func @mha(%o: tensor<?x2x?x3xf32>, %w: tensor<6x5xf32>, %b: tensor<5xf32>) -> tensor<?x?x5xf32> {
  %y = mha.output_project %o, %w bias(%b) : (tensor<?x2x?x3xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<?x?x5xf32>
  return %y : tensor<?x?x5xf32>
}
