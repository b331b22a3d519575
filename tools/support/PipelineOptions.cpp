//===- PipelineOptions.cpp - Pipeline options on a tool's command line ---===//

#include "tools/support/PipelineOptions.h"

#include "llvm/ADT/SmallVector.h"

using namespace mha::tools;
namespace cl = llvm::cl;

ToolPipelineOptions::ToolPipelineOptions(cl::OptionCategory &category) {
  fuseProjections.setInitialValue(true);
  prepareWeights.setInitialValue(true);
  foldHeadLayouts.setInitialValue(true);

  // A pass option is a cl::opt registered in its PassOptions' own
  // subcommand, which `parseFromString` parses. Registered in the top-level
  // subcommand too, it is also an option of the tool, parsed by
  // cl::ParseCommandLineOptions into the same storage, so nothing is declared
  // twice. OptionsMap changes while options are re-registered: collect first.
  llvm::SmallVector<cl::Option *> options;
  for (auto &entry : OptionsMap)
    options.push_back(entry.second);
  for (cl::Option *option : options) {
    option->removeArgument();
    option->addSubCommand(cl::SubCommand::getTopLevel());
    option->addCategory(category);
    option->addArgument();
  }
}

ToolPipelineOptions &
mha::tools::registerPipelineOptions(cl::OptionCategory &category) {
  // Never destroyed: the parser's option tables point into it.
  static ToolPipelineOptions *options = new ToolPipelineOptions(category);
  return *options;
}
