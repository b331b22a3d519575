//===- MhaOps.h - Operations of the mha dialect -----------------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHAOPS_H
#define MHA_DIALECTS_MHAOPS_H

#include "dialects/MhaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/MhaOps.h.inc"

#endif // MHA_DIALECTS_MHAOPS_H
