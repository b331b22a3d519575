//===- PagedCache.h - The block table of a paged cache graph ----*- C++ -*-===//
//
// Private to mha-run's decoder (tools/mha-run/Decode.cpp): the pools and the
// block table it allocates for a graph that mha-gen wrote with --paged-kv,
// and the checks that keep every page a call touches inside the pool.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_PAGEDCACHE_H
#define MHA_TOOLS_MHARUN_PAGEDCACHE_H

#include "tools/mha-run/CacheGraph.h"
#include "tools/mha-run/InputBinding.h"

#include <string>
#include <vector>

namespace mha {
namespace tools {

/// The shape of the key (`key`) or value cache the decoder allocates for
/// `batch` sequences: [B, Hkv, C, d], or a paged cache's pool [N, Hkv, P, d]
/// (N as declared, else B * M).
std::vector<int64_t> getCacheShape(const CacheGraph &graph, int64_t batch,
                                   bool key);

/// The block table the user gives, `--input block_table=FILE.npy` (taken
/// out of `options`, whose other inputs the decoder binds) or
/// DIR/block_table.npy of `--inputs DIR`; "" when there is none, and the
/// decoder makes its own.
std::string takeBlockTablePath(const CacheGraph &graph,
                               runtime::InputOptions &options);

/// The decoder's block table [B, M] (int32): read from `path`, or, without
/// one, the pool's pages shuffled (seeded by `seed`) and dealt out M to
/// each sequence, so that a page read through the wrong entry shows.
llvm::Expected<runtime::NpyArray>
makeBlockTable(const CacheGraph &graph, int64_t batch, int64_t poolPages,
               const std::string &path, uint64_t seed);

/// Checks the entries of `table` that the calls use before any of them
/// runs: sequence b writes max(prefill, lengths[b] + steps) rows, which
/// need that many rows' pages from its row of the table; each must be a page
/// of the pool, [0, poolPages), and given to one sequence only.
llvm::Error checkBlockTable(const CacheGraph &graph,
                            const runtime::NpyArray &table, int64_t poolPages,
                            llvm::ArrayRef<int64_t> lengths, int64_t prefill,
                            int64_t steps);

/// For one call of a paged cache graph with the arrays `inputs` bound to
/// `signature`'s arguments (a run without --prefill): sequence b holds
/// cache_lengths[b] + T rows after the call, which must fit in its table
/// row (M * P), and the entries of their pages must be pages of the pools,
/// each given to one sequence only.
/// Success for any other graph, and where the sizes disagree (the verifiers
/// say so later).
llvm::Error checkCallBlockTable(const runtime::GraphSignature &signature,
                                llvm::ArrayRef<runtime::NpyArray> inputs);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_PAGEDCACHE_H
