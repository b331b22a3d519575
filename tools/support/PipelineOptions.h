//===- PipelineOptions.h - Pipeline options on the command line -*- C++ -*-===//
//
// mha-run and mha-compile take the options of the named pipelines
// (`--attention`, `--query-tile`, ...) on their command lines. Both parse them
// into one MhaPipelineOptions, whose declarations (compiler/Pipelines.h) are
// the only ones: the names, values, descriptions and ranges are those of
// `mha-opt --mha-to-llvm="..."`, and only the defaults of three options
// differ, the same in both tools (ToolPipelineOptions).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_SUPPORT_PIPELINEOPTIONS_H
#define MHA_TOOLS_SUPPORT_PIPELINEOPTIONS_H

#include "compiler/Pipelines.h"

#include "llvm/Support/CommandLine.h"

namespace mha {
namespace tools {

/// The pipeline's options as top-level command-line options (`--key-tile=64`
/// or `--key-tile 64`), in the tool's option category. Unlike the pipeline's
/// own defaults, which suit `mha-opt` (a module that nothing prepares), a
/// tool compiles for a runtime that calls the prepare functions: the weights
/// are packed (`fuse-projections`), once (`prepare-weights`), and the
/// projections read and write heads in place (`fold-head-layouts`).
class ToolPipelineOptions : public mlir::mha::MhaPipelineOptions {
public:
  /// Registers every option of MhaPipelineOptions on the command line, in
  /// `category`. Create it once, before the command line is parsed, and keep
  /// it for as long as the tool runs (see registerPipelineOptions).
  explicit ToolPipelineOptions(llvm::cl::OptionCategory &category);
};

/// Returns the tool's one ToolPipelineOptions, registered in `category` on the
/// first call; it lives until the process ends, as the command-line parser
/// keeps pointers to its options.
ToolPipelineOptions &
registerPipelineOptions(llvm::cl::OptionCategory &category);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_SUPPORT_PIPELINEOPTIONS_H
