//===- AttentionClauses.h - The attention ops' optional clauses -*- C++ -*-===//
//
// The custom<AttentionClauses> and custom<CausalAndScale> directives of
// dialects/MhaAttentionOps.td: the optional clauses after an attention op's
// operands, each at most once and in any order, printed in one order.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_DIALECTS_ATTENTIONCLAUSES_H
#define MHA_DIALECTS_ATTENTIONCLAUSES_H

#include "mlir/IR/OpImplementation.h"

#include <optional>

namespace mlir {
namespace mha {

using OptionalOperand = std::optional<OpAsmParser::UnresolvedOperand>;

/// mha.sdpa's and mha.attention_weights' clauses: `mask(%m)`, `causal`
/// (`causal(top_left|bottom_right)`), `positions(%p)`, `scale(x)`,
/// `softcap(c)`, `alibi(%s)`, `bias(%b)`, `window(W)`, `sinks(%s)`.
ParseResult parseAttentionClauses(OpAsmParser &parser, OptionalOperand &mask,
                                  UnitAttr &causal, UnitAttr &causalBottomRight,
                                  OptionalOperand &positions, FloatAttr &scale,
                                  OptionalOperand &attnBias,
                                  OptionalOperand &alibiSlopes,
                                  OptionalOperand &sinks, IntegerAttr &window,
                                  FloatAttr &softcap);
void printAttentionClauses(OpAsmPrinter &printer, Operation *, Value mask,
                           UnitAttr causal, UnitAttr causalBottomRight,
                           Value positions, FloatAttr scale, Value attnBias,
                           Value alibiSlopes, Value sinks, IntegerAttr window,
                           FloatAttr softcap);

/// mha.attention's: the same without `mask` and `positions` (the layer's
/// mask is an operand of its own).
ParseResult parseCausalAndScale(OpAsmParser &parser, UnitAttr &causal,
                                UnitAttr &causalBottomRight, FloatAttr &scale,
                                OptionalOperand &attnBias,
                                OptionalOperand &alibiSlopes,
                                OptionalOperand &sinks, IntegerAttr &window,
                                FloatAttr &softcap);
void printCausalAndScale(OpAsmPrinter &printer, Operation *, UnitAttr causal,
                         UnitAttr causalBottomRight, FloatAttr scale,
                         Value attnBias, Value alibiSlopes, Value sinks,
                         IntegerAttr window, FloatAttr softcap);

} // namespace mha
} // namespace mlir

#endif // MHA_DIALECTS_ATTENTIONCLAUSES_H
