//===- ToolSupport.h - What every mha tool does the same way ----*- C++ -*-===//
//
// The exit codes that mha-opt, mha-gen and mha-run share, command-line
// parsing and output streams that report a bad option or a failed write like
// every other error instead of exiting with LLVM's code 1 (which means
// "check failed" here).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_SUPPORT_TOOLSUPPORT_H
#define MHA_TOOLS_SUPPORT_TOOLSUPPORT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class raw_fd_ostream;
} // namespace llvm

namespace mha {
namespace tools {

/// The documented exit codes of the mha tools (README.md, "The tools").
enum ExitCode {
  /// Success.
  kOk = 0,
  /// A check failed: mha-run's output is outside the tolerance of --expect
  /// or --check; mha-opt's -verify-diagnostics found other diagnostics.
  kMismatch = 1,
  /// Bad usage or bad input: an unknown option or a bad value, a file that
  /// cannot be read, a graph that does not parse or verify, a bad `.npy`.
  kBadInput = 2,
  /// The graph is valid but a pass or the JIT failed on it.
  kCompileFailed = 3,
};

/// Parses the command line as cl::ParseCommandLineOptions does, but prints
/// a bad option as `<tool>: error: ...` and returns false, so that the tool
/// can exit with kBadInput. `--help` and `--version` still exit with 0.
bool parseCommandLine(int argc, const char *const *argv,
                      llvm::StringRef overview);

/// Moves LLVM's own options (its code generators' and passes', hundreds of
/// them, registered when the tool is loaded) from `--help` to
/// `--help-hidden`: every option registered so far that is in none of
/// `shown` and not one of `--help`, `--help-list` or `--version`. Call it
/// first in main, before MLIR's options are registered (they stay shown:
/// `--mlir-timing`, mha-opt's pass list); the hidden options still parse.
void hideLLVMOptions(llvm::ArrayRef<llvm::cl::OptionCategory *> shown);

/// A file a tool reads or writes, and how the command line names it
/// ("--output", "input 'x'", "the graph").
struct ToolFile {
  /// How the command line names the file, for messages.
  std::string role;
  /// The path as given.
  std::string path;
};

/// Fails if a file in `writes` is the same file as one in `reads`
/// (llvm::sys::fs::equivalent: also through symbolic and hard links and
/// spellings such as `./x`), so that a tool never overwrites what it reads:
/// `--expect F --output F` would compare the result with itself. Files that
/// do not exist yet cannot be read, so they never clash.
llvm::Error checkNoOverwrite(llvm::ArrayRef<ToolFile> reads,
                             llvm::ArrayRef<ToolFile> writes);

/// Flushes `os`, which writes `name` (a path, or "-" for stdout), and
/// reports a write that failed there (a full disk, /dev/full) as
/// `<tool>: error: cannot write 'NAME': ...` (`cannot write to stdout: ...`).
/// The stream's error is cleared, so that its destructor does not end the
/// process with LLVM's "IO failure" and exit code 1. Returns false on a
/// failed write.
bool finishOutput(llvm::raw_fd_ostream &os, llvm::StringRef tool,
                  llvm::StringRef name);

/// The exit code a tool ends with once llvm::outs() is flushed: `code`, or
/// kBadInput when writing stdout failed (reported as finishOutput does) and
/// `code` said nothing worse. A tool's main returns
/// `finishStdout(tool, run(...))`, so that every path checks it.
int finishStdout(llvm::StringRef tool, int code);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_SUPPORT_TOOLSUPPORT_H
