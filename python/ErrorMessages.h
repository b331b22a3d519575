//===- ErrorMessages.h - The text of the module's exceptions ----*- C++ -*-===//
//
// Private to the Python module: what its exceptions say, from llvm::Error
// and from the diagnostics MLIR printed.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_ERRORMESSAGES_H
#define MHA_PYTHON_ERRORMESSAGES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mha::python {

/// The message of `error`, consumed.
inline std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// `what`, then the diagnostics printed since `from` (file, line, column),
/// which say what `what` only summarizes.
inline std::string withDiagnostics(const std::string &what,
                                   const std::string &log, size_t from) {
  llvm::StringRef printed = llvm::StringRef(log).substr(from).trim();
  if (printed.empty())
    return what;
  return what + "\n" + printed.str();
}

} // namespace mha::python

#endif // MHA_PYTHON_ERRORMESSAGES_H
