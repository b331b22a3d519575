//===- MhaDialect.cpp - The mha dialect -----------------------------------===//

#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"

using namespace mlir;
using namespace mlir::mha;

#include "dialects/MhaOpsDialect.cpp.inc"

void MhaDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/MhaOps.cpp.inc"
      >();
}
