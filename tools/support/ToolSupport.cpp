//===- ToolSupport.cpp - What every mha tool does the same way ------------===//

#include "tools/support/ToolSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

bool mha::tools::parseCommandLine(int argc, const char *const *argv,
                                  llvm::StringRef overview) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  if (llvm::cl::ParseCommandLineOptions(argc, argv, overview, &os))
    return true;

  // LLVM writes "<tool>: <message>" lines (and a few without the prefix);
  // the first is the error, the rest ("Did you mean ...") are notes. A bad
  // option value is the exception: the option reports it to stderr itself
  // ("<tool>: for the --x option: 'y' value invalid ..."), so only a closing
  // error line is left to print.
  std::string tool = llvm::sys::path::filename(argv[0]).str();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).trim().split(lines, '\n', -1, false);
  for (auto [index, line] : llvm::enumerate(lines)) {
    line.consume_front(tool + ": ");
    (index == 0 ? llvm::WithColor::error(llvm::errs(), tool)
                : llvm::WithColor::note(llvm::errs(), tool))
        << line.trim() << "\n";
  }
  if (lines.empty())
    llvm::WithColor::error(llvm::errs(), tool)
        << "bad option value (see the line above)\n";
  return false;
}

void mha::tools::hideLLVMOptions(
    llvm::ArrayRef<llvm::cl::OptionCategory *> shown) {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    // Already hidden (or really hidden, which Hidden would undo): as it is.
    if (option->getOptionHiddenFlag() != llvm::cl::NotHidden)
      continue;
    if (llvm::is_contained({"help", "help-list", "version"}, entry.first))
      continue;
    if (llvm::any_of(option->Categories, [&](llvm::cl::OptionCategory *c) {
          return llvm::is_contained(shown, c);
        }))
      continue;
    option->setHiddenFlag(llvm::cl::Hidden);
  }
}

bool mha::tools::finishOutput(llvm::raw_fd_ostream &os, llvm::StringRef tool,
                              llvm::StringRef name) {
  os.flush();
  if (!os.has_error())
    return true;
  std::error_code error = os.error();
  os.clear_error();
  auto &message = llvm::WithColor::error(llvm::errs(), tool);
  if (name == "-")
    message << "cannot write to stdout: ";
  else
    message << "cannot write '" << name << "': ";
  message << error.message() << "\n";
  return false;
}

int mha::tools::finishStdout(llvm::StringRef tool, int code) {
  if (finishOutput(llvm::outs(), tool, "-"))
    return code;
  return code == kOk || code == kMismatch ? kBadInput : code;
}

llvm::Error mha::tools::checkNoOverwrite(llvm::ArrayRef<ToolFile> reads,
                                         llvm::ArrayRef<ToolFile> writes) {
  for (const ToolFile &write : writes) {
    for (const ToolFile &read : reads) {
      bool same = false;
      // An error means one of them does not exist (or cannot be looked
      // at): then the write cannot change what the read sees.
      if (llvm::sys::fs::equivalent(read.path, write.path, same) || !same)
        continue;
      return llvm::createStringError(
          write.role + " '" + write.path + "' is the same file as '" +
          read.path + "', read as " + read.role +
          "; writing it would overwrite what is read");
    }
  }
  return llvm::Error::success();
}
