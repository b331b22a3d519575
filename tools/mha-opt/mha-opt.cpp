//===- mha-opt.cpp - mlir-opt with the mha dialect and passes -------------===//

#include "compiler/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  mlir::mha::registerMhaPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv,
                        "mha optimizer driver: the mha dialect, its passes and "
                        "pipelines\n",
                        registry));
}
