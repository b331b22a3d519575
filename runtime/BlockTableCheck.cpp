//===- BlockTableCheck.cpp - A paged cache call's block table -------------===//

#include "runtime/BlockTableCheck.h"

#include "llvm/Support/FormatVariadic.h"

#include <vector>

namespace mha::runtime {

static llvm::Error createError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error checkPagedCall(const PagedCall &call) {
  int64_t rowsPerSequence = call.perSequence * call.pageSize;
  for (int64_t b = 0; b < call.batch; ++b) {
    int64_t length = call.lengths[b];
    if (length < 0 || length > rowsPerSequence - call.newRows)
      return createError(llvm::formatv(
          "cache_lengths[{0}] is {1}: sequence {0} would hold {1} + {2} rows, "
          "outside the {3} * {4} rows of its block_table row",
          b, length, call.newRows, call.perSequence, call.pageSize));
  }
  std::vector<int64_t> owner(call.poolPages, -1);
  for (int64_t b = 0; b < call.batch; ++b) {
    int64_t rows = call.lengths[b] + call.newRows;
    int64_t used = (rows + call.pageSize - 1) / call.pageSize;
    for (int64_t entry = 0; entry < used; ++entry) {
      int64_t page = call.table[b * call.perSequence + entry];
      if (page < 0 || page >= call.poolPages)
        return createError(llvm::formatv(
            "block_table[{0}, {1}] is {2}, not a page of the pools (0 to {3}); "
            "sequence {0} holds {4} rows {5}, in its first {6} pages",
            b, entry, page, call.poolPages - 1, rows, call.when, used));
      if (owner[page] == b)
        return createError(llvm::formatv(
            "block_table gives page {0} twice to sequence {1}: its rows "
            "there would overwrite each other",
            page, b));
      if (owner[page] >= 0)
        return createError(llvm::formatv(
            "block_table gives page {0} to sequence {1} and to sequence {2}: "
            "each would write the other's rows",
            page, owner[page], b));
      owner[page] = b;
    }
  }
  return llvm::Error::success();
}

} // namespace mha::runtime
