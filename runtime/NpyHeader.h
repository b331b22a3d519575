//===- NpyHeader.h - The header dict of a .npy file -------------*- C++ -*-===//
//
// Private to runtime/Npy.cpp and runtime/NpyHeader.cpp: the dict literal a
// .npy header holds, its parser, and the message helpers both use.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_NPYHEADER_H
#define MHA_RUNTIME_NPYHEADER_H

#include "runtime/Npy.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mha::runtime::npy {

/// The magic string every .npy file starts with.
inline constexpr llvm::StringLiteral kMagic("\x93NUMPY");

/// Builds the error for a problem with the file (or array) called `name`.
llvm::Error makeError(llvm::StringRef name, const llvm::Twine &message);

/// Quotes at most the first `limit` bytes of `bytes` with C escapes, so that
/// binary garbage in a hostile file stays readable and short in a message.
std::string quoteBytes(llvm::StringRef bytes, size_t limit = 16);

/// What the header dict says.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict `text` of the file called `name` into `header`.
llvm::Error parseHeader(llvm::StringRef text, llvm::StringRef name,
                        NpyHeader &header);

/// Maps a numpy dtype string to the element type it denotes, if supported.
std::optional<ElementType> parseDescr(llvm::StringRef descr);

} // namespace mha::runtime::npy

#endif // MHA_RUNTIME_NPYHEADER_H
