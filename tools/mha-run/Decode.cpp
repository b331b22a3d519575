//===- Decode.cpp - mha-run as a decoder with a key/value cache -----------===//
//
// The driver of a cache graph (mha-gen --kv-cache): the graph appends the
// new tokens' keys and values to the caches at `cache_lengths` and attends
// over them; it does not move the lengths, so the driver adds the tokens of
// each call. The caches are allocated zeroed once, at the graph's capacity,
// and the compiled code updates them in place.
//
// Inputs: `x` holds T + N rows per sequence, the prefill's T and then one per
// step (the same layout as `--output`), so that the reference is the causal
// layer over those rows. With `--lengths`, sequence b keeps only the first
// l_b of the prefill's rows: the steps write their keys at l_b, l_b + 1, ...,
// over what the prefill left at l_b .. T - 1, before any query can see it.
//
// bf16 graphs (mha-gen --dtype bf16 --kv-cache C): x, the weights and the
// caches are bf16. The inputs come as float32 and are rounded to nearest even
// once; the caches are allocated in bf16 (half the bytes) and the graph
// rounds the new rows when it appends them. --check then holds the result to
// the accuracy rule of bf16 layers: its error against the
// reference of the float32 inputs is at most 1.5 times that of the reference
// computed on the bf16-rounded inputs.
//
//===----------------------------------------------------------------------===//

#include "tools/mha-run/Decode.h"
#include "tools/mha-run/CacheGraph.h"
#include "tools/mha-run/DecodeCheck.h"
#include "tools/mha-run/PagedCache.h"
#include "tools/mha-run/ParallelRun.h"

#include "runtime/BFloat16.h"
#include "runtime/Comparison.h"
#include "runtime/JitRunner.h"
#include "runtime/MemoryLimit.h"
#include "tools/support/ToolSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace mlir;
using namespace ::mha::runtime;

namespace mha::tools {

bool hasKeyValueCache(const GraphSignature &signature) {
  return signature.findArgument(kKeyCacheName) >= 0 ||
         signature.findArgument(kValueCacheName) >= 0 ||
         signature.findArgument(kCacheLengthsName) >= 0;
}

namespace {

llvm::Error createError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Rows [begin, end) of every sequence of `x` [B, R, D], as [B, end - begin,
/// D].
NpyArray sliceRows(const NpyArray &x, int64_t begin, int64_t end) {
  int64_t batch = x.shape[0], rows = x.shape[1], width = x.shape[2];
  NpyArray slice =
      NpyArray::zeros(ElementType::F32, {batch, end - begin, width});
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(slice.f32() + b * (end - begin) * width,
                x.f32() + (b * rows + begin) * width,
                (end - begin) * width * sizeof(float));
  return slice;
}

/// Copies `from` [B, t, W] into rows [row, row + t) of `to` [B, R, W].
void storeRows(const NpyArray &from, NpyArray &to, int64_t row) {
  int64_t batch = to.shape[0], rows = to.shape[1], width = to.shape[2];
  int64_t count = from.shape[1];
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(to.f32() + (b * rows + row) * width,
                from.f32() + b * count * width, count * width * sizeof(float));
}

/// A decoder's arrays: the inputs as bound, the caches and lengths it owns,
/// and x of each call.
struct DecoderArrays {
  /// The arguments the user binds (bindingSignature) and their arrays: bf16
  /// ones rounded to nearest even in place, so that the reference sees the
  /// values the graph computes with.
  GraphSignature binding;
  std::vector<NpyArray> bound;
  /// The float32 values as given, kept for the accuracy rule of a bf16
  /// layer's --check; empty otherwise.
  std::vector<NpyArray> givenInputs;
  /// The bf16 copies the calls read, and each call's arrays of `binding`.
  std::vector<NpyArray> bf16Copies;
  std::vector<const NpyArray *> callInputs;
  /// B and D, from x; D_out, from the result; the tokens of the prefill
  /// each sequence keeps.
  int64_t batch = 0, width = 0, outDim = 0;
  std::vector<int64_t> lengths;
  /// The caches, zeroed once, their bytes, and the lengths.
  NpyArray keyCache, valueCache, cacheLengths;
  /// The scales of int8 caches [B, Hkv, C] (empty for other caches); a
  /// paged cache's block table and the file it comes from ("": its own).
  NpyArray keyScales, valueScales, blockTable;
  std::string tablePath;
  uint64_t cacheBytes = 0;
  /// x of the prefill and of each step, in bf16 where x is.
  NpyArray prefillInput;
  std::vector<NpyArray> stepInputs;
};

/// The counts of `--prefill` and `--steps`.
llvm::Error checkCounts(int64_t prefill, int64_t steps) {
  if (prefill < 1)
    return createError(llvm::formatv(
        "--prefill must be at least 1, got {0}: a decoder starts with one "
        "call of T >= 1 tokens into the empty cache (a prefill of 0 tokens "
        "is no call; for sequences that start empty, use --lengths 0,...)",
        prefill));
  if (steps < 0)
    return createError(
        llvm::formatv("--steps must be at least 0, got {0}", steps));
  return llvm::Error::success();
}

/// Binds the inputs, x with the prefill's rows and the steps', rounds the
/// bf16 ones, and checks that every sequence's steps fit in the cache after
/// the tokens it keeps (--lengths).
llvm::Error bindDecoderInputs(const GraphSignature &signature,
                              const CacheGraph &graph,
                              const InputOptions &inputOptions,
                              const DecodeOptions &options,
                              llvm::raw_ostream &os, DecoderArrays &arrays) {
  int64_t prefill = options.prefill, steps = options.steps;
  arrays.binding = bindingSignature(signature, graph, prefill + steps);
  InputOptions bindOptions = inputOptions;
  arrays.tablePath = takeBlockTablePath(graph, bindOptions);
  auto bound = bindInputs(arrays.binding, bindOptions, &os);
  if (!bound)
    return bound.takeError();
  arrays.bound = std::move(*bound);
  // bf16 arguments come as float32 and are rounded to nearest even: in
  // place, so that the reference sees the values the graph computes with,
  // and into bf16 copies, which the calls read. The float32 values as given
  // are kept for the accuracy rule of --check.
  if (options.check && graph.cacheElement == ElementType::BF16)
    arrays.givenInputs = arrays.bound;
  arrays.callInputs =
      roundBF16Arguments(arrays.binding, arrays.bound, arrays.bf16Copies, &os);
  const NpyArray &x = arrays.bound[arrays.binding.findArgument("x")];
  arrays.batch = x.shape[0];
  arrays.width = x.shape[2];
  auto lengths = parseLengths(options.lengths, arrays.batch, prefill);
  if (!lengths)
    return lengths.takeError();
  arrays.lengths = std::move(*lengths);
  int64_t longest =
      *std::max_element(arrays.lengths.begin(), arrays.lengths.end());
  for (auto [b, length] : llvm::enumerate(arrays.lengths))
    if (length + steps > graph.capacity)
      return pastCapacityError(signature, graph, steps, b, length, longest);
  return llvm::Error::success();
}

/// The decoder's own arrays: the caches, zeroed once, and the lengths;
/// refused when they would not fit in memory.
llvm::Error allocateCaches(const CacheGraph &graph, DecoderArrays &arrays) {
  int64_t batch = arrays.batch;
  std::vector<int64_t> keyShape = getCacheShape(graph, batch, /*key=*/true);
  std::vector<int64_t> valueShape = getCacheShape(graph, batch, false);
  uint64_t cacheBytes = 0;
  // An int8 cache's scales: 4 bytes per row of each cache (or pool).
  std::vector<int64_t> scalesShape(keyShape.begin(), keyShape.end() - 1);
  bool int8 = graph.cacheElement == ElementType::I8;
  if (int8) {
    std::optional<int64_t> bytes = getByteCount(scalesShape, ElementType::F32);
    if (!bytes)
      return createError(llvm::formatv("the scales of shape {0}: their byte "
                                       "count overflows",
                                       formatShape(scalesShape)));
    cacheBytes += 2 * uint64_t(*bytes);
  }
  for (const std::vector<int64_t> *shape : {&keyShape, &valueShape}) {
    std::optional<int64_t> bytes = getByteCount(*shape, graph.cacheElement);
    if (!bytes)
      return createError(llvm::formatv("the cache of shape {0}: its byte count "
                                       "overflows",
                                       formatShape(*shape)));
    cacheBytes += *bytes;
  }
  if (auto error = checkMemoryLimit(
          cacheBytes,
          llvm::formatv("the caches {0} {1} and {2} {3}",
                        graph.isPaged() ? kKeyPoolName : kKeyCacheName,
                        formatShape(keyShape),
                        graph.isPaged() ? kValuePoolName : kValueCacheName,
                        formatShape(valueShape))
              .str()))
    return error;
  arrays.cacheBytes = cacheBytes;
  arrays.keyCache = NpyArray::zeros(graph.cacheElement, keyShape);
  arrays.valueCache = NpyArray::zeros(graph.cacheElement, valueShape);
  if (int8) {
    arrays.keyScales = NpyArray::zeros(ElementType::F32, scalesShape);
    arrays.valueScales = NpyArray::zeros(ElementType::F32, scalesShape);
  }
  arrays.cacheLengths = NpyArray::zeros(ElementType::I64, {batch});
  return llvm::Error::success();
}

/// A paged cache's block table, given or the decoder's own, checked against
/// the pages the calls use.
llvm::Error allocateBlockTable(const CacheGraph &graph,
                               const DecodeOptions &options,
                               const InputOptions &inputOptions,
                               DecoderArrays &arrays) {
  if (!graph.isPaged())
    return llvm::Error::success();
  int64_t poolPages = arrays.keyCache.shape[0];
  auto table = makeBlockTable(graph, arrays.batch, poolPages, arrays.tablePath,
                              inputOptions.seed);
  if (!table)
    return table.takeError();
  arrays.blockTable = std::move(*table);
  return checkBlockTable(graph, arrays.blockTable, poolPages, arrays.lengths,
                         options.prefill, options.steps);
}

/// x of each call: the prefill's rows, then one row per step, in bf16 where
/// x is (exact: x is rounded).
void makeCallTokens(const GraphSignature &signature, const CacheGraph &graph,
                    int64_t prefill, int64_t steps, DecoderArrays &arrays) {
  const NpyArray &x = arrays.bound[arrays.binding.findArgument("x")];
  bool bf16Tokens = signature.arguments[graph.x].type.getElementType().isBF16();
  auto tokensOf = [&](int64_t begin, int64_t end) {
    NpyArray rows = sliceRows(x, begin, end);
    return bf16Tokens ? toBF16Array(rows) : rows;
  };
  arrays.prefillInput = tokensOf(0, prefill);
  for (int64_t step = 0; step < steps; ++step)
    arrays.stepInputs.push_back(tokensOf(prefill + step, prefill + step + 1));
}

/// Every argument of a call: the bound ones, the caches, the lengths, and
/// x of the call's tokens.
std::vector<const NpyArray *> callArguments(const GraphSignature &signature,
                                            const CacheGraph &graph,
                                            const DecoderArrays &arrays,
                                            const NpyArray &tokens) {
  std::vector<const NpyArray *> list;
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    if (int(index) == graph.x)
      list.push_back(&tokens);
    else if (int(index) == graph.keyCache)
      list.push_back(&arrays.keyCache);
    else if (int(index) == graph.valueCache)
      list.push_back(&arrays.valueCache);
    else if (int(index) == graph.keyScales)
      list.push_back(&arrays.keyScales);
    else if (int(index) == graph.valueScales)
      list.push_back(&arrays.valueScales);
    else if (int(index) == graph.lengths)
      list.push_back(&arrays.cacheLengths);
    else if (int(index) == graph.blockTable)
      list.push_back(&arrays.blockTable);
    else
      list.push_back(
          arrays.callInputs[arrays.binding.findArgument(argument.name)]);
  }
  return list;
}

/// This rank's graph of a split run: its entry, signature and cache.
struct RankGraph {
  func::FuncOp entry;
  GraphSignature signature;
  CacheGraph cache;
};

/// --parallel: splits the graph for this rank (the caches narrow with the
/// key/value heads) and gives the calls the rank's slices of the bound
/// arguments.
llvm::Expected<RankGraph> splitForRank(HeadParallelRun &parallel,
                                       LoadedGraph &loaded,
                                       DecoderArrays &arrays) {
  std::vector<const NpyArray *> inputs;
  for (const GraphArgument &argument : loaded.signature.arguments) {
    int bound = arrays.binding.findArgument(argument.name);
    inputs.push_back(bound >= 0 ? arrays.callInputs[bound] : nullptr);
  }
  if (auto error = parallel.split(loaded, inputs))
    return std::move(error);
  for (auto [index, argument] : llvm::enumerate(loaded.signature.arguments))
    if (int bound = arrays.binding.findArgument(argument.name); bound >= 0)
      arrays.callInputs[bound] = inputs[index];
  RankGraph rank;
  rank.entry =
      parallel.module().lookupSymbol<func::FuncOp>(loaded.entry.getSymName());
  auto signature = readSignature(rank.entry);
  if (!signature)
    return signature.takeError();
  rank.signature = std::move(*signature);
  auto cache = findCacheGraph(rank.signature, rank.entry.getSymName());
  if (!cache)
    return cache.takeError();
  rank.cache = *cache;
  return rank;
}

/// Lowers and compiles `entry` of `module` with `pm`, and packs the weights
/// once from the prefill's `arguments`.
llvm::Expected<std::unique_ptr<CompiledFunction>>
compileDecoder(ModuleOp module, func::FuncOp entry, PassManager &pm,
               const std::vector<const NpyArray *> &arguments) {
  OwningOpRef<ModuleOp> lowered = module.clone();
  if (failed(pm.run(*lowered)))
    return createError("lowering the cache graph failed (see above)");
  auto function = CompiledFunction::create(
      *lowered, entry.getSymName(),
      cast<RankedTensorType>(entry.getResultTypes()[0]).getRank());
  if (!function)
    return function.takeError();
  if (auto prepared = (*function)->prepare(arguments); !prepared)
    return prepared.takeError();
  return function;
}

/// The times of the timed rounds' calls, in milliseconds; with --parallel,
/// also the time each call's addition across the ranks spent in the
/// all-reduce and in the exchange of states before it.
struct DecodeTimes {
  std::vector<double> prefill, steps;
  std::vector<double> prefillSum, stepSum, checks;
  /// The ranks could not add up an output (one stopped, or they differ).
  bool reduceFailed = false;
};

/// --parallel: adds up the partial output `y` of a call across the ranks,
/// and records the time it took in MPI when `timed`.
llvm::Error reduceCall(HeadParallelRun *parallel, NpyArray &y, bool timed,
                       std::vector<double> &sums, DecodeTimes &times) {
  if (!parallel)
    return llvm::Error::success();
  if (auto error = parallel->reduce(y)) {
    times.reduceFailed = true;
    return error;
  }
  if (timed) {
    sums.push_back(parallel->lastReduceTimes().sumMs);
    times.checks.push_back(parallel->lastReduceTimes().checkMs);
  }
  return llvm::Error::success();
}

/// Runs the untimed rounds, then the timed ones, each a prefill and the
/// steps from lengths reset to 0; the last round's outputs go to `outputs`
/// [B, T + N, D_out].
llvm::Error runRounds(CompiledFunction &function,
                      const GraphSignature &signature, const CacheGraph &graph,
                      const DecodeOptions &options, DecoderArrays &arrays,
                      NpyArray &outputs, DecodeTimes &times,
                      HeadParallelRun *parallel) {
  int64_t prefill = options.prefill, steps = options.steps;
  int64_t *lengthData = arrays.cacheLengths.i64();
  auto arguments = [&](const NpyArray &tokens) {
    return callArguments(signature, graph, arrays, tokens);
  };
  unsigned totalRounds = options.warmupRounds + options.rounds;
  for (unsigned round = 0; round < totalRounds; ++round) {
    bool timed = round >= options.warmupRounds;
    bool last = round + 1 == totalRounds;
    std::fill(lengthData, lengthData + arrays.batch, 0);
    auto start = std::chrono::steady_clock::now();
    auto y = function.call(arguments(arrays.prefillInput));
    if (!y)
      return y.takeError();
    if (auto error = reduceCall(parallel, *y, timed, times.prefillSum, times))
      return error;
    if (timed)
      times.prefill.push_back(millisecondsSince(start));
    if (last)
      storeRows(*y, outputs, 0);
    std::copy(arrays.lengths.begin(), arrays.lengths.end(), lengthData);
    for (int64_t step = 0; step < steps; ++step) {
      start = std::chrono::steady_clock::now();
      y = function.call(arguments(arrays.stepInputs[step]));
      if (!y)
        return y.takeError();
      if (auto error = reduceCall(parallel, *y, timed, times.stepSum, times))
        return error;
      if (timed)
        times.steps.push_back(millisecondsSince(start));
      if (last)
        storeRows(*y, outputs, prefill + step);
      for (int64_t b = 0; b < arrays.batch; ++b)
        ++lengthData[b];
    }
  }
  return llvm::Error::success();
}

/// Prints what ran and the median times of the prefill and the steps.
void printTimes(llvm::raw_ostream &os, const DecodeOptions &options,
                const CacheGraph &graph, const DecoderArrays &arrays,
                const DecodeTimes &times) {
  int64_t batch = arrays.batch, prefill = options.prefill;
  int64_t steps = options.steps;
  os << llvm::formatv("decode: batch {0}, prefill {1} tokens, {2} step{4} of "
                      "1 token, cache capacity {3}",
                      batch, prefill, steps, graph.capacity,
                      steps == 1 ? "" : "s");
  if (graph.cacheElement == ElementType::BF16)
    os << llvm::formatv(", bf16 caches ({0} bytes)", arrays.cacheBytes);
  if (graph.cacheElement == ElementType::I8)
    os << llvm::formatv(", int8 caches with their scales ({0} bytes)",
                        arrays.cacheBytes);
  if (graph.isPaged())
    os << llvm::formatv(", pages of {0} rows ({1} per sequence, {2} in the "
                        "pools, {3} table)",
                        graph.pageSize, graph.pagesPerSequence,
                        arrays.keyCache.shape[0],
                        arrays.tablePath.empty() ? "a shuffled" : "the given");
  if (!options.lengths.empty())
    os << ", lengths after the prefill " << options.lengths;
  os << llvm::formatv(" ({0} thread{1})\n", omp_get_max_threads(),
                      omp_get_max_threads() == 1 ? "" : "s");
  double prefillMs = median(times.prefill);
  os << llvm::formatv("prefill: median {0:F3} ms over {1} run(s), {2:F0} "
                      "tokens/s\n",
                      prefillMs, times.prefill.size(),
                      batch * prefill / (prefillMs * 1e-3));
  if (steps > 0) {
    double stepMs = median(times.steps);
    os << llvm::formatv(
        "step: median {0:F3} ms, min {1:F3} ms over {2} "
        "steps, {3:F0} tokens/s\n",
        stepMs, *std::min_element(times.steps.begin(), times.steps.end()),
        times.steps.size(), batch / (stepMs * 1e-3));
  }
  if (times.checks.empty())
    return;
  // The output of each call, [B, t, D_out] float32, is what the ranks add.
  int64_t rowBytes = arrays.outDim * int64_t(sizeof(float));
  os << llvm::formatv("all-reduce: prefill median {0:F3} ms ({1} bytes)",
                      median(times.prefillSum), batch * prefill * rowBytes);
  if (steps > 0)
    os << llvm::formatv(", step median {0:F3} ms ({1} bytes)",
                        median(times.stepSum), batch * rowBytes);
  os << llvm::formatv("; the ranks' check before it median {0:F3} ms\n",
                      median(times.checks));
}

/// --output and --expect of the outputs; returns whether they match what
/// --expect names (true without it).
llvm::Expected<bool> writeAndExpect(const DecodeOptions &options,
                                    const NpyArray &outputs,
                                    llvm::raw_ostream &os) {
  if (!options.outputFile.empty()) {
    if (auto error = writeNpy(options.outputFile, outputs))
      return std::move(error);
    os << "wrote the outputs " << formatShape(outputs.shape) << " to "
       << options.outputFile << "\n";
  }
  if (options.expectFile.empty())
    return true;
  auto expected = readNpy(options.expectFile);
  if (!expected)
    return expected.takeError();
  auto comparison =
      compareArrays(outputs, *expected, options.atol, options.rtol);
  if (!comparison)
    return createError(llvm::formatv("--expect {0}: {1}", options.expectFile,
                                     llvm::toString(comparison.takeError())));
  os << "expect " << options.expectFile << ": " << comparison->summary()
     << "\n";
  return comparison->passed;
}

} // namespace

int runDecoder(LoadedGraph &loaded, PassManager &pm,
               const InputOptions &inputOptions, const DecodeOptions &options,
               llvm::raw_ostream &os,
               llvm::function_ref<void(const llvm::Twine &)> report,
               HeadParallelRun *parallel) {
  auto fail = [&](llvm::Error error, ExitCode code) {
    report(llvm::toString(std::move(error)));
    return code;
  };
  func::FuncOp entry = loaded.entry;
  const GraphSignature &signature = loaded.signature;
  int64_t prefill = options.prefill, steps = options.steps;
  if (auto error = checkCounts(prefill, steps))
    return fail(std::move(error), kBadInput);
  auto found = findCacheGraph(signature, entry.getSymName());
  if (!found)
    return fail(found.takeError(), kBadInput);
  CacheGraph graph = *found;
  if (auto error = checkCallsFit(entry, signature, graph, prefill, steps,
                                 !options.lengths.empty()))
    return fail(std::move(error), kBadInput);

  DecoderArrays arrays;
  if (auto error = bindDecoderInputs(signature, graph, inputOptions, options,
                                     os, arrays))
    return fail(std::move(error), kBadInput);
  // The result's width is static (the weights fix it); checkInputsFitTogether
  // gives no type for a function of several results.
  arrays.outDim = signature.result.getShape().back();
  // The layer the reference computes is the whole graph's; the calls are
  // this rank's, with its caches.
  func::FuncOp wholeEntry = entry;
  const GraphSignature *callSignature = &signature;
  std::optional<RankGraph> rank;
  if (parallel) {
    auto split = splitForRank(*parallel, loaded, arrays);
    if (!split)
      return fail(split.takeError(), kBadInput);
    rank = std::move(*split);
    entry = rank->entry;
    callSignature = &rank->signature;
    graph = rank->cache;
  }
  if (auto error = allocateCaches(graph, arrays))
    return fail(std::move(error), kBadInput);
  if (auto error = allocateBlockTable(graph, options, inputOptions, arrays))
    return fail(std::move(error), kBadInput);
  makeCallTokens(signature, graph, prefill, steps, arrays);
  // Both kinds of call must fit the graph, checked by its verifiers before
  // anything is compiled.
  auto arguments = [&](const NpyArray &tokens) {
    return callArguments(*callSignature, graph, arrays, tokens);
  };
  if (auto error =
          checkInputsFitTogether(entry, arguments(arrays.prefillInput)))
    return fail(std::move(error), kBadInput);
  if (steps > 0)
    if (auto error =
            checkInputsFitTogether(entry, arguments(arrays.stepInputs[0])))
      return fail(std::move(error), kBadInput);

  // The reference's sizes, before the long part.
  std::optional<AttentionShape> layer;
  if (options.check) {
    auto described = describeLayer(wholeEntry, signature, *found, arrays.width);
    if (!described)
      return fail(described.takeError(), kBadInput);
    layer = *described;
  }

  auto function = compileDecoder(parallel ? parallel->module() : *loaded.module,
                                 entry, pm, arguments(arrays.prefillInput));
  if (!function)
    return fail(function.takeError(), kCompileFailed);
  NpyArray outputs = NpyArray::zeros(
      ElementType::F32, {arrays.batch, prefill + steps, arrays.outDim});
  DecodeTimes times;
  if (auto error = runRounds(**function, *callSignature, graph, options, arrays,
                             outputs, times, parallel))
    return fail(std::move(error),
                times.reduceFailed ? kBadInput : kCompileFailed);
  printTimes(os, options, graph, arrays, times);

  auto expected = writeAndExpect(options, outputs, os);
  if (!expected)
    return fail(expected.takeError(), kBadInput);
  int status = *expected ? kOk : kMismatch;
  if (!layer)
    return status;
  DecodedRows rows{arrays.binding,
                   arrays.bound,
                   arrays.givenInputs,
                   arrays.lengths,
                   prefill,
                   steps,
                   outputs,
                   graph.cacheElement == ElementType::BF16};
  auto checked = checkDecodedRows(*layer, rows, options.atol, options.rtol,
                                  options.bf16ErrorFactor, os);
  if (!checked)
    return fail(checked.takeError(), kBadInput);
  return *checked ? status : kMismatch;
}

} // namespace mha::tools
