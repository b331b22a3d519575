//===- Strategy.h - Tile and register-block sizes from the target -*- C++ -*-//
//
// One place derives the sizes that the code generation passes use from the
// CPU the code is compiled for: the register block of mha-vectorize, the
// parallel tiles of mha-tile-projections and the tiles of the fused
// attention (recorded on each mha.sdpa by mha-strategy), and the path of
// the bf16 projections. mha-strategy applies it to the module's target
// and records the result; the passes read the record, and options set by
// hand override it. docs/pipeline.md ("Sizes from the target") states
// the rule.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_STRATEGY_STRATEGY_H
#define MHA_COMPILER_STRATEGY_STRATEGY_H

#include "dialects/MhaDialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace mha {

/// What the rule reads off a CPU: the C++ form of `#mha.target`
/// (MhaAttributes.td), which a module carries as `mha.target`.
struct TargetDescription {
  /// LLVM's name of the CPU ("haswell"), or empty.
  std::string cpu;
  /// The target features that change the code.
  bool avx2 = true, fma = true, avx512f = true, avx512bf16 = false,
       amxTile = false, amxBF16 = false;
  /// Bits of the widest float vector register (512 with AVX-512F, 256 with
  /// AVX2, 128 otherwise).
  int64_t vectorBits = 512;
  /// Vector registers the code may use (32 zmm with AVX-512F, 16 else).
  int64_t vectorRegisters = 32;
  /// Data cache sizes of one core, and the shared L3 (0: unknown).
  int64_t l1Bytes = 48 * 1024;
  int64_t l2Bytes = 2 * 1024 * 1024;
  int64_t l3Bytes = 0;
  /// Cores (0: unknown).
  int64_t cores = 0;

  /// The features that `hasFeature` answers (LLVM's names: "avx512f",
  /// "avx2"), with the registers they give; the caches stay the defaults
  /// above.
  static TargetDescription
  fromFeatures(llvm::function_ref<bool(llvm::StringRef)> hasFeature);
  /// The CPU LLVM calls `cpu` ("haswell", "znver4", "sapphirerapids"), with
  /// the caches of its family (LLVM does not know them): AVX-512 Intel
  /// cores 48 KiB and 2 MiB, other Intel cores 32 KiB and 256 KiB, AMD's
  /// Zen 32 KiB and 512 KiB (1 MiB from Zen 4). None for a name LLVM's x86
  /// targets do not know.
  static std::optional<TargetDescription> fromCPU(llvm::StringRef cpu);
  /// This machine's CPU, with the caches and cores it reports. Called by
  /// the tools and by `mha-set-target`'s default ("host") only: every
  /// other size comes from the module's `mha.target`.
  static const TargetDescription &host();

  /// As an attribute, and back.
  TargetAttr getAttr(MLIRContext *context) const;
  static TargetDescription fromAttr(TargetAttr attr);
};

/// The target recorded on `op`'s module (`mha.target`), else null.
TargetAttr getModuleTarget(Operation *op);

/// Which instructions the bf16 projections run on (`bf16-dot`): `auto`
/// (the target's choice, chooseBF16Path), AMX tiles, AVX512_BF16's
/// vdpbf16ps (`on` is its old name), or off (f32 on widened values).
enum class BF16DotMode { Auto, Avx512, Amx, Off };

/// The path that the bf16 projections take, recorded on each function
/// (`#mha.codegen_sizes`' bf16_path).
enum class BF16Path { F32, Avx512, Amx };

/// Whether the CPU named `cpuName` (LLVM's names: "znver4") issues
/// AVX512_BF16's vdpbf16ps zmm as often as the f32 FMA, so that its 32
/// products per instruction are twice the FMA's arithmetic rate. No target
/// feature says so; it is a property of the core: AMD's Zen 4 and later.
/// (The Intel core measured, Sapphire Rapids, issues it at half that rate
/// and has AMX.) The CPU must also have AVX512_BF16.
bool cpuRunsBF16DotAtFmaRate(llvm::StringRef cpuName);

/// The bf16 path that `mode` takes on `target`: the mode's own where it
/// names one; for `auto`, AMX where the target has AMX-BF16, vdpbf16ps
/// where it runs at the FMA's rate (cpuRunsBF16DotAtFmaRate), else f32.
BF16Path chooseBF16Path(const TargetDescription &target, BF16DotMode mode);

/// The record's spelling of `path` ("f32", "avx512", "amx"), and back
/// (none for another string).
llvm::StringRef stringifyBF16Path(BF16Path path);
std::optional<BF16Path> parseBF16Path(llvm::StringRef name);

/// The sizes the code generation passes use.
struct CodegenStrategy {
  /// f32 elements of one vector register (mha-vectorize `lanes`).
  int64_t lanes;
  /// Rows and columns of a contraction's register block (mha-vectorize
  /// `rows` and `cols`).
  int64_t rows, cols;
  /// Reduction steps per iteration of a contraction's innermost loop
  /// (mha-vectorize `unroll`).
  int64_t reductionUnroll;
  /// Longest vector along the last loop of a non-contraction op
  /// (mha-vectorize `max-vector-length`).
  int64_t maxVectorLength;
  /// Rows and columns of a projection's parallel tile
  /// (mha-tile-projections `row-tile` and `col-tile`).
  int64_t projectionRowTile, projectionColTile;
  /// Queries per parallel tile and keys per block of the fused attention
  /// (mha-strategy `query-tile` and `key-tile`).
  int64_t attentionQueryTile, attentionKeyTile;
  /// mha-batch-chunks: the bytes a chunk's intermediates may take and the
  /// query rows it has at least.
  int64_t chunkBytes, chunkRows;
  /// mha-bf16-amx: rows per parallel tile, steps of 32 k between two round
  /// trips of the accumulators, and the L1 its weight panels must fit.
  int64_t amxRows, amxKChunk, l1Bytes;
  /// mha-bf16-dot: f32 lanes of its vectors.
  int64_t bf16Lanes;
  /// mha-stack-scratch: bytes of scratch per parallel loop on the stack.
  int64_t stackBytes;
  /// mha-outline-register-blocks: contraction steps per call, at least.
  int64_t outlineSteps;
  /// f32 elements added to each row of a padded buffer (mha-weight-layouts'
  /// weights, mha-tile-attention's transposed keys): one vector.
  int64_t rowPadding;
  /// Keys per block of the online softmax's last, peeled blocks: one vector
  /// of f32.
  int64_t tailKeys;
  /// The path of the bf16 projections (chooseBF16Path).
  BF16Path bf16Path = BF16Path::F32;
};

/// The rule (docs/pipeline.md, "Sizes from the target"):
/// - a register block is an eighth of the registers wide in columns (at
///   least 2), so that each broadcast of a left-operand element feeds that
///   many FMAs, and as many rows as the registers hold in accumulators
///   beside one right-operand row and 2 broadcasts (AVX-512: 6 x 64 floats
///   in 24 of 32 zmm; AVX2: 6 x 16 in 12 of 16 ymm, BLIS's Haswell block):
///   a reduction step then loads rows + column registers values for
///   rows x column registers FMAs;
/// - a contraction's reduction loop does as many steps per iteration as
///   make its FMAs at least as many as the registers (2 on both), so that
///   the loop's own increments and branch come once per 2 steps;
/// - a non-contraction row is at most half the registers long;
/// - a projection tile is 8 row blocks by up to 4 column blocks: each
///   weight row loaded from L2 serves 8 row blocks, and a tile is small
///   enough that 2 threads get many (8 heads x T/48); its columns are
///   fewer where a [1024, cols] weight panel would not fit in a quarter of
///   L2 (AVX-512 with 2 MiB: 48 x 128);
/// - an attention key block is two register blocks of columns wide (its
///   scores S = Q·Kᵀ are register blocks of the query rows), and a query
///   tile is the largest power of two of rows, from 16 to 128, whose
///   [query tile, key block] of f32 scores fits in L1: the block is written
///   by Q·Kᵀ, read and rewritten by the softmax and read by P·V, from L1;
///   at most 128 rows, so that a sequence of 512 still gives each head 4
///   parallel tiles (AVX-512 with 32 or 48 KiB: 64 x 128; AVX2 with 32 KiB:
///   128 x 32);
/// - a batch chunk's intermediates fit in L2, and it has at least 8 row
///   tiles of the projections;
/// - AMX tiles of 64 rows, 16 steps of 32 k per round trip of the
///   accumulators, panels in the target's L1; bf16 dot vectors of the
///   target's f32 lanes (at most 16, the widest vdpbf16ps);
/// - 128 KiB of scratch per parallel loop on the stack (a small part of
///   the OpenMP threads' few MiB); register blocks of 256 steps and more
///   outlined;
/// - rows of padded buffers one vector longer, and the online softmax's
///   tail key blocks one vector of keys.
/// The bf16 path is f32 here: mha-strategy chooses it (chooseBF16Path).
CodegenStrategy deriveCodegenStrategy(const TargetDescription &target);

/// The single passes' sizes of `strategy` (chunkBytes to outlineSteps) for
/// `target`, from its register block and projection tiles.
void fillPassSizes(CodegenStrategy &strategy, const TargetDescription &target);

/// The query tile recorded for the fused attention of `op`: its own
/// `mha.tiles` (an mha.sdpa), else its function's `mha.codegen` query_tile
/// (the strategy's for the target, or the `query-tile` option), else none.
std::optional<int64_t> getRecordedAttentionQueryTile(Operation *op);

/// The sizes of `strategy` that mha-strategy records on a function
/// (`mha.codegen`); the attention tiles are recorded per `mha.sdpa`
/// (AttentionStrategy.h).
CodegenSizesAttr getCodegenSizesAttr(MLIRContext *context,
                                     const CodegenStrategy &strategy);

/// The sizes recorded on `op`'s function (or on `op`, a function), else
/// null: the code generation passes read them there, unless their own
/// options set them.
CodegenSizesAttr getRecordedCodegenSizes(Operation *op);

/// The bf16 path recorded on `op`'s function, else none (no record, or
/// one written without it).
std::optional<BF16Path> getRecordedBF16Path(Operation *op);

/// A size of pass `pass` for `op`: `option` where it is set (not 0), else
/// what `recorded` reads off its function's record (where that is set,
/// not 0), else an error on `op`, "<pass>: no #mha.codegen_sizes record:
/// run mha-strategy first or set <optionName>", and failure.
FailureOr<int64_t>
getOptionOrRecorded(Operation *op, llvm::StringRef pass, int64_t option,
                    llvm::StringRef optionName,
                    llvm::function_ref<int64_t(CodegenSizesAttr)> recorded);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_STRATEGY_STRATEGY_H
