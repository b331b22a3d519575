//===- MhaDialect.h - The mha dialect ---------------------------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHADIALECT_H
#define MHA_DIALECTS_MHADIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "dialects/MhaOpsDialect.h.inc"

#endif // MHA_DIALECTS_MHADIALECT_H
