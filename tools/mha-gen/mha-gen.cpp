//===- mha-gen.cpp - Write the graph of one attention configuration -------===//
//
// Prints a module with one public function `@mha` whose body is a single
// `mha.attention`. Arguments carry `{mha.name = "..."}` with the names of the
// reference cases (x kv mask w_q w_k w_v w_o b_q b_k b_v b_o), which is how
// `mha-run --inputs DIR` finds `DIR/<name>.npy`.
//
// Exit codes: 0 success, 2 a bad option (or an output file that cannot be
// written).
//
//===----------------------------------------------------------------------===//

#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"
#include "tools/support/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory genCategory("mha-gen options");

// Sizes. Those whose default derives from another (S from T, dk from D/H,
// ...) are "not given" until given: any value given must be positive, 0
// included (see `resolveDefaults`).
cl::opt<int64_t> batch("batch", cl::desc("Batch size B"), cl::init(1),
                       cl::cat(genCategory));
cl::opt<int64_t> seqLen("seq", cl::desc("Query sequence length T"),
                        cl::init(128), cl::cat(genCategory));
cl::opt<int64_t> kvSeqLen("kv-seq",
                          cl::desc("Key/value sequence length S (implies "
                                   "cross-attention; default T)"),
                          cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> modelDim("d-model", cl::desc("Model width D"), cl::init(512),
                          cl::cat(genCategory));
cl::opt<int64_t> kvDim("kv-dim",
                       cl::desc("Key/value input width D_kv (implies "
                                "cross-attention; default D)"),
                       cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> numHeads("heads", cl::desc("Query heads H"), cl::init(8),
                          cl::cat(genCategory));
cl::opt<int64_t> numKvHeads("kv-heads",
                            cl::desc("Key/value heads Hkv (default H; fewer "
                                     "is grouped-query attention)"),
                            cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> headDim("head-dim",
                         cl::desc("Head dimension dk (default D/H)"),
                         cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> valueDim("value-dim",
                          cl::desc("Value dimension dv (default dk)"),
                          cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> outDim("out-dim", cl::desc("Output width D_out (default D)"),
                        cl::init(0), cl::cat(genCategory));
cl::opt<bool> cross("cross",
                    cl::desc("Cross-attention: keys and values come from a "
                             "second input `kv`"),
                    cl::cat(genCategory));
cl::opt<bool> causal("causal",
                     cl::desc("Causal, top-left aligned (query i sees keys "
                              "j <= i)"),
                     cl::cat(genCategory));
cl::opt<bool> causalBottomRight(
    "causal-bottom-right",
    cl::desc("Causal, bottom-right aligned (query i sees keys j <= i + S - T, "
             "so the last query sees every key: decoding); implies --causal"),
    cl::cat(genCategory));
cl::opt<bool> mask("mask", cl::desc("Add a boolean mask argument [B, T, S]"),
                   cl::cat(genCategory));
cl::opt<bool> maskBroadcast(
    "mask-broadcast",
    cl::desc("Make the mask [1, T, S], shared by the whole batch"),
    cl::cat(genCategory));
cl::opt<bool> noBias("no-bias", cl::desc("Leave out the four biases"),
                     cl::cat(genCategory));
cl::opt<bool> splitFirst(
    "split-first",
    cl::desc("Cut the inputs into head slices before projecting; per-head "
             "weights [H, D/H, dk]"),
    cl::cat(genCategory));
cl::opt<bool> dynamic("dynamic",
                      cl::desc("Make batch and sequence sizes dynamic (?)"),
                      cl::cat(genCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(genCategory));

/// Every size of the layer, with the defaults filled in.
struct LayerConfig {
  int64_t batch, seqLen, kvSeqLen, modelDim, kvDim, numHeads, numKvHeads,
      headDim, valueDim, outDim;
  bool cross, causal, causalBottomRight, mask, maskBroadcast, bias, splitFirst, dynamic;
};

/// Reports bad input the way every mha tool does: `mha-gen: error: ...`.
void reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-gen") << message << "\n";
}

/// Reports a bad option and fails.
LogicalResult usageError(const Twine &message) {
  reportError(message);
  return failure();
}

/// `option`'s value when given on the command line, else `fallback`.
int64_t valueOr(const cl::opt<int64_t> &option, int64_t fallback) {
  return option.getNumOccurrences() ? int64_t(option) : fallback;
}

/// The product of `sizes`, or nullopt when it does not fit in int64.
std::optional<int64_t> checkedProduct(ArrayRef<int64_t> sizes) {
  std::optional<int64_t> product = 1;
  for (int64_t size : sizes)
    if (product)
      product = llvm::checkedMul<int64_t>(*product, size);
  return product;
}

FailureOr<LayerConfig> resolveDefaults() {
  // Sizes far beyond any real layer only make absurd types; 2^31 keeps every
  // product of two sizes (heads times head dimension) inside int64.
  constexpr int64_t maxSize = int64_t(1) << 31;
  // Every size given is checked, those whose default derives from another
  // too: an explicit 0 is as wrong as -1. (The derived defaults are checked
  // below, with the products.)
  for (const cl::opt<int64_t> *option :
       {&batch, &seqLen, &kvSeqLen, &modelDim, &kvDim, &numHeads, &numKvHeads,
        &headDim, &valueDim, &outDim}) {
    if (!option->getNumOccurrences())
      continue; // its default, or one derived from sizes checked here
    int64_t value = *option;
    std::string name = ("--" + option->ArgStr).str();
    if (value <= 0)
      return usageError(name + " must be positive, got " + Twine(value));
    if (value > maxSize)
      return usageError(name + " must be at most 2^31, got " + Twine(value));
  }

  LayerConfig c;
  c.batch = batch;
  c.seqLen = seqLen;
  c.modelDim = modelDim;
  c.numHeads = numHeads;
  c.cross = cross || kvSeqLen.getNumOccurrences() || kvDim.getNumOccurrences();
  c.kvSeqLen = valueOr(kvSeqLen, seqLen);
  c.kvDim = valueOr(kvDim, modelDim);
  c.numKvHeads = valueOr(numKvHeads, numHeads);
  c.outDim = valueOr(outDim, modelDim);
  // --causal --causal-bottom-right is bottom-right: the second only says
  // where the diagonal lies. With S = T both alignments are the same rule;
  // the graph still says which one was asked for.
  c.causal = causal || causalBottomRight;
  c.causalBottomRight = causalBottomRight;
  c.mask = mask || maskBroadcast;
  c.maskBroadcast = maskBroadcast;
  c.bias = !noBias;
  c.splitFirst = splitFirst;
  c.dynamic = dynamic;

  if (c.numHeads % c.numKvHeads != 0)
    return usageError("--heads (" + Twine(c.numHeads) +
                      ") must be a multiple of --kv-heads (" +
                      Twine(c.numKvHeads) + ")");
  bool needsSlices = c.splitFirst;
  if ((!headDim.getNumOccurrences() || needsSlices) &&
      c.modelDim % c.numHeads != 0)
    return usageError("--heads (" + Twine(c.numHeads) +
                      ") must divide --d-model (" + Twine(c.modelDim) + ")");
  if (needsSlices && c.kvDim % c.numKvHeads != 0)
    return usageError("--kv-heads (" + Twine(c.numKvHeads) +
                      ") must divide the key/value width (" + Twine(c.kvDim) +
                      ")");
  c.headDim = valueOr(headDim, c.modelDim / c.numHeads);
  c.valueDim = valueOr(valueDim, c.headDim);

  // Each argument and the result must have a number of elements that fits
  // in int64 (their shapes are products of the sizes above), or no tool
  // could even count them.
  int64_t keys = c.kvSeqLen;
  SmallVector<std::pair<StringRef, SmallVector<int64_t>>> shapes = {
      {"x", {c.batch, c.seqLen, c.modelDim}},
      {"w_q", {c.modelDim, c.numHeads, c.headDim}},
      {"w_k", {c.kvDim, c.numKvHeads, c.headDim}},
      {"w_v", {c.kvDim, c.numKvHeads, c.valueDim}},
      {"w_o", {c.numHeads, c.valueDim, c.outDim}},
      {"the result", {c.batch, c.seqLen, c.outDim}}};
  if (c.cross)
    shapes.push_back({"kv", {c.batch, keys, c.kvDim}});
  if (c.mask)
    shapes.push_back({"mask", {c.maskBroadcast ? 1 : c.batch, c.seqLen, keys}});
  for (const auto &[name, shape] : shapes)
    if (!checkedProduct(shape))
      return usageError(
          Twine(name) + " would have " +
          llvm::join(llvm::map_range(
                         shape, [](int64_t size) { return Twine(size).str(); }),
                     " x ") +
          " elements, more than fit in 64 bits");
  return c;
}

/// Builds `func.func @mha(...)` around one `mha.attention`.
OwningOpRef<ModuleOp> buildGraph(MLIRContext &context, const LayerConfig &c) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Type f32 = builder.getF32Type();
  int64_t batchSize = c.dynamic ? ShapedType::kDynamic : c.batch;
  int64_t queries = c.dynamic ? ShapedType::kDynamic : c.seqLen;
  int64_t keys = c.dynamic ? ShapedType::kDynamic : c.kvSeqLen;

  SmallVector<std::pair<StringRef, Type>> args;
  auto add = [&](StringRef name, ArrayRef<int64_t> shape, Type element) {
    args.push_back({name, RankedTensorType::get(shape, element)});
  };
  add("x", {batchSize, queries, c.modelDim}, f32);
  if (c.cross)
    add("kv", {batchSize, keys, c.kvDim}, f32);
  if (c.mask)
    add("mask", {c.maskBroadcast ? 1 : batchSize, queries, keys},
        builder.getI1Type());
  if (c.splitFirst) {
    add("w_q", {c.numHeads, c.modelDim / c.numHeads, c.headDim}, f32);
    add("w_k", {c.numKvHeads, c.kvDim / c.numKvHeads, c.headDim}, f32);
    add("w_v", {c.numKvHeads, c.kvDim / c.numKvHeads, c.valueDim}, f32);
  } else {
    add("w_q", {c.modelDim, c.numHeads * c.headDim}, f32);
    add("w_k", {c.kvDim, c.numKvHeads * c.headDim}, f32);
    add("w_v", {c.kvDim, c.numKvHeads * c.valueDim}, f32);
  }
  add("w_o", {c.numHeads * c.valueDim, c.outDim}, f32);
  if (c.bias) {
    add("b_q", {c.numHeads * c.headDim}, f32);
    add("b_k", {c.numKvHeads * c.headDim}, f32);
    add("b_v", {c.numKvHeads * c.valueDim}, f32);
    add("b_o", {c.outDim}, f32);
  }

  auto resultType = RankedTensorType::get({batchSize, queries, c.outDim}, f32);
  SmallVector<Type> argTypes = llvm::map_to_vector(
      args, [](const std::pair<StringRef, Type> &arg) { return arg.second; });
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(
      builder, loc, "mha", builder.getFunctionType(argTypes, resultType));
  Block *body = func.addEntryBlock();
  llvm::StringMap<Value> named;
  for (auto [index, arg] : llvm::enumerate(args)) {
    func.setArgAttr(index, "mha.name", builder.getStringAttr(arg.first));
    named[arg.first] = body->getArgument(index);
  }
  auto lookup = [&](StringRef name) { return named.lookup(name); };

  builder.setInsertionPointToEnd(body);
  IntegerAttr kvHeads = c.numKvHeads != c.numHeads
                            ? builder.getI64IntegerAttr(c.numKvHeads)
                            : IntegerAttr();
  Value y = mlir::mha::AttentionOp::create(
      builder, loc, resultType, lookup("x"), lookup("kv"), lookup("mask"),
      lookup("w_q"), lookup("w_k"), lookup("w_v"), lookup("w_o"), lookup("b_q"),
      lookup("b_k"), lookup("b_v"), lookup("b_o"),
      builder.getI64IntegerAttr(c.numHeads), kvHeads,
      c.causal ? builder.getUnitAttr() : UnitAttr(),
      c.causalBottomRight ? builder.getUnitAttr() : UnitAttr(), FloatAttr());
  func::ReturnOp::create(builder, loc, y);
  return module;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(genCategory);
  if (!::mha::tools::parseCommandLine(
          argc, argv,
          "mha-gen: write the graph of one multi-head attention layer\n"))
    return ::mha::tools::kBadInput;

  FailureOr<LayerConfig> config = resolveDefaults();
  if (failed(config))
    return ::mha::tools::kBadInput;

  MLIRContext context;
  context.loadDialect<mlir::mha::MhaDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = buildGraph(context, *config);
  if (failed(verify(*module))) {
    reportError("the generated graph does not verify (see above)");
    return ::mha::tools::kBadInput;
  }

  std::string errorMessage;
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output) {
    reportError("cannot write '" + outputFile + "': " + errorMessage);
    return ::mha::tools::kBadInput;
  }
  module->print(output->os());
  output->os() << "\n";
  if (!::mha::tools::finishOutput(output->os(), "mha-gen", outputFile))
    return ::mha::tools::kBadInput;
  output->keep();
  // Say where the graph went (not when it went to stdout: it is the output).
  if (outputFile != "-")
    llvm::outs() << "wrote the graph to " << outputFile << "\n";
  return ::mha::tools::kOk;
}
