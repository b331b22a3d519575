//===- ObjectEmitter.cpp - LLVM dialect to a relocatable object -----------===//

#include "tools/mha-compile/ObjectEmitter.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "runtime/LLVMOptimizer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

namespace mha::compile {

/// A target machine for `cpu` on this host's architecture.
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError(error);
  std::string cpuName = cpu.str();
  std::string features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SmallVector<std::string> enabled;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      enabled.push_back((feature.second ? "+" : "-") + feature.first().str());
    features = llvm::join(enabled, ",");
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for CPU '" +
                                   cpuName + "'");
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpuName))
    return llvm::createStringError(
        llvm::formatv("unknown CPU '{0}' for {1}", cpuName, triple.str()));
  return machine;
}

llvm::Expected<bool> cpuHasFeature(llvm::StringRef cpu,
                                   llvm::StringRef feature) {
  auto machine = createTargetMachine(cpu);
  if (!machine)
    return machine.takeError();
  return (*machine)->getMCSubtargetInfo()->checkFeatures(("+" + feature).str());
}

llvm::Error emitObjectFile(mlir::ModuleOp module, llvm::StringRef cpu,
                           llvm::ArrayRef<std::string> exported,
                           llvm::StringRef path) {
  auto machine = createTargetMachine(cpu);
  if (!machine)
    return machine.takeError();

  mlir::registerBuiltinDialectTranslation(*module.getContext());
  mlir::registerLLVMDialectTranslation(*module.getContext());
  mlir::registerOpenMPDialectTranslation(*module.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, "mha");
  if (!llvmModule)
    return llvm::createStringError("cannot translate the graph to LLVM IR");
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  // Functions with local linkage (OpenMP's outlined regions) are not
  // visible outside the object anyway, and LLVM requires them to keep the
  // default visibility.
  for (llvm::Function &function : *llvmModule)
    if (!function.isDeclaration() && !function.hasLocalLinkage() &&
        !llvm::is_contained(exported, function.getName()))
      function.setVisibility(llvm::GlobalValue::HiddenVisibility);

  auto optimize = ::mha::runtime::makeLayerOptimizer(machine->get());
  if (llvm::Error error = optimize(llvmModule.get()))
    return error;

  std::error_code errorCode;
  llvm::ToolOutputFile output(path, errorCode, llvm::sys::fs::OF_None);
  if (errorCode)
    return llvm::createStringError(
        llvm::formatv("cannot write '{0}': {1}", path, errorCode.message()));
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, output.os(), nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  codegen.run(*llvmModule);
  output.keep();
  return llvm::Error::success();
}

} // namespace mha::compile
