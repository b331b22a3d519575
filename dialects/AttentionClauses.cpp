//===- AttentionClauses.cpp - The attention ops' optional clauses ---------===//
//
// The custom assembly of the clauses after an attention op's operands
// (mha.sdpa, mha.attention_weights, mha.attention): mask, causal and its
// alignment, positions, scale and the score steps, in any order.
//
//===----------------------------------------------------------------------===//

#include "dialects/AttentionClauses.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::mha;

namespace {

/// Where the parser puts each clause of an attention op; null for a clause
/// the op does not have (mha.attention has no `positions`).
struct ClauseSlots {
  OptionalOperand *mask = nullptr, *positions = nullptr;
  UnitAttr *causal = nullptr, *causalBottomRight = nullptr;
  FloatAttr *scale = nullptr;
  OptionalOperand *attnBias = nullptr, *alibiSlopes = nullptr, *sinks = nullptr;
  IntegerAttr *window = nullptr;
  FloatAttr *softcap = nullptr;
};

/// What the printer prints, in this order; null where absent.
struct ClauseValues {
  Value mask;
  UnitAttr causal, causalBottomRight;
  Value positions;
  FloatAttr scale;
  Value attnBias, alibiSlopes, sinks;
  IntegerAttr window;
  FloatAttr softcap;
};
} // namespace

/// The optional clauses after an attention op's operands: `mask(%m)`,
/// `causal` or `causal(top_left|bottom_right)`, `positions(%p)`,
/// `scale(x)`, and the score steps `bias(%b)`, `alibi(%s)`, `sinks(%s)`,
/// `window(W)` and `softcap(c)`, each at most once and in any order (a
/// reader writes `scale(0.125) causal` as readily as `causal scale(0.125)`);
/// they print in that order.
static ParseResult parseClauses(OpAsmParser &parser, ClauseSlots slots) {
  auto parseOperandClause = [&](OptionalOperand &operand) {
    OpAsmParser::UnresolvedOperand value;
    if (parser.parseLParen() || parser.parseOperand(value) ||
        parser.parseRParen())
      return failure();
    operand = value;
    return success();
  };
  auto parseFloatClause = [&](FloatAttr &attr) {
    return failure(
        parser.parseLParen() ||
        parser.parseAttribute(attr, parser.getBuilder().getF32Type()) ||
        parser.parseRParen());
  };
  struct OperandClause {
    StringRef keyword;
    OptionalOperand *slot;
  };
  OperandClause operandClauses[] = {{"mask", slots.mask},
                                    {"positions", slots.positions},
                                    {"bias", slots.attnBias},
                                    {"alibi", slots.alibiSlopes},
                                    {"sinks", slots.sinks}};
  while (true) {
    SMLoc loc = parser.getCurrentLocation();
    auto duplicate = [&](StringRef clause) {
      return parser.emitError(loc) << "`" << clause << "` is given twice";
    };
    bool parsedOperand = false;
    for (OperandClause &clause : operandClauses) {
      if (!clause.slot || failed(parser.parseOptionalKeyword(clause.keyword)))
        continue;
      if (clause.slot->has_value())
        return duplicate(clause.keyword);
      if (failed(parseOperandClause(*clause.slot)))
        return failure();
      parsedOperand = true;
      break;
    }
    if (parsedOperand)
      continue;
    if (succeeded(parser.parseOptionalKeyword("scale"))) {
      if (*slots.scale)
        return duplicate("scale");
      if (failed(parseFloatClause(*slots.scale)))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("softcap"))) {
      if (*slots.softcap)
        return duplicate("softcap");
      if (failed(parseFloatClause(*slots.softcap)))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("window"))) {
      if (*slots.window)
        return duplicate("window");
      int64_t size;
      if (parser.parseLParen() || parser.parseInteger(size) ||
          parser.parseRParen())
        return failure();
      *slots.window = parser.getBuilder().getI64IntegerAttr(size);
    } else if (succeeded(parser.parseOptionalKeyword("causal"))) {
      if (*slots.causal)
        return duplicate("causal");
      *slots.causal = parser.getBuilder().getUnitAttr();
      if (failed(parser.parseOptionalLParen()))
        continue;
      SMLoc alignmentLoc = parser.getCurrentLocation();
      StringRef alignment;
      if (parser.parseOptionalKeyword(&alignment) ||
          (alignment != "top_left" && alignment != "bottom_right"))
        return parser.emitError(alignmentLoc)
               << "expects the causal alignment top_left or bottom_right, got "
               << (alignment.empty() ? StringRef("no keyword") : alignment);
      if (alignment == "bottom_right")
        *slots.causalBottomRight = parser.getBuilder().getUnitAttr();
      if (parser.parseRParen())
        return failure();
    } else {
      return success();
    }
  }
}

/// Prints the clauses in one order: `mask(...)`, `causal` (top-left) or
/// `causal(bottom_right)`, `positions(...)`, `scale(...)`, then the score
/// steps in the order they apply. An op with `causal_bottom_right` but no
/// `causal` fails to verify, and such an op is printed in the generic form,
/// which keeps both attributes.
static void printClauses(OpAsmPrinter &printer, const ClauseValues &values) {
  llvm::SmallVector<std::function<void()>> clauses;
  auto operandClause = [&](StringRef keyword, Value value) {
    if (value)
      clauses.push_back([&printer, keyword, value] {
        printer << keyword << "(" << value << ")";
      });
  };
  auto floatClause = [&](StringRef keyword, FloatAttr attr) {
    if (attr)
      clauses.push_back([&printer, keyword, attr] {
        printer << keyword << "(";
        printer.printAttributeWithoutType(attr);
        printer << ")";
      });
  };
  operandClause("mask", values.mask);
  if (values.causal)
    clauses.push_back([&] {
      printer << "causal";
      if (values.causalBottomRight)
        printer << "(bottom_right)";
    });
  operandClause("positions", values.positions);
  floatClause("scale", values.scale);
  floatClause("softcap", values.softcap);
  operandClause("alibi", values.alibiSlopes);
  operandClause("bias", values.attnBias);
  if (values.window)
    clauses.push_back(
        [&] { printer << "window(" << values.window.getInt() << ")"; });
  operandClause("sinks", values.sinks);
  llvm::interleave(
      clauses, printer.getStream(), [](auto &print) { print(); }, " ");
}

ParseResult mlir::mha::parseAttentionClauses(
    OpAsmParser &parser, OptionalOperand &mask, UnitAttr &causal,
    UnitAttr &causalBottomRight, OptionalOperand &positions, FloatAttr &scale,
    OptionalOperand &attnBias, OptionalOperand &alibiSlopes,
    OptionalOperand &sinks, IntegerAttr &window, FloatAttr &softcap) {
  return parseClauses(parser,
                      {&mask, &positions, &causal, &causalBottomRight, &scale,
                       &attnBias, &alibiSlopes, &sinks, &window, &softcap});
}

void mlir::mha::printAttentionClauses(OpAsmPrinter &printer, Operation *,
                                      Value mask, UnitAttr causal,
                                      UnitAttr causalBottomRight,
                                      Value positions, FloatAttr scale,
                                      Value attnBias, Value alibiSlopes,
                                      Value sinks, IntegerAttr window,
                                      FloatAttr softcap) {
  printClauses(printer, {mask, causal, causalBottomRight, positions, scale,
                         attnBias, alibiSlopes, sinks, window, softcap});
}

ParseResult mlir::mha::parseCausalAndScale(
    OpAsmParser &parser, UnitAttr &causal, UnitAttr &causalBottomRight,
    FloatAttr &scale, OptionalOperand &attnBias, OptionalOperand &alibiSlopes,
    OptionalOperand &sinks, IntegerAttr &window, FloatAttr &softcap) {
  return parseClauses(parser,
                      {nullptr, nullptr, &causal, &causalBottomRight, &scale,
                       &attnBias, &alibiSlopes, &sinks, &window, &softcap});
}

void mlir::mha::printCausalAndScale(OpAsmPrinter &printer, Operation *,
                                    UnitAttr causal, UnitAttr causalBottomRight,
                                    FloatAttr scale, Value attnBias,
                                    Value alibiSlopes, Value sinks,
                                    IntegerAttr window, FloatAttr softcap) {
  printClauses(printer, {Value(), causal, causalBottomRight, Value(), scale,
                         attnBias, alibiSlopes, sinks, window, softcap});
}
