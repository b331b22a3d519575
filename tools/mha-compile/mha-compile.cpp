//===- mha-compile.cpp - Compile a graph into a C-callable library --------===//
//
// The ahead-of-time path: the same pipeline as mha-run, emitted as object
// code for a chosen CPU and linked with a generated C wrapper into a shared
// library that needs neither MLIR nor LLVM at run time (only libomp and
// libc), plus the header that declares it.
//
// Exit codes (tools/support/ToolSupport.h): 0 success, 2 bad input or usage
// (also an output that cannot be written), 3 compilation or link failed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "runtime/GraphLoader.h"
#include "tools/mha-compile/CInterface.h"
#include "tools/mha-compile/CInterfaceSupport.h"
#include "tools/mha-compile/ObjectEmitter.h"
#include "tools/mha-compile/ParallelLibrary.h"
#include "tools/support/PipelineOptions.h"
#include "tools/support/ToolSupport.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
namespace cl = llvm::cl;

using ::mha::tools::ExitCode;
using ::mha::tools::kBadInput;
using ::mha::tools::kCompileFailed;
using ::mha::tools::kOk;

namespace {

cl::OptionCategory compileCategory("mha-compile options");
cl::opt<std::string> graphFile(cl::Positional, cl::desc("<graph.mlir>"),
                               cl::Required, cl::cat(compileCategory));
cl::opt<std::string> libraryFile("o", cl::desc("The shared library to write"),
                                 cl::value_desc("libNAME.so"), cl::Required,
                                 cl::cat(compileCategory));
cl::opt<std::string> headerFile("header",
                                cl::desc("The C header to write (default: "
                                         "NAME.h beside the library)"),
                                cl::value_desc("NAME.h"),
                                cl::cat(compileCategory));
cl::opt<std::string> libraryName(
    "name", cl::desc("Prefix of the C functions (default: NAME of libNAME.so)"),
    cl::cat(compileCategory));
cl::opt<std::string> entryName("entry",
                               cl::desc("Function to compile (default: the "
                                        "one public function)"),
                               cl::cat(compileCategory));
cl::opt<std::string> cpu("cpu",
                         cl::desc("Target CPU: native (this machine) or an "
                                  "LLVM CPU name such as x86-64-v3"),
                         cl::init("native"), cl::cat(compileCategory));
cl::opt<std::string> linker("cc",
                            cl::desc("C compiler that compiles the wrapper "
                                     "and links the library"),
                            cl::init(MHA_CLANG_PATH), cl::cat(compileCategory));

cl::opt<std::string> parallelMode(
    "parallel",
    cl::desc("Split the layer among the ranks of an MPI job: heads (each "
             "rank computes its share of the heads; docs/distributed.md)"),
    cl::value_desc("heads"), cl::cat(compileCategory));
cl::opt<int64_t> rankCount("ranks",
                           cl::desc("The ranks that --parallel splits among"),
                           cl::init(0), cl::cat(compileCategory));

void reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-compile") << message << "\n";
}

int fail(llvm::Error error, ExitCode code) {
  reportError(llvm::toString(std::move(error)));
  return code;
}

/// NAME of `libNAME.so`, as a C identifier.
std::string defaultName() {
  llvm::StringRef stem = llvm::sys::path::stem(libraryFile);
  stem.consume_front("lib");
  return ::mha::compile::toCIdentifier(stem);
}

/// Writes `text` to `path`; a full device or a failed close is an error too,
/// not only a file that cannot be opened.
llvm::Error writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (!error) {
    os << text;
    os.close();
    error = os.error();
    os.clear_error();
  }
  if (error)
    return llvm::createStringError(
        llvm::formatv("cannot write '{0}': {1}", path, error.message()));
  return llvm::Error::success();
}

/// Writes the fixed C that the wrapper includes into `folder`, beside it.
llvm::Error writeLibrarySources(llvm::StringRef folder) {
  for (const auto &[name, text] : ::mha::compile::librarySources()) {
    llvm::SmallString<128> path(folder);
    llvm::sys::path::append(path, name);
    if (std::error_code error = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(path)))
      return llvm::createStringError(
          llvm::formatv("cannot create '{0}': {1}",
                        llvm::sys::path::parent_path(path), error.message()));
    if (llvm::Error error = writeFile(path, text))
      return error;
  }
  return llvm::Error::success();
}

/// Checks --parallel and --ranks; returns kOk, or the exit code after
/// reporting why not.
int checkParallelOptions() {
  if (parallelMode.empty()) {
    if (rankCount.getNumOccurrences())
      return reportError("--ranks goes with --parallel heads"), kBadInput;
    return kOk;
  }
#ifndef MHA_HAVE_MPI
  return reportError("--parallel needs MPI, and this mha-compile was built "
                     "without it (CMake found no MPI: install "
                     "libopenmpi-dev, e.g. with `make deps`, and configure "
                     "again)"),
         kBadInput;
#endif
  if (parallelMode != "heads")
    return reportError("--parallel must be `heads` (the split by sequence is "
                       "not done yet), got '" +
                       parallelMode + "'"),
           kBadInput;
  if (rankCount < 1)
    return reportError(llvm::formatv("--parallel heads needs --ranks N, the "
                                     "ranks of the MPI job (at least 1), got "
                                     "{0}",
                                     rankCount.getValue())),
           kBadInput;
  return kOk;
}

/// The compiler flags and libraries of MPI that a split library's wrapper
/// needs; none for another library.
std::vector<std::string> mpiFlags(bool parallel) {
  std::vector<std::string> flags;
#ifdef MHA_HAVE_MPI
  if (!parallel)
    return flags;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(MHA_MPI_INCLUDE_DIRS).split(parts, ',', -1, false);
  for (llvm::StringRef dir : parts)
    flags.push_back(("-I" + dir).str());
  parts.clear();
  llvm::StringRef(MHA_MPI_LIBRARIES).split(parts, ',', -1, false);
  for (llvm::StringRef library : parts) {
    flags.push_back(library.str());
    flags.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  }
#endif
  return flags;
}

/// Compiles `wrapper` (and `extra`: more sources and flags) and links it
/// with `object` and libomp into `library`.
llvm::Error link(llvm::StringRef wrapper, llvm::StringRef object,
                 llvm::StringRef library,
                 llvm::ArrayRef<std::string> extra = {}) {
  auto program = llvm::sys::findProgramByName(linker);
  if (!program)
    return llvm::createStringError("cannot find the C compiler '" + linker +
                                   "' (set it with --cc)");
  std::string libDir = MHA_LIBOMP_DIR;
  llvm::SmallVector<llvm::StringRef> args = {*program, "-shared",  "-fPIC",
                                             "-O2",    "-std=c11", "-o",
                                             library,  wrapper,    object};
  std::string libPath = "-L" + libDir, rpath = "-Wl,-rpath," + libDir;
  for (const std::string &arg : extra)
    args.push_back(arg);
  args.append({libPath, rpath, "-lomp", "-lm"});
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, {}, 0, 0,
                                         &message);
  if (status != 0)
    return llvm::createStringError(llvm::formatv(
        "linking {0} failed ({1} exited with {2}{3})", libraryFile, *program,
        status, message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}

/// Sets the compiler's target options from --cpu; returns kOk, or the exit
/// code after reporting why not.
int configureTarget(mlir::mha::MhaPipelineOptions &pipelineOptions) {
  // The module's target (mha-set-target, which the pipeline runs first):
  // --cpu's features and the caches of its family, or this machine's. Its
  // sizes follow from it (mha-strategy); options given by hand stay. A CPU
  // LLVM does not know is refused below.
  pipelineOptions.cpu = cpu == "native" ? std::string("host") : cpu.getValue();
  // The library runs on --cpu, not necessarily on this machine: the bf16
  // dot paths need that CPU's instructions, or the library could not run.
  // (`auto` is the target's choice, made by mha-strategy.)
  {
    llvm::Expected<bool> hasBF16 =
        ::mha::compile::cpuHasFeature(cpu, "avx512bf16");
    if (!hasBF16)
      return fail(hasBF16.takeError(), kCompileFailed);
    llvm::Expected<bool> hasAMX =
        ::mha::compile::cpuHasFeature(cpu, "amx-bf16");
    if (!hasAMX)
      return fail(hasAMX.takeError(), kCompileFailed);
    if (pipelineOptions.bf16Dot == mlir::mha::BF16DotMode::Avx512 && !*hasBF16)
      return reportError("--bf16-dot=avx512 (or on) needs a --cpu with "
                         "AVX512_BF16; '" +
                         cpu + "' has none"),
             kBadInput;
    if (pipelineOptions.bf16Dot == mlir::mha::BF16DotMode::Amx && !*hasAMX)
      return reportError("--bf16-dot=amx needs a --cpu with AMX-BF16; '" + cpu +
                         "' has none"),
             kBadInput;
  }
  return kOk;
}

/// Refuses a graph with a bf16 argument updated in place that is not a
/// key/value cache; returns kOk, or the exit code after reporting it.
int checkInPlaceBF16(::mha::runtime::LoadedGraph &graph) {
  // The C interface rounds float32 arrays to bf16 for bf16 arguments, into
  // copies: an argument that the graph updates in place would be updated in
  // the copy, not in the caller's array. A key/value cache (k_cache,
  // v_cache, or a paged cache's pools k_pool, v_pool) is the exception: the
  // C API takes its bf16 bits as they are (isBF16Cache).
  for (auto [index, argument] : llvm::enumerate(graph.signature.arguments))
    if (argument.type.getElementType().isBF16() &&
        !::mha::compile::isBF16Cache(argument) &&
        llvm::is_contained(graph.signature.resultAliases,
                           std::optional<unsigned>(index)))
      return reportError(llvm::formatv(
                 "argument '{0}' of @{1} is a bf16 argument updated in "
                 "place, which mha-compile takes only as a key/value cache "
                 "named k_cache or v_cache, or a paged cache's pool k_pool "
                 "or v_pool (the C API takes other bf16 "
                 "arguments as float32 arrays and rounds them into copies, "
                 "so an update in place would not reach the caller's array)",
                 argument.name, graph.entry.getSymName())),
             kBadInput;
  return kOk;
}

/// A split library's public header at `header` and its C, in `workDir`:
/// the inner library's header and the public functions on top of it.
/// Returns the sources and flags to compile with the wrapper.
llvm::Expected<std::vector<std::string>>
writeParallelSources(const ::mha::compile::LibraryInterface &share,
                     const ::mha::compile::ParallelLayout &layout,
                     llvm::StringRef workDir, llvm::StringRef header,
                     llvm::StringRef shareHeader) {
  ::mha::compile::LibraryInterface full = share;
  full.name = llvm::StringRef(share.name).drop_back(6).str(); // "_share"
  full.signature = layout.fullSignature;
  full.sizeRelations = layout.fullRelations;
  full.ranks = int64_t(layout.shares.size());
  llvm::SmallString<128> source(workDir);
  llvm::sys::path::append(source, "parallel.c");
  if (auto error = writeFile(header, ::mha::compile::writeHeader(full)))
    return std::move(error);
  if (auto error =
          writeFile(source, ::mha::compile::writeParallelWrapper(
                                full, share, layout, header, shareHeader)))
    return std::move(error);
  std::vector<std::string> extra = mpiFlags(true);
  extra.push_back(source.str().str());
  return extra;
}

/// Writes the header, compiles the wrapper and `module`, links the library
/// and copies it where it was asked for; returns the exit code. A split
/// library (`parallel`) has the public functions of ParallelLibrary.h on
/// top of `interface`'s.
int writeOutputs(const ::mha::compile::LibraryInterface &interface,
                 ModuleOp module,
                 const ::mha::compile::ParallelLayout *parallel) {
  llvm::StringRef publicName = interface.name;
  if (parallel)
    publicName.consume_back("_share");
  // Object code and the wrapper go to a temporary folder; the library and
  // the header to where they were asked for.
  llvm::SmallString<128> workDir;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("mha-compile", workDir))
    return reportError("cannot create a temporary folder: " + error.message()),
           kCompileFailed;
  std::string header = headerFile;
  if (header.empty()) {
    llvm::SmallString<128> path(llvm::sys::path::parent_path(libraryFile));
    llvm::sys::path::append(path, publicName + ".h");
    header = path.str().str();
  }
  llvm::SmallString<128> headerAbsolute(header);
  llvm::sys::fs::make_absolute(headerAbsolute);
  // A split library's public header is the full layer's; the wrapper of
  // its inner library includes the inner header, in the temporary folder.
  llvm::SmallString<128> innerHeader(header);
  if (parallel) {
    innerHeader = workDir;
    llvm::sys::path::append(innerHeader, interface.name + ".h");
  }
  llvm::SmallString<128> object(workDir), wrapper(workDir);
  llvm::sys::path::append(object, "graph.o");
  llvm::sys::path::append(wrapper, "wrapper.c");
  // The library is linked in the temporary folder and then copied, so that
  // an output that cannot be written is reported as such (exit 2), not as a
  // failed link.
  llvm::SmallString<128> linked(workDir);
  llvm::sys::path::append(linked, "library.so");

  int status = kOk;
  llvm::Expected<std::vector<std::string>> extra = std::vector<std::string>();
  if (parallel)
    extra = writeParallelSources(interface, *parallel, workDir, headerAbsolute,
                                 innerHeader);
  if (!extra)
    status = fail(extra.takeError(), kBadInput);
  else if (auto error =
               writeFile(innerHeader, ::mha::compile::writeHeader(interface)))
    status = fail(std::move(error), kBadInput);
  else if (auto error =
               writeFile(wrapper, ::mha::compile::writeWrapper(
                                      interface,
                                      parallel ? innerHeader : headerAbsolute)))
    status = fail(std::move(error), kCompileFailed);
  else if (auto error = writeLibrarySources(workDir))
    status = fail(std::move(error), kCompileFailed);
  else if (auto error = ::mha::compile::emitObjectFile(
               module, cpu, {interface.graphSymbol}, object))
    status = fail(std::move(error), kCompileFailed);
  else if (auto error = link(wrapper, object, linked, *extra))
    status = fail(std::move(error), kCompileFailed);
  else if (auto buffer = llvm::MemoryBuffer::getFile(linked); !buffer)
    status = fail(llvm::createStringError(
                      llvm::formatv("cannot read the linked library '{0}': {1}",
                                    linked, buffer.getError().message())),
                  kCompileFailed);
  else if (auto error = writeFile(libraryFile, (*buffer)->getBuffer()))
    status = fail(std::move(error), kBadInput);
  llvm::sys::fs::remove_directories(workDir);
  // Every file written, by name: the header goes beside the library unless
  // --header says otherwise.
  std::vector<std::string> rounded =
      ::mha::compile::roundedArguments(interface);
  if (status == kOk && !rounded.empty())
    llvm::outs() << "the library rounds the float32 arguments "
                 << llvm::join(rounded, ", ")
                 << " to bf16 (round to nearest even)\n";
  if (status == kOk)
    llvm::outs() << "wrote the library " << libraryFile << " and its header "
                 << header << "\n";
  return status;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  ::mha::tools::hideLLVMOptions({&compileCategory});
  mlir::registerPassManagerCLOptions();
  mlir::mha::registerMhaPasses();
  // The compiler's options, as mha-run takes them (and with its defaults).
  mlir::mha::MhaPipelineOptions &pipelineOptions =
      ::mha::tools::registerPipelineOptions(compileCategory);
  if (!::mha::tools::parseCommandLine(
          argc, argv,
          "mha-compile: compile a graph into a C-callable library\n"))
    return kBadInput;
  if (auto error = pipelineOptions.validate("--"))
    return fail(std::move(error), kBadInput);
  // The functions' prefix comes from libNAME.so; a file with no NAME in it
  // would give every function a bare `_` prefix.
  if (libraryName.empty() && llvm::StringRef(defaultName()).trim('_').empty()) {
    reportError("cannot take the functions' prefix from '" + libraryFile +
                "': name the library libNAME.so or give --name");
    return kBadInput;
  }
  if (int status = configureTarget(pipelineOptions); status != kOk)
    return status;
  if (int status = checkParallelOptions(); status != kOk)
    return status;

  DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto graph = ::mha::runtime::loadGraph(graphFile, entryName, context);
  if (!graph)
    return fail(graph.takeError(), kBadInput);
  if (int status = checkInPlaceBF16(*graph); status != kOk)
    return status;
  // A split library compiles rank 0's graph, as the inner library NAME_share.
  std::optional<::mha::compile::ParallelLayout> parallel;
  if (!parallelMode.empty()) {
    auto layout = ::mha::compile::splitAmongRanks(*graph, rankCount);
    if (!layout)
      return fail(layout.takeError(), kBadInput);
    parallel = std::move(*layout);
  }

  ::mha::compile::LibraryInterface interface;
  interface.name =
      (libraryName.empty() ? defaultName()
                           : ::mha::compile::toCIdentifier(libraryName)) +
      (parallel ? "_share" : "");
  interface.graphFile = llvm::sys::path::filename(graphFile).str();
  interface.signature = graph->signature;
  auto relations =
      ::mha::runtime::deriveSizeRelations(graph->entry, graph->signature);
  if (!relations)
    return fail(relations.takeError(), kBadInput);
  interface.sizeRelations = std::move(*relations);
  // The arguments NAME_create takes: those mha-prepare-weights may prepare.
  llvm::SmallVector<bool> weights = mlir::mha::getWeightArguments(graph->entry);
  interface.isWeight.assign(weights.begin(), weights.end());

  // The graph's own symbols carry the library's name, so that two libraries
  // can be loaded into one process.
  std::string graphName = interface.name + "_graph";
  if (failed(SymbolTable::replaceAllSymbolUses(
          graph->entry, StringAttr::get(&context, graphName), *graph->module)))
    return reportError("cannot rename @" + graph->entry.getSymName().str()),
           kCompileFailed;
  graph->entry.setSymName(graphName);
  interface.graphSymbol = "_mlir_ciface_" + graphName;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return reportError("bad pass manager options"), kBadInput;
  mlir::mha::buildMhaToLLVMPipeline(pm, pipelineOptions);
  if (failed(pm.run(*graph->module)))
    return reportError("lowering " + graphFile + " failed (see above)"),
           kCompileFailed;
  // AMX code (mha-bf16-amx) needs the kernel's permission at run time.
  graph->module->walk([&](LLVM::CallIntrinsicOp call) {
    interface.usesAMX |= call.getIntrin().starts_with("llvm.x86.tile") ||
                         call.getIntrin().starts_with("llvm.x86.tdp");
  });
  // The prepare functions mha-prepare-weights added, if any, as the graph
  // declares them: the wrapper calls them and passes their results to the
  // graph.
  if (auto graphFunction =
          SymbolTable::lookupSymbolIn(*graph->module, graphName))
    if (ArrayAttr listed =
            mlir::mha::MhaDialect::PrepareFunctionsAttrHelper(&context).getAttr(
                graphFunction))
      for (auto symbol : listed.getAsRange<FlatSymbolRefAttr>())
        interface.prepareSymbols.push_back(
            ("_mlir_ciface_" + symbol.getValue()).str());

  return writeOutputs(interface, *graph->module,
                      parallel ? &*parallel : nullptr);
}
