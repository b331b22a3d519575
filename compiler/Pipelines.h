//===- Pipelines.h - The named pipelines of the mha compiler ----*- C++ -*-===//

#ifndef MHA_COMPILER_PIPELINES_H
#define MHA_COMPILER_PIPELINES_H

#include "compiler/Passes.h"
#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

namespace mlir {
class OpPassManager;

namespace mha {

/// How a bf16 layer rounds what it computes in f32 (`bf16-precision`):
/// `accurate` splits the f32 operands of the bf16 products in hi + lo, within
/// 1.5 times the error of bf16 storage; `fast` rounds them to bf16, as
/// PyTorch, oneDNN and OpenVINO do.
enum class BF16Precision { Accurate, Fast };

/// Options of the named pipelines, e.g.
/// `mha-opt --mha-to-llvm="attention=fused query-tile=32"`.
struct MhaPipelineOptions : public PassPipelineOptions<MhaPipelineOptions> {
  /// How `mha.sdpa` is lowered: tiled and fused, decomposed, or per shape.
  Option<AttentionMode> attention{
      *this, "attention",
      llvm::cl::desc("How attention is lowered (default: auto)"),
      llvm::cl::init(AttentionMode::Auto),
      llvm::cl::values(
          clEnumValN(AttentionMode::Fused, "fused",
                     "tiled, online softmax, parallel over query tiles"),
          clEnumValN(AttentionMode::Decomposed, "decomposed",
                     "the whole score matrix, then softmax"),
          clEnumValN(AttentionMode::Auto, "auto",
                     "per shape (docs/pipeline.md)"))};
  /// Sequences per chunk of `mha-batch-chunks`: the whole layer runs on
  /// that many sequences at a time, so that what its stages pass on stays
  /// in cache; -1 takes as many as fit in the target's L2 (but at least 8
  /// row tiles of the projections), 0 the whole batch (no chunks, as a
  /// tile size of 0 leaves a loop untiled).
  Option<int64_t> batchChunk{
      *this, "batch-chunk",
      llvm::cl::desc("Sequences per chunk of the batch that the whole layer "
                     "runs on at a time (-1: as many as fit in L2; 0: the "
                     "whole batch)"),
      llvm::cl::init(-1)};
  /// Queries per parallel tile of the fused path
  /// (`mha-strategy`); 0 takes it from the target.
  Option<int64_t> queryTile{
      *this, "query-tile",
      llvm::cl::desc("Queries per tile (fused path; 0: from the target's L1)"),
      llvm::cl::init(0)};
  /// Keys per block of the fused path's online softmax; 0 takes it from the
  /// target.
  Option<int64_t> keyTile{
      *this, "key-tile",
      llvm::cl::desc("Keys per block (fused path; 0: from the target's "
                     "vector registers)"),
      llvm::cl::init(0)};
  /// Key ranges the fused path runs in parallel when there are fewer query
  /// tiles (decoding one token of one head).
  Option<int64_t> keySplits{
      *this, "key-splits",
      llvm::cl::desc("Parallel key ranges when query tiles are few (fused "
                     "path; 1: never)"),
      llvm::cl::init(kDefaultKeySplits)};
  /// Fold split_heads/concat_heads into the projections
  /// (`mha-fold-head-layouts`); off only to measure what it saves.
  Option<bool> foldHeadLayouts{
      *this, "fold-head-layouts",
      llvm::cl::desc("Projections read and write heads in place"),
      llvm::cl::init(true)};
  /// Pack the projections of one input (`mha-fuse-projections`). Off by
  /// default here: without prepare-weights the packed weights are a copy
  /// made on every call, which costs more than one larger contraction saves
  /// (docs/projections.md, "Is packing worth it"). mha-run and mha-compile
  /// turn both on (tools/support/PipelineOptions.h).
  Option<bool> fuseProjections{
      *this, "fuse-projections",
      llvm::cl::desc("One packed projection per input (Q/K/V; copies the "
                     "weights on every call unless prepare-weights)"),
      llvm::cl::init(false)};
  /// Split what depends on the weights alone into prepare functions
  /// (`mha-prepare-weights`). It adds arguments to the layer, so only a
  /// runtime that calls the prepare functions can ask for it.
  Option<bool> prepareWeights{
      *this, "prepare-weights",
      llvm::cl::desc("Compute the packed weights once, in functions "
                     "<name>_prepare<i> whose results the layer takes as "
                     "extra arguments"),
      llvm::cl::init(false)};
  /// Rows per parallel tile of the projections (`mha-tile-projections`);
  /// 0 with projection-col-tile=0 leaves the projections sequential. Where
  /// it is not set, the target's (mha-strategy); the default shown is that
  /// of the default description (an AVX-512 core).
  Option<int64_t> projectionRowTile{
      *this, "projection-row-tile",
      llvm::cl::desc("Rows per parallel tile of the projections (0: all; "
                     "default: the target's)"),
      llvm::cl::init(
          deriveCodegenStrategy(TargetDescription()).projectionRowTile)};
  /// Columns per parallel tile of the projections.
  Option<int64_t> projectionColTile{
      *this, "projection-col-tile",
      llvm::cl::desc("Columns per parallel tile of the projections (0: all; "
                     "default: the target's)"),
      llvm::cl::init(
          deriveCodegenStrategy(TargetDescription()).projectionColTile)};
  /// Rows and columns of a contraction's register block (`mha-vectorize`);
  /// 0 takes them from the target (deriveCodegenStrategy).
  Option<int64_t> registerRows{
      *this, "register-rows",
      llvm::cl::desc("Rows of a contraction's register block (0: from the "
                     "target's vector registers)"),
      llvm::cl::init(0)};
  Option<int64_t> registerCols{
      *this, "register-cols",
      llvm::cl::desc("Columns of a contraction's register block (0: from the "
                     "target's vector registers)"),
      llvm::cl::init(0)};
  /// Reduction steps per iteration of a register block's loop
  /// (`mha-vectorize` `unroll`); 0 takes it from the target.
  Option<int64_t> registerUnroll{
      *this, "register-unroll",
      llvm::cl::desc("Reduction steps per iteration of a contraction's "
                     "register-block loop (0: from the target)"),
      llvm::cl::init(0)};
  /// Vectorize the static tiles (`mha-vectorize`); off gives the scalar
  /// loops, to measure what vectorization buys or to debug it.
  Option<bool> vectorize{*this, "vectorize",
                         llvm::cl::desc("Register-blocked vector code for "
                                        "the static tiles"),
                         llvm::cl::init(true)};
  /// Each register block's reduction loop in a function of its own
  /// (`mha-outline-register-blocks`, in mha-to-llvm); off to measure it.
  Option<bool> outlineRegisterBlocks{
      *this, "outline-register-blocks",
      llvm::cl::desc("Compile each register block's loop as a function of "
                     "its own (same code with `?` sizes as with static)"),
      llvm::cl::init(true)};

  /// bf16 projections on the bf16 dot-product instructions
  /// (`mha-bf16-projections`, then `mha-bf16-amx` or `mha-bf16-dot`; they
  /// need prepare-weights and vectorize, else the path is f32). mha-strategy
  /// records the path on each function (chooseBF16Path): `auto` is the
  /// module's target's, AMX where it has AMX-BF16, vdpbf16ps where it runs
  /// it at the FMA's rate, else f32; `amx` and `avx512` (or `on`) need a
  /// target with that extension: mha-run and mha-compile refuse them otherwise.
  Option<BF16DotMode> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 projections on AMX or vdpbf16ps (default: "
                     "auto)"),
      llvm::cl::init(BF16DotMode::Auto),
      llvm::cl::values(
          clEnumValN(BF16DotMode::Auto, "auto",
                     "AMX where the target has AMX-BF16, vdpbf16ps on "
                     "AMD Zen 4 and later, else the f32 path"),
          clEnumValN(BF16DotMode::Amx, "amx",
                     "AMX tiles (TDPBF16PS; the target must have "
                     "AMX-BF16)"),
          clEnumValN(BF16DotMode::Avx512, "avx512",
                     "vdpbf16ps register blocks (the target must have "
                     "AVX512_BF16)"),
          clEnumValN(BF16DotMode::Avx512, "on", "the same as avx512"),
          clEnumValN(BF16DotMode::Off, "off",
                     "never: bf16 computes in f32 on widened values"))};

  /// On the AMX path, the output projection on AMX too, its f32 input
  /// (attention's output) split in two bf16 terms, hi + lo
  /// (mha-bf16-projections' `split-f32`); off keeps it in f32.
  Option<bool> bf16SplitOutput{
      *this, "bf16-split-output",
      llvm::cl::desc("On the AMX path, the output projection on AMX with "
                     "its f32 input split in bf16 hi + lo (default: on)"),
      llvm::cl::init(true)};

  /// On the AMX path, attention's products Q·Kᵀ and P·V in bf16 layers on
  /// AMX too, each operand split in bf16 hi + lo (mha-tile-attention's
  /// `amx-split`, lowered by mha-amx-split); off keeps them in f32.
  Option<bool> bf16AmxAttention{
      *this, "bf16-amx-attention",
      llvm::cl::desc("On the AMX path, attention's Q*K^T and P*V in bf16 "
                     "layers on AMX with their operands split in bf16 "
                     "hi + lo (default: on)"),
      llvm::cl::init(true)};

  /// On the AMX path, attention's products (and the output projection's
  /// input) with their f32 operands split in bf16 hi + lo (`accurate`) or
  /// rounded to bf16 (`fast`: one TDPBF16PS where the split takes three).
  Option<BF16Precision> bf16Precision{
      *this, "bf16-precision",
      llvm::cl::desc("bf16 layers on AMX: f32 operands of the bf16 products "
                     "split in hi + lo, or rounded (default: accurate)"),
      llvm::cl::init(BF16Precision::Accurate),
      llvm::cl::values(
          clEnumValN(BF16Precision::Accurate, "accurate",
                     "split in bf16 hi + lo: within 1.5 times the error of "
                     "bf16 storage"),
          clEnumValN(BF16Precision::Fast, "fast",
                     "rounded to bf16 (Q, K, P, V): a third of the AMX "
                     "work of attention's products"))};

  /// A decoding step's query heads of one key/value head as the rows of
  /// one tile (`mha-tile-attention`'s `group-query-heads`); off keeps a
  /// tile per query head.
  Option<bool> groupQueryHeads{
      *this, "group-query-heads",
      llvm::cl::desc("With grouped-query heads and one query per sequence, "
                     "the query heads of each key/value head as the rows "
                     "of one tile (default: on)"),
      llvm::cl::init(true)};

  /// The schedule of the parallel loops (`mha-omp-schedule`): static by
  /// default, what convert-scf-to-openmp gives; dynamic lets the other
  /// threads absorb a thread that starts late or shares its core.
  Option<std::string> ompSchedule{
      *this, "omp-schedule",
      llvm::cl::desc("Schedule of the OpenMP loops: static, dynamic, guided "
                     "or runtime (OMP_SCHEDULE) (default: static)"),
      llvm::cl::init("static")};

  /// Whether the module's target may keep its AMX features
  /// (`mha-set-target`'s `amx`): a tool that runs the code in its own
  /// process (mha-run, the Python module) clears it where Linux refuses
  /// that process the AMX tile data (runtime/AMXPermission.h), so that
  /// `bf16-dot=auto` does not take the AMX path there.
  bool targetMayUseAMX = true;

  /// The options of `mha-strategy`: the tiles, register blocks and key
  /// splits that are set (the others left to the module's target); and
  /// the options of `mha-tile-attention` and `mha-tile-projections`.
  MhaStrategyOptions getStrategyOptions() const;
  MhaTileAttentionOptions getTileAttentionOptions() const;
  MhaTileProjectionsOptions getTileProjectionsOptions() const;

  /// The CPU the code is compiled for where the module carries no
  /// `mha.target`: `mha-set-target`'s `cpu`, which the pipelines run
  /// first. "host" (the JIT's) unless mha-compile's `--cpu` names another.
  std::string cpu = "host";

  /// Checks every numeric option against its range (compiler/OptionRanges.h):
  /// batch-chunk in [-1, 2^20], query-tile and key-tile in [0, 4096],
  /// key-splits in [1, 1024],
  /// projection-row-tile and projection-col-tile in [0, 4096],
  /// register-rows and register-cols in [0, 64]. The message
  /// names the first value out of range as `<prefix><option>`, e.g.
  /// `--key-splits must be between 1 and 1024, got 0` with prefix "--". Every
  /// tool calls it before it builds a pipeline, so that a bad value is a
  /// usage error, not a failed (or crashing) compilation.
  llvm::Error validate(llvm::StringRef prefix = "") const;
};

/// `mha-to-linalg`: expands `mha.attention`, canonicalizes, tiles the
/// attention that takes the fused path (`mha-tile-attention`), lowers the
/// other mha ops to linalg on tensors and cleans up. Runs on a module.
void buildMhaToLinalgPipeline(OpPassManager &pm,
                              const MhaPipelineOptions &options);

/// `mha-to-loops`: `mha-to-linalg`, then vectorization of the static tiles
/// (`mha-vectorize`), bufferization with identity layouts
/// at function boundaries, buffer deallocation (a returned buffer is owned by
/// the caller) and linalg to scf loops; the fused attention's tile loop
/// becomes an `scf.parallel`. Runs on a module.
void buildMhaToLoopsPipeline(OpPassManager &pm,
                             const MhaPipelineOptions &options);

/// `mha-to-llvm`: the whole compiler, `mha-to-loops` then down to the LLVM
/// dialect, with a `_mlir_ciface_<name>` wrapper for every public function;
/// parallel loops become OpenMP (`__kmpc_*` calls into libomp). This is
/// what the runtime executes. Runs on a module.
void buildMhaToLLVMPipeline(OpPassManager &pm,
                            const MhaPipelineOptions &options);

/// `buildMhaToLLVMPipeline` with the default options.
void buildMhaToLLVMPipeline(OpPassManager &pm);

/// Registers `mha-to-linalg`, `mha-to-loops` and `mha-to-llvm` so that
/// `mha-opt --<name>` prints the IR of each stage. Options out of range
/// (`MhaPipelineOptions::validate`) fail the pipeline's parsing, like an
/// unknown option.
void registerMhaPipelines();

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_PIPELINES_H
