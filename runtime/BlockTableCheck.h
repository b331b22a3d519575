//===- BlockTableCheck.h - A paged cache call's block table -----*- C++ -*-===//
//
// A paged cache graph (mha-gen --paged-kv) writes and reads its pools
// through a block table that the caller owns; the compiled code trusts its
// entries. The Python module checks a call's table and lengths here before
// the call runs, so that a wrong entry is an error, not a write outside the
// pools or into another sequence's rows.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_BLOCKTABLECHECK_H
#define MHA_RUNTIME_BLOCKTABLECHECK_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace mha {
namespace runtime {

/// One call of a paged cache graph: `table` [batch, perSequence] (int32,
/// C order), pools of `poolPages` pages of `pageSize` rows, `lengths`
/// [batch] (the rows each sequence holds before the call) and `newRows`
/// tokens per sequence. (mha-run checks a whole decoding run as one call:
/// the rows each sequence reaches as `lengths`, no new rows, and `when`
/// says so in the messages.)
struct PagedCall {
  const int32_t *table = nullptr;
  int64_t batch = 0, perSequence = 0, poolPages = 0, pageSize = 0;
  const int64_t *lengths = nullptr;
  int64_t newRows = 0;
  const char *when = "after the call";
};

/// Checks that every sequence's rows after the call (lengths[b] + newRows)
/// fit in its table row (perSequence * pageSize), and that the entries of
/// the pages holding them are pages of the pools, [0, poolPages), each
/// given to one sequence only. Entries past those pages are not read.
llvm::Error checkPagedCall(const PagedCall &call);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_BLOCKTABLECHECK_H
