//===- MhaOnlineAttention.h - The online-softmax update op ------*- C++ -*-===//

#ifndef MHA_DIALECTS_MHAONLINEATTENTION_H
#define MHA_DIALECTS_MHAONLINEATTENTION_H

#include "dialects/MhaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/MhaOnlineAttention.h.inc"

#endif // MHA_DIALECTS_MHAONLINEATTENTION_H
