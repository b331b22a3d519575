//===- mha-gen.cpp - Write the graph of one attention configuration -------===//
//
// Prints a module with one public function `@mha` whose body is a single
// `mha.attention`. Arguments carry `{mha.name = "..."}` with the names of the
// reference cases (x kv mask w_q w_k w_v w_o b_q b_k b_v b_o, and for the
// served models' options rope_inv_freq q_norm k_norm alibi_slopes sinks
// attn_bias, as in test/vectors/model_variants), which is how
// `mha-run --inputs DIR` finds `DIR/<name>.npy`.
//
// Exit codes: 0 success, 2 a bad option (or an output file that cannot be
// written).
//
//===----------------------------------------------------------------------===//

#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"
#include "graphs/LayerGraph.h"
#include "tools/support/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
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
cl::opt<int64_t> kvCache(
    "kv-cache",
    cl::desc("A decoding layer with key/value caches of this capacity C: "
             "arguments k_cache [B, Hkv, C, dk], v_cache [B, Hkv, C, dv] and "
             "cache_lengths [B] (i64); appends the T new tokens' keys and "
             "values at each sequence's length, attends causally from there, "
             "and returns y and the caches (updated in place)"),
    cl::init(0), cl::cat(genCategory));
cl::opt<int64_t> pagedKv(
    "paged-kv",
    cl::desc("With --kv-cache C, keep the caches in pages of this many rows "
             "(a multiple of 16 from 16 to 128): pools k_pool and v_pool "
             "[N, Hkv, P, d] (N = B * M pages), block_table [B, M] (i32, M = "
             "ceil(C / P), each sequence's pages in order) and cache_lengths "
             "[B] (i64); returns y and the pools (updated in place)"),
    cl::value_desc("rows"), cl::cat(genCategory));
cl::opt<std::string> cacheDtype(
    "cache-dtype",
    cl::desc("With --kv-cache, the element type of the caches: f32 (default; "
             "bf16 with --dtype bf16), bf16 (needs --dtype bf16) or int8 "
             "(needs --dtype f32): i8 codes k_cache and v_cache, each followed "
             "by its scales k_scales, v_scales [B, Hkv, C] (f32), one per "
             "token and head, max|x|/127"),
    cl::value_desc("type"), cl::cat(genCategory));
cl::opt<std::string>
    dtype("dtype",
          cl::desc("Element type of the inputs, weights and biases: f32 "
                   "(default) or bf16 (computed in f32, attention operands "
                   "stored in bf16; the output stays f32)"),
          cl::value_desc("type"), cl::init("f32"), cl::cat(genCategory));

// The served models' variants: QK-norm, RoPE and the score steps.
cl::opt<double> scale("scale", cl::desc("Factor of Q·Kᵀ (default 1/sqrt(dk))"),
                      cl::cat(genCategory));
cl::opt<std::string>
    rope("rope",
         cl::desc("Rotary position embedding of Q and K at positions "
                  "0..T-1 (with --kv-cache: cache_lengths[b] + t): half "
                  "(pairs i, i + R/2: Llama, GPT-NeoX) or interleaved (pairs "
                  "2i, 2i + 1: GPT-J); self-attention only"),
         cl::value_desc("layout"), cl::cat(genCategory));
cl::opt<int64_t>
    rotaryDim("rotary-dim",
              cl::desc("RoPE on the first R features of each head (even, at "
                       "most dk; default dk)"),
              cl::value_desc("R"), cl::cat(genCategory));
cl::opt<double> ropeBase("rope-base",
                         cl::desc("RoPE frequency base (default 10000)"),
                         cl::cat(genCategory));
cl::opt<double>
    ropeScale("rope-scale",
              cl::desc("RoPE linear position interpolation: angle = (p / F) · "
                       "frequency (default 1)"),
              cl::cat(genCategory));
cl::opt<double>
    ropeMscale("rope-mscale",
               cl::desc("RoPE attention factor multiplying cos and sin "
                        "(YaRN; default 1)"),
               cl::cat(genCategory));
cl::opt<bool> ropeInvFreq(
    "rope-inv-freq",
    cl::desc("Add the argument rope_inv_freq [R/2]: RoPE's inverse "
             "frequencies (Llama 3.1, YaRN) instead of base^(-2i/R)"),
    cl::cat(genCategory));
cl::opt<bool> qkNorm("qk-norm",
                     cl::desc("Add the arguments q_norm and k_norm [dk]: "
                              "RMSNorm of each head's Q and K (before RoPE)"),
                     cl::cat(genCategory));
cl::opt<double> qkNormEps("qk-norm-eps",
                          cl::desc("Epsilon of --qk-norm (default 1e-6)"),
                          cl::cat(genCategory));
cl::opt<int64_t>
    window("window",
           cl::desc("Sliding window W (needs --causal): query i sees keys "
                    "i - W < j <= i"),
           cl::value_desc("W"), cl::cat(genCategory));
cl::opt<double> softcap("softcap",
                        cl::desc("Logit soft-capping C: s <- C·tanh(s / C)"),
                        cl::value_desc("C"), cl::cat(genCategory));
cl::opt<bool> alibi("alibi",
                    cl::desc("Add the argument alibi_slopes [H]: ALiBi, "
                             "s <- s + slope[h]·(j - p_i), p_i the query's "
                             "position (i, or i + S - T bottom-right)"),
                    cl::cat(genCategory));
cl::opt<bool> sinks("sinks",
                    cl::desc("Add the argument sinks [H]: a logit per head "
                             "in each softmax denominator (gpt-oss)"),
                    cl::cat(genCategory));
cl::opt<std::string> attnBias(
    "attn-bias",
    cl::desc("Add the argument attn_bias, an additive f32 score bias (-inf "
             "allowed) of this shape: four comma-separated entries, each its "
             "dimension's letter B, H, T or S, or 1 to broadcast "
             "(B,H,T,S, 1,H,T,S, B,1,1,S); not with --kv-cache (its S would "
             "be the cache capacity)"),
    cl::value_desc("shape"), cl::cat(genCategory));

cl::opt<std::string> outputFile("o", cl::desc("Output file (default stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(genCategory));

/// Reports bad input the way every mha tool does: `mha-gen: error: ...`.
void reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-gen") << message << "\n";
}

/// `option`'s value when given on the command line, else nothing.
template <typename T> std::optional<T> given(const cl::opt<T> &option) {
  if (!option.getNumOccurrences())
    return std::nullopt;
  return T(option);
}

/// The layer the command line asks for (LayerGraph.h fills in the rest).
::mha::graphs::LayerOptions getLayerOptions() {
  ::mha::graphs::LayerOptions o;
  o.batch = given(batch);
  o.seqLen = given(seqLen);
  o.kvSeqLen = given(kvSeqLen);
  o.modelDim = given(modelDim);
  o.kvDim = given(kvDim);
  o.numHeads = given(numHeads);
  o.numKvHeads = given(numKvHeads);
  o.headDim = given(headDim);
  o.valueDim = given(valueDim);
  o.outDim = given(outDim);
  o.cross = cross;
  o.causal = causal;
  o.causalBottomRight = causalBottomRight;
  o.mask = mask;
  o.maskBroadcast = maskBroadcast;
  o.bias = !noBias;
  o.splitFirst = splitFirst;
  o.dynamicBatch = o.dynamicSeq = o.dynamicKvSeq = dynamic;
  o.kvCache = given(kvCache);
  o.pagedKv = given(pagedKv);
  o.bf16 = dtype == "bf16";
  o.cacheDtype = cacheDtype;
  o.scale = given(scale);
  o.softcap = given(softcap);
  o.window = given(window);
  o.rope = rope;
  o.rotaryDim = given(rotaryDim);
  o.ropeBase = given(ropeBase);
  o.ropeScale = given(ropeScale);
  o.ropeMscale = given(ropeMscale);
  o.ropeInvFreq = ropeInvFreq;
  o.qkNorm = qkNorm;
  o.qkNormEps = given(qkNormEps);
  o.alibi = alibi;
  o.sinks = sinks;
  o.attnBias = attnBias;
  return o;
}

/// --dynamic makes the batch and sequence sizes `?`, so sizes given for
/// them are not in the graph: says so, and how to give them at run time,
/// rather than drop them silently. (Scripts pass them with --dynamic to name
/// the same layer with `?` sizes, so this is a note, not an error.)
void noteDynamicSizes() {
  if (!dynamic)
    return;
  std::string dims, dropped;
  for (auto [letter, option] :
       {std::pair<StringRef, cl::opt<int64_t> *>{"B", &batch},
        {"T", &seqLen},
        {"S", &kvSeqLen}}) {
    if (!option->getNumOccurrences())
      continue;
    dropped += (dropped.empty() ? "--" : ", --") + option->ArgStr.str() + " " +
               std::to_string(int64_t(*option));
    dims += (dims.empty() ? "" : ",") + letter.str() + "=" +
            std::to_string(int64_t(*option));
  }
  if (!dropped.empty())
    llvm::WithColor::note(llvm::errs(), "mha-gen")
        << "--dynamic makes the batch and sequence sizes ?, so " << dropped
        << " set no size in the graph; give them at run time: mha-run "
           "--dims "
        << dims << "\n";
}

/// The graph the command line asks for, verified; null after reporting why
/// there is none.
OwningOpRef<ModuleOp> buildGraph(MLIRContext &context) {
  auto config = ::mha::graphs::resolveLayerConfig(
      getLayerOptions(), [](StringRef name) { return ("--" + name).str(); });
  if (!config) {
    reportError(llvm::toString(config.takeError()));
    return nullptr;
  }
  context.loadDialect<mlir::mha::MhaDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module =
      ::mha::graphs::buildLayerGraph(context, *config);
  if (failed(verify(*module))) {
    reportError("the generated graph does not verify (see above)");
    return nullptr;
  }
  return module;
}

/// Writes `module` to --output; false after reporting why it could not.
bool writeGraph(ModuleOp module) {
  std::string errorMessage;
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output) {
    reportError("cannot write '" + outputFile + "': " + errorMessage);
    return false;
  }
  module->print(output->os());
  output->os() << "\n";
  if (!::mha::tools::finishOutput(output->os(), "mha-gen", outputFile))
    return false;
  output->keep();
  // Say where the graph went (not when it went to stdout: it is the output).
  if (outputFile != "-")
    llvm::outs() << "wrote the graph to " << outputFile << "\n";
  return true;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  ::mha::tools::hideLLVMOptions({&genCategory});
  if (!::mha::tools::parseCommandLine(
          argc, argv,
          "mha-gen: write the graph of one multi-head attention layer\n"))
    return ::mha::tools::kBadInput;
  if (dtype != "f32" && dtype != "bf16") {
    reportError("--dtype must be f32 or bf16, got '" + dtype + "'");
    return ::mha::tools::kBadInput;
  }
  // An empty --rope= or --attn-bias= is a value that is not valid, not the
  // option left out.
  for (cl::opt<std::string> *option : {&rope, &attnBias, &cacheDtype})
    if (option->getNumOccurrences() && option->empty()) {
      reportError("--" + option->ArgStr + " needs a value, got ''");
      return ::mha::tools::kBadInput;
    }
  noteDynamicSizes();
  MLIRContext context;
  OwningOpRef<ModuleOp> module = buildGraph(context);
  if (!module || !writeGraph(*module))
    return ::mha::tools::kBadInput;
  return ::mha::tools::kOk;
}
