//===- Strategy.cpp - Tile and register-block sizes from the target -------===//
//
// The rule (deriveCodegenStrategy) and the strategy step (mha-strategy),
// which records its sizes on each function and each attention.
//
//===----------------------------------------------------------------------===//

#include "compiler/strategy/Strategy.h"
#include "compiler/OptionRanges.h"
#include "compiler/Passes.h"
#include "compiler/strategy/AttentionStrategy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mha;

namespace mlir::mha {
#define GEN_PASS_DEF_MHASTRATEGY
#define GEN_PASS_DEF_MHADROPCODEGENSIZES
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

CodegenStrategy
mlir::mha::deriveCodegenStrategy(const TargetDescription &target) {
  CodegenStrategy strategy;
  strategy.lanes = std::max<int64_t>(target.vectorBits / 32, 1);
  // An eighth of the registers hold a row of the right operand (4 zmm of
  // 32, 2 ymm of 16); the accumulators take what is left but that row and
  // 2 registers for broadcasts.
  int64_t columnRegisters = std::max<int64_t>(target.vectorRegisters / 8, 2);
  strategy.cols = columnRegisters * strategy.lanes;
  strategy.rows = std::max<int64_t>(
      (target.vectorRegisters - columnRegisters - 2) / columnRegisters, 1);
  // FMAs per step: one per accumulator register; enough steps per
  // iteration for at least as many FMAs as registers.
  int64_t accumulators = strategy.rows * columnRegisters;
  strategy.reductionUnroll =
      llvm::divideCeil(target.vectorRegisters, accumulators);
  strategy.maxVectorLength = target.vectorRegisters / 2 * strategy.lanes;
  // 8 row blocks by at most 4 column blocks per parallel tile.
  strategy.projectionRowTile = 8 * strategy.rows;
  strategy.projectionColTile = 4 * strategy.cols;
  // The weight panel of a tile, [K, columns] for K up to 1024, stays in a
  // quarter of L2 while the tile's row blocks pass over it, beside the
  // tile's rows of the input and the next tile's panel.
  constexpr int64_t kPanelDepth = 1024;
  int64_t panelColumns = target.l2Bytes / 4 / (kPanelDepth * 4);
  int64_t fitting = panelColumns / strategy.cols * strategy.cols;
  strategy.projectionColTile =
      std::clamp<int64_t>(fitting, strategy.cols, strategy.projectionColTile);
  // Attention: key blocks of two register-block widths; the largest
  // power-of-two query tile, up to 128, whose block of scores fits in L1.
  strategy.attentionKeyTile = 2 * strategy.cols;
  int64_t scoreRows = target.l1Bytes / (strategy.attentionKeyTile * 4);
  strategy.attentionQueryTile = std::clamp<int64_t>(
      int64_t(llvm::bit_floor(uint64_t(std::max<int64_t>(scoreRows, 1)))), 16,
      128);
  fillPassSizes(strategy, target);
  return strategy;
}

void mlir::mha::fillPassSizes(CodegenStrategy &strategy,
                              const TargetDescription &target) {
  // A chunk of the batch keeps what its stages pass on in one core's L2,
  // with 8 row tiles of each projection at least.
  strategy.chunkBytes = target.l2Bytes;
  // (A projection tile of 0 rows, the whole dimension, counts as the
  // rule's 8 row blocks.)
  strategy.chunkRows =
      8 * (strategy.projectionRowTile > 0 ? strategy.projectionRowTile
                                          : 8 * strategy.rows);
  // AMX: 4 A tiles of 16 rows per parallel tile, 16 steps of 32 k between
  // two round trips of the accumulators through memory.
  strategy.amxRows = 64;
  strategy.amxKChunk = 16;
  strategy.l1Bytes = target.l1Bytes;
  // vdpbf16ps exists for 4, 8 and 16 f32 lanes.
  strategy.bf16Lanes = std::clamp<int64_t>(strategy.lanes, 4, 16);
  // The OpenMP threads' stacks are a few MiB.
  strategy.stackBytes = 128 * 1024;
  // A call's cost beside 256 register-block steps is small; attention's
  // blocks (64 or 128 steps) stay inline.
  strategy.outlineSteps = 256;
  // Rows whose length in bytes is a multiple of 4 KiB (a [K, 1024] f32
  // weight, keys transposed to [d, 1024]) start at the same L1 set, so a
  // register block that reads one element of each of 8 rows evicts its
  // own lines; a vector's more per row puts them on different sets, and
  // keeps each row's vectors aligned.
  strategy.rowPadding = strategy.lanes;
  // The online softmax's last blocks: one vector of keys each, so that no
  // block left over is shorter than a vector but the very last.
  strategy.tailKeys = int64_t(llvm::bit_floor(uint64_t(strategy.lanes)));
}

bool mlir::mha::cpuRunsBF16DotAtFmaRate(llvm::StringRef cpuName) {
  // AMD's cores from Zen 4 on ("znver4", "znver5", ...).
  unsigned generation = 0;
  return cpuName.consume_front("znver") &&
         !cpuName.getAsInteger(10, generation) && generation >= 4;
}

BF16Path mlir::mha::chooseBF16Path(const TargetDescription &target,
                                   BF16DotMode mode) {
  switch (mode) {
  case BF16DotMode::Amx:
    return BF16Path::Amx;
  case BF16DotMode::Avx512:
    return BF16Path::Avx512;
  case BF16DotMode::Off:
    return BF16Path::F32;
  case BF16DotMode::Auto:
    break;
  }
  // `auto`: AMX where the target has it (TDPBF16PS: about 14x the f32 FMA
  // rate per core on the Sapphire Rapids measured, docs/performance.md,
  // "bf16"). vdpbf16ps where it does twice the FMA's FLOP per cycle (AMD
  // Zen 4 and later), which makes the projections' products twice as
  // fast. Elsewhere the f32 path: where vdpbf16ps does fewer FLOP per
  // cycle than the FMA (that Sapphire Rapids without its AMX), the dot
  // path ran slower than the f32 one.
  if (target.amxBF16)
    return BF16Path::Amx;
  if (target.avx512bf16 && cpuRunsBF16DotAtFmaRate(target.cpu))
    return BF16Path::Avx512;
  return BF16Path::F32;
}

llvm::StringRef mlir::mha::stringifyBF16Path(BF16Path path) {
  switch (path) {
  case BF16Path::F32:
    return "f32";
  case BF16Path::Avx512:
    return "avx512";
  case BF16Path::Amx:
    return "amx";
  }
  llvm_unreachable("unknown bf16 path");
}

std::optional<BF16Path> mlir::mha::parseBF16Path(llvm::StringRef name) {
  for (BF16Path path : {BF16Path::F32, BF16Path::Avx512, BF16Path::Amx})
    if (name == stringifyBF16Path(path))
      return path;
  return std::nullopt;
}

CodegenSizesAttr
mlir::mha::getCodegenSizesAttr(MLIRContext *context,
                               const CodegenStrategy &strategy) {
  return CodegenSizesAttr::get(
      context, strategy.lanes, strategy.rows, strategy.cols,
      strategy.reductionUnroll, strategy.maxVectorLength,
      strategy.projectionRowTile, strategy.projectionColTile,
      strategy.chunkBytes, strategy.chunkRows, strategy.amxRows,
      strategy.amxKChunk, strategy.l1Bytes, strategy.bf16Lanes,
      strategy.stackBytes, strategy.outlineSteps, strategy.attentionQueryTile,
      strategy.rowPadding, strategy.tailKeys,
      stringifyBF16Path(strategy.bf16Path));
}

std::optional<int64_t> mlir::mha::getRecordedAttentionQueryTile(Operation *op) {
  MhaDialect::TilesAttrHelper tiles(op->getContext());
  if (AttentionTilesAttr own = tiles.getAttr(op))
    return own.getQueryTile();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    function = op->getParentOfType<FunctionOpInterface>();
  if (!function)
    return std::nullopt;
  CodegenSizesAttr sizes =
      MhaDialect::CodegenAttrHelper(op->getContext()).getAttr(function);
  if (!sizes || sizes.getQueryTile() == 0)
    return std::nullopt;
  return sizes.getQueryTile();
}

CodegenSizesAttr mlir::mha::getRecordedCodegenSizes(Operation *op) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    function = op->getParentOfType<FunctionOpInterface>();
  if (!function)
    return nullptr;
  return MhaDialect::CodegenAttrHelper(op->getContext()).getAttr(function);
}

std::optional<BF16Path> mlir::mha::getRecordedBF16Path(Operation *op) {
  CodegenSizesAttr sizes = getRecordedCodegenSizes(op);
  if (!sizes)
    return std::nullopt;
  return parseBF16Path(sizes.getBf16Path());
}

FailureOr<int64_t> mlir::mha::getOptionOrRecorded(
    Operation *op, llvm::StringRef pass, int64_t option,
    llvm::StringRef optionName,
    llvm::function_ref<int64_t(CodegenSizesAttr)> recorded) {
  if (option != 0)
    return option;
  if (CodegenSizesAttr sizes = getRecordedCodegenSizes(op))
    if (int64_t size = recorded(sizes))
      return size;
  return op->emitError() << pass
                         << ": no #mha.codegen_sizes record: run "
                            "mha-strategy first or set "
                         << optionName;
}

namespace {
struct MhaStrategyPass : mha::impl::MhaStrategyBase<MhaStrategyPass> {
  using Base::Base;

  AttentionTileRequest getAttentionRequest() const {
    return {queryTile, keyTile, keySplits};
  }

  /// The options' ranges: those of the pipeline options that set them
  /// (compiler/Pipelines.h), with 0 (-1 for the projection tiles) for the
  /// target's.
  llvm::Error checkOptions() const {
    if (llvm::Error error = checkAttentionTileRequest(getAttentionRequest()))
      return error;
    if (llvm::Error error = checkRegisterBlockOptions(
            registerRows, registerCols, registerUnroll))
      return error;
    struct Range {
      const char *name;
      int64_t value, min, max;
    };
    for (const Range &range :
         {Range{"lanes", lanes, 0, kMaxRegisterBlock},
          Range{"max-vector-length", maxVectorLength, 0, kMaxTileSize},
          Range{"projection-row-tile", projectionRowTile, -1, kMaxTileSize},
          Range{"projection-col-tile", projectionColTile, -1, kMaxTileSize}})
      if (llvm::Error error =
              checkOptionRange(range.name, range.value, range.min, range.max))
        return error;
    return llvm::Error::success();
  }

  /// Refuses options out of range where they are parsed, before any IR is
  /// touched (`--mha-strategy="key-splits=0"`).
  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(text, errorHandler)))
      return failure();
    if (llvm::Error error = checkOptions())
      return errorHandler("mha-strategy: " + llvm::toString(std::move(error)));
    return success();
  }

  void runOnOperation() override {
    // Options set in C++ are not parsed: the same check.
    if (llvm::Error error = checkOptions()) {
      emitError(getOperation().getLoc())
          << "mha-strategy: " << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    // The rule for the module's target, where an option leaves a size to
    // it; the default description (never this machine's) without one.
    TargetDescription target;
    if (TargetAttr recorded = getModuleTarget(getOperation()))
      target = TargetDescription::fromAttr(recorded);
    CodegenStrategy strategy = deriveCodegenStrategy(target);
    auto set = [](int64_t option, int64_t &size, int64_t unset) {
      if (option != unset)
        size = option;
    };
    set(lanes, strategy.lanes, 0);
    set(registerRows, strategy.rows, 0);
    set(registerCols, strategy.cols, 0);
    set(registerUnroll, strategy.reductionUnroll, 0);
    set(maxVectorLength, strategy.maxVectorLength, 0);
    set(projectionRowTile, strategy.projectionRowTile, -1);
    set(projectionColTile, strategy.projectionColTile, -1);
    set(queryTile, strategy.attentionQueryTile, 0);
    // The passes' sizes that follow the options set above.
    fillPassSizes(strategy, target);
    strategy.bf16Path = chooseBF16Path(target, bf16Dot);
    MLIRContext *context = &getContext();
    CodegenSizesAttr sizes = getCodegenSizesAttr(context, strategy);
    AttentionTileRequest request = getAttentionRequest();
    // What a function or an attention already has (written by hand, or by
    // an earlier run) is kept: it was chosen for it.
    MhaDialect::CodegenAttrHelper codegen(context);
    MhaDialect::TilesAttrHelper tiles(context);
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      if (!codegen.isAttrPresent(function))
        codegen.setAttr(function, sizes);
      function.walk([&](SdpaOp op) {
        if (!tiles.isAttrPresent(op))
          tiles.setAttr(op, chooseAttentionTiles(op, request, target));
      });
    }
  }
};

struct MhaDropCodegenSizesPass
    : mha::impl::MhaDropCodegenSizesBase<MhaDropCodegenSizesPass> {
  void runOnOperation() override {
    MhaDialect::CodegenAttrHelper helper(&getContext());
    // Not every function has one (the helper asserts that it is there).
    for (auto function : getOperation().getOps<FunctionOpInterface>())
      if (helper.isAttrPresent(function))
        helper.removeAttr(function);
    MhaDialect::TargetAttrHelper target(&getContext());
    if (target.isAttrPresent(getOperation()))
      target.removeAttr(getOperation());
  }
};
} // namespace
