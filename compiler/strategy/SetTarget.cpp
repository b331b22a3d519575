//===- SetTarget.cpp - The CPU a module is compiled for -------------------===//
//
// TargetDescription, the C++ form of `#mha.target`, and `mha-set-target`,
// which records one on a module that has none: a CPU LLVM names, or this
// machine's. Apart from the tools, this pass's "host" default is the one
// place in the compiler that reads the machine it runs on: `mha-strategy`
// reads the module's target, so that `mha-opt`'s output for a module that
// carries one is the same on every machine.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::mha;

namespace mlir::mha {
#define GEN_PASS_DEF_MHASETTARGET
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

namespace {
/// A cache size from sysconf, or `fallback` where the host reports none
/// (0 or -1: some kernels and containers do not say).
[[maybe_unused]] int64_t hostCacheBytes(int name, int64_t fallback) {
  long bytes = sysconf(name);
  return bytes > 0 ? bytes : fallback;
}

/// The feature names of `#mha.target`, in the order they are printed.
constexpr llvm::StringLiteral kAvx2 = "avx2", kFma = "fma",
                              kAvx512f = "avx512f", kAvx512bf16 = "avx512bf16",
                              kAmxTile = "amx-tile", kAmxBF16 = "amx-bf16";
} // namespace

TargetDescription TargetDescription::fromFeatures(
    llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  TargetDescription target;
  target.avx2 = hasFeature(kAvx2);
  target.fma = hasFeature(kFma);
  target.avx512f = hasFeature(kAvx512f);
  target.avx512bf16 = target.avx512f && hasFeature(kAvx512bf16);
  target.amxTile = hasFeature(kAmxTile);
  target.amxBF16 = target.amxTile && hasFeature(kAmxBF16);
  if (target.avx512f) {
    target.vectorBits = 512;
    target.vectorRegisters = 32;
  } else if (target.avx2 || hasFeature("avx")) {
    target.vectorBits = 256;
    target.vectorRegisters = 16;
  } else {
    target.vectorBits = 128;
    target.vectorRegisters = 16;
  }
  return target;
}

std::optional<TargetDescription>
TargetDescription::fromCPU(llvm::StringRef cpu) {
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> features;
  llvm::X86::getFeaturesForCPU(cpu, features);
  TargetDescription target = fromFeatures(
      [&](llvm::StringRef name) { return llvm::is_contained(features, name); });
  target.cpu = cpu.str();
  // LLVM knows no cache sizes: those of the CPU's family.
  if (cpu.starts_with("znver")) {
    target.l1Bytes = 32 * 1024;
    target.l2Bytes = cpu < "znver4" ? 512 * 1024 : 1024 * 1024;
  } else if (target.avx512f) {
    target.l1Bytes = 48 * 1024;
    target.l2Bytes = 2 * 1024 * 1024;
  } else {
    target.l1Bytes = 32 * 1024;
    target.l2Bytes = 256 * 1024;
  }
  return target;
}

const TargetDescription &TargetDescription::host() {
  static const TargetDescription host = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    TargetDescription target = fromFeatures(
        [&](llvm::StringRef name) { return features.lookup(name); });
    target.cpu = llvm::sys::getHostCPUName().str();
#ifdef _SC_LEVEL1_DCACHE_SIZE
    target.l1Bytes = hostCacheBytes(_SC_LEVEL1_DCACHE_SIZE, target.l1Bytes);
    target.l2Bytes = hostCacheBytes(_SC_LEVEL2_CACHE_SIZE, target.l2Bytes);
    target.l3Bytes = hostCacheBytes(_SC_LEVEL3_CACHE_SIZE, 0);
#endif
    target.l2Bytes = std::max(target.l2Bytes, target.l1Bytes);
    target.cores = std::max(llvm::get_physical_cores(), 0);
    return target;
  }();
  return host;
}

TargetAttr TargetDescription::getAttr(MLIRContext *context) const {
  SmallVector<Attribute> names;
  for (auto [has, name] : {std::pair{avx2, kAvx2},
                           {fma, kFma},
                           {avx512f, kAvx512f},
                           {avx512bf16, kAvx512bf16},
                           {amxTile, kAmxTile},
                           {amxBF16, kAmxBF16}})
    if (has)
      names.push_back(StringAttr::get(context, name));
  return TargetAttr::get(context, cpu, ArrayAttr::get(context, names),
                         vectorBits, vectorRegisters, l1Bytes, l2Bytes, l3Bytes,
                         cores);
}

TargetDescription TargetDescription::fromAttr(TargetAttr attr) {
  TargetDescription target;
  target.cpu = attr.getCpu().str();
  target.avx2 = attr.hasFeature(kAvx2);
  target.fma = attr.hasFeature(kFma);
  target.avx512f = attr.hasFeature(kAvx512f);
  target.avx512bf16 = attr.hasFeature(kAvx512bf16);
  target.amxTile = attr.hasFeature(kAmxTile);
  target.amxBF16 = attr.hasFeature(kAmxBF16);
  target.vectorBits = attr.getVectorBits();
  target.vectorRegisters = attr.getVectorRegisters();
  target.l1Bytes = attr.getL1Bytes();
  target.l2Bytes = attr.getL2Bytes();
  target.l3Bytes = attr.getL3Bytes();
  target.cores = attr.getCores();
  return target;
}

TargetAttr mlir::mha::getModuleTarget(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (!module)
    return nullptr;
  return MhaDialect::TargetAttrHelper(op->getContext()).getAttr(module);
}

namespace {
struct MhaSetTargetPass : mha::impl::MhaSetTargetBase<MhaSetTargetPass> {
  using Base::Base;

  /// An unknown CPU is a bad command line, refused before any IR is read.
  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(text, errorHandler)))
      return failure();
    if (cpu != "host" && !TargetDescription::fromCPU(cpu))
      return errorHandler("mha-set-target: unknown CPU '" + cpu +
                          "' (LLVM's x86-64 names: haswell, znver4, "
                          "sapphirerapids, x86-64-v3, ...)");
    return success();
  }

  void runOnOperation() override {
    MhaDialect::TargetAttrHelper helper(&getContext());
    ModuleOp module = getOperation();
    // A target written in the module (a test that pins a machine, a tool
    // that chose one) is kept.
    if (helper.isAttrPresent(module))
      return;
    std::optional<TargetDescription> target =
        cpu == "host" ? TargetDescription::host()
                      : TargetDescription::fromCPU(cpu);
    if (!target) {
      module.emitError() << "mha-set-target: unknown CPU '" << cpu << "'";
      return signalPassFailure();
    }
    // Code that a process Linux refuses the tile data would run must not
    // take the AMX path (runtime/AMXPermission.h).
    if (!amx)
      target->amxTile = target->amxBF16 = false;
    helper.setAttr(module, target->getAttr(&getContext()));
  }
};
} // namespace
