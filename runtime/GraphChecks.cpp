//===- GraphChecks.cpp - Graphs the compiled code cannot run --------------===//

#include "runtime/GraphChecks.h"
#include "runtime/ReferenceGraphOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using llvm::createStringError;

namespace mha::runtime {

using graphref::placeOf;

static std::string nameOf(Operation *function) {
  return ("@" + SymbolTable::getSymbolName(function).getValue()).str();
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

namespace {
/// A depth-first walk through the functions the entry calls. The pipeline
/// lowers calls as they are (it does not inline), so a call is fine when it
/// reaches a function with a body, and the walk ends because a function that
/// leads back to itself is an error. The walk keeps its own stack: a chain
/// of calls as long as a hostile file makes it must not overflow this one.
class CallWalker {
public:
  llvm::Error run(FunctionOpInterface entry);

private:
  /// A function on the way from the entry, and the next of its calls.
  struct Frame {
    FunctionOpInterface function;
    SmallVector<CallOpInterface> calls;
    size_t next = 0;
  };

  void enter(FunctionOpInterface function);
  llvm::Expected<FunctionOpInterface> resolve(CallOpInterface call);
  llvm::Error recursion(Operation *callee) const;

  /// The calls from the entry to the function on top: each frame's call
  /// `next - 1`.
  SmallVector<Frame> stack;
  /// False while a function is on the stack, true once all its calls are
  /// fine.
  DenseMap<Operation *, bool> visited;
  SymbolTableCollection symbols;
};
} // namespace

void CallWalker::enter(FunctionOpInterface function) {
  visited[function] = false;
  Frame frame{function, {}, 0};
  function->walk([&](CallOpInterface call) { frame.calls.push_back(call); });
  stack.push_back(std::move(frame));
}

llvm::Error CallWalker::run(FunctionOpInterface entry) {
  enter(entry);
  while (!stack.empty()) {
    Frame &top = stack.back();
    if (top.next == top.calls.size()) {
      visited[top.function] = true;
      stack.pop_back();
      continue;
    }
    auto callee = resolve(top.calls[top.next++]);
    if (!callee)
      return callee.takeError();
    auto state = visited.find(*callee);
    if (state == visited.end())
      enter(*callee);
    else if (!state->second)
      return recursion(*callee);
  }
  return llvm::Error::success();
}

/// The function `call` calls, which must have a body.
llvm::Expected<FunctionOpInterface> CallWalker::resolve(CallOpInterface call) {
  Operation *caller = call->getParentOfType<FunctionOpInterface>();
  auto symbol = dyn_cast<SymbolRefAttr>(call.getCallableForCallee());
  if (!symbol)
    return createStringError(llvm::formatv(
        "{0} makes an indirect call ({1}); a graph calls its functions by "
        "name",
        nameOf(caller), placeOf(call)));
  Operation *callee = symbols.lookupNearestSymbolFrom(call, symbol);
  auto function = dyn_cast_or_null<FunctionOpInterface>(callee);
  if (!function || function.isExternal())
    return createStringError(llvm::formatv(
        "{0} calls {1} ({2}), which the graph {3}; the compiled code can "
        "only call functions that the graph defines",
        nameOf(caller), symbol, placeOf(call),
        callee ? "declares but does not define" : "does not have"));
  return function;
}

llvm::Error CallWalker::recursion(Operation *callee) const {
  auto describe = [](CallOpInterface call) {
    Operation *caller = call->getParentOfType<FunctionOpInterface>();
    return llvm::formatv("{0} calls {1} ({2})", nameOf(caller),
                         cast<SymbolRefAttr>(call.getCallableForCallee()),
                         placeOf(call))
        .str();
  };
  // The cycle: the calls from `callee`'s frame to the top, whose call leads
  // back to it.
  SmallVector<std::string> steps;
  bool inCycle = false;
  for (const Frame &frame : stack) {
    inCycle |= frame.function == callee;
    if (inCycle)
      steps.push_back(describe(frame.calls[frame.next - 1]));
  }
  // A cycle through thousands of functions stays one readable line.
  constexpr size_t kHead = 3, kTail = 2;
  if (steps.size() > kHead + kTail + 1) {
    size_t left = steps.size() - kHead - kTail;
    steps.erase(steps.begin() + kHead, steps.end() - kTail);
    steps.insert(steps.begin() + kHead,
                 llvm::formatv("... {0} more calls ...", left).str());
  }
  CallOpInterface back = stack.back().calls[stack.back().next - 1];
  std::string cycle = steps.size() == 1
                          ? llvm::formatv("{0} calls itself ({1})",
                                          nameOf(callee), placeOf(back))
                                .str()
                          : llvm::join(steps, ", ");
  return createStringError(llvm::formatv(
      "{0}: a graph cannot recurse (the compiled code would call without "
      "end)",
      cycle));
}

llvm::Error checkCalls(func::FuncOp entry) { return CallWalker().run(entry); }

//===----------------------------------------------------------------------===//
// An output that is an argument
//===----------------------------------------------------------------------===//

namespace {
/// The argument whose buffer a result is once bufferized.
struct ArgumentBehind {
  unsigned argument;
  /// The destination-style op that writes into the argument, if the result
  /// is not the argument as it is.
  Operation *writer = nullptr;
};
} // namespace

/// The argument of its function that `value` is, or is written into in
/// place: followed through destination-style ops to their destination and
/// through calls to what the callee returns (bufferization's "equivalent
/// buffers", as far as a graph can reach them). Calls end: checkCalls ran.
static std::optional<ArgumentBehind>
argumentBehind(Value value, SymbolTableCollection &symbols) {
  Operation *writer = nullptr;
  // The calls stepped into, innermost last: an argument of the callee is
  // that call's operand. A stack of its own, as in CallWalker.
  SmallVector<CallOpInterface> calls;
  while (true) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      Block *block = argument.getOwner();
      if (!block->isEntryBlock() ||
          !isa<FunctionOpInterface>(block->getParentOp()))
        return std::nullopt;
      if (calls.empty())
        return ArgumentBehind{argument.getArgNumber(), writer};
      CallOpInterface call = calls.pop_back_val();
      if (argument.getArgNumber() >= call.getArgOperands().size())
        return std::nullopt;
      value = call.getArgOperands()[argument.getArgNumber()];
      continue;
    }
    auto result = cast<OpResult>(value);
    Operation *op = result.getOwner();
    if (auto destination = dyn_cast<DestinationStyleOpInterface>(op)) {
      writer = op;
      value = destination.getTiedOpOperand(result)->get();
      continue;
    }
    auto call = dyn_cast<CallOpInterface>(op);
    if (!call)
      return std::nullopt;
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&symbols));
    if (!callee || callee.isExternal() ||
        !callee.getFunctionBody().hasOneBlock())
      return std::nullopt;
    Operation *ret = callee.getFunctionBody().front().getTerminator();
    if (!ret || ret->getNumOperands() <= result.getResultNumber())
      return std::nullopt;
    calls.push_back(call);
    value = ret->getOperand(result.getResultNumber());
  }
}

/// The value `func` returns as its result `index`, if it has one return.
static Value returnedValue(func::FuncOp func, unsigned index) {
  if (func.getBody().empty())
    return {};
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret || ret.getNumOperands() <= index)
    return {};
  return ret.getOperand(index);
}

/// `module` canonicalized as the pipeline's first canonicalize does.
static OwningOpRef<ModuleOp> canonicalizedCopy(ModuleOp module) {
  MLIRContext *context = module.getContext();
  RewritePatternSet patterns(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    name.getCanonicalizationPatterns(patterns, context);
  OwningOpRef<ModuleOp> copy = module.clone();
  // The graph verified; what a pattern might say about the copy is no
  // message for the user.
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  (void)applyPatternsGreedily(copy->getOperation(),
                              FrozenRewritePatternSet(std::move(patterns)));
  return copy;
}

static llvm::Error outputIsArgument(func::FuncOp entry,
                                    const GraphSignature &signature,
                                    ArgumentBehind found, std::string how) {
  const std::string &name = signature.arguments[found.argument].name;
  if (found.writer)
    return createStringError(llvm::formatv(
        "result {0} of @{1} is written into its argument '{2}'{3} by {4} "
        "({5}): the compiled code would update '{2}' in place and return "
        "nothing; compute the result into a new tensor (tensor.empty)",
        signature.resultIndex, entry.getSymName(), name, how,
        found.writer->getName(), placeOf(found.writer)));
  return createStringError(llvm::formatv(
      "result {0} of @{1} is its argument '{2}'{3}: nothing to compute (the "
      "compiled code would return nothing)",
      signature.resultIndex, entry.getSymName(), name, how));
}

llvm::Error checkOutputIsComputed(func::FuncOp entry,
                                  const GraphSignature &signature) {
  Value output = returnedValue(entry, signature.resultIndex);
  if (!output)
    return llvm::Error::success();
  Operation *producer = output.getDefiningOp();
  SymbolTableCollection symbols;
  if (auto found = argumentBehind(output, symbols))
    return outputIsArgument(entry, signature, *found,
                            producer && !found->writer
                                ? llvm::formatv(" through {0} ({1})",
                                                producer->getName(),
                                                placeOf(producer))
                                      .str()
                                : "");
  // The ops between may fold away only once canonicalized, as the pipeline
  // does before bufferization (mha.concat_heads of mha.split_heads).
  auto module = entry->getParentOfType<ModuleOp>();
  if (!module || !producer)
    return llvm::Error::success();
  OwningOpRef<ModuleOp> copy = canonicalizedCopy(module);
  auto copiedEntry = copy->lookupSymbol<func::FuncOp>(entry.getSymName());
  Value folded =
      copiedEntry ? returnedValue(copiedEntry, signature.resultIndex) : Value();
  SymbolTableCollection copiedSymbols;
  if (auto found =
          folded ? argumentBehind(folded, copiedSymbols) : std::nullopt)
    return outputIsArgument(
        entry, signature, *found,
        llvm::formatv(" once canonicalized (its {0} at {1} folds to it)",
                      producer->getName(), placeOf(producer))
            .str());
  return llvm::Error::success();
}

} // namespace mha::runtime
