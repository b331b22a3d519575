//===- CaseFolders.h - The reference cases' folders -------------*- C++ -*-===//
//
// The folders of reference cases the unit tests walk (test/vectors and its
// model_variants): each case is a folder with a meta.json.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TEST_UNIT_CASEFOLDERS_H
#define MHA_TEST_UNIT_CASEFOLDERS_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <string>
#include <system_error>
#include <vector>

namespace mha {
namespace test {

/// The names of the folders in `dir` that hold a meta.json, sorted.
inline std::vector<std::string> listCaseFolders(llvm::StringRef dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::SmallString<256> meta(it->path());
    llvm::sys::path::append(meta, "meta.json");
    if (llvm::sys::fs::exists(meta))
      names.push_back(llvm::sys::path::filename(it->path()).str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace test
} // namespace mha

#endif // MHA_TEST_UNIT_CASEFOLDERS_H
