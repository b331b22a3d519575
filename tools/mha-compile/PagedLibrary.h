//===- PagedLibrary.h - The C API of a paged cache graph --------*- C++ -*-===//
//
// A paged cache graph (mha-gen --paged-kv) takes pools k_pool, v_pool
// [N, Hkv, P, d] and a block table [B, M] (int32) that the caller owns, as a
// server's cache manager does. Its library checks every call's table and
// lengths (library/mha_pages.c: an error status, never an access outside
// the pools), and gives the caller helpers for the table: NAME_pages_init,
// NAME_pages_reserve (the pages for n more tokens of a sequence, from a
// free list) and NAME_pages_release (a finished sequence's pages back).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_PAGEDLIBRARY_H
#define MHA_TOOLS_MHACOMPILE_PAGEDLIBRARY_H

#include "tools/mha-compile/CInterface.h"
#include "tools/mha-compile/CInterfaceSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mha::compile {

/// The arguments of a paged cache graph, by name, and its static sizes.
struct PagedLayout {
  unsigned x = 0, keyPool = 0, valuePool = 0, table = 0, lengths = 0;
  /// P, the rows of a page; M, the pages of a sequence's table row.
  int64_t pageRows = 0, pagesPerSequence = 0;
};

/// The paged cache of `interface`'s graph (x, k_pool, v_pool, block_table
/// and cache_lengths, P and M static), if it has one.
std::optional<PagedLayout> findPagedCache(const LibraryInterface &interface);

/// The header's part for a paged graph: its status codes, P and M, the
/// NAME_pages type and the helpers' declarations.
void writePagedHeader(llvm::raw_ostream &os, const LibraryInterface &interface,
                      const PagedLayout &paged);

/// Writes the check of a call's block table and lengths (NAME_check_pages)
/// into a check function, where `which` has the arguments it needs.
void writePagedChecks(llvm::raw_ostream &os, const LibraryInterface &interface,
                      Arguments which);

} // namespace mha::compile

#endif // MHA_TOOLS_MHACOMPILE_PAGEDLIBRARY_H
