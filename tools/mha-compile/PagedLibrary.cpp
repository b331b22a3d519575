//===- PagedLibrary.cpp - The C API of a paged cache graph ----------------===//

#include "tools/mha-compile/PagedLibrary.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace mha::compile {

std::optional<PagedLayout> findPagedCache(const LibraryInterface &interface) {
  const runtime::GraphSignature &signature = interface.signature;
  int x = signature.findArgument("x");
  int keys = signature.findArgument("k_pool");
  int values = signature.findArgument("v_pool");
  int table = signature.findArgument("block_table");
  int lengths = signature.findArgument("cache_lengths");
  if (x < 0 || keys < 0 || values < 0 || table < 0 || lengths < 0)
    return std::nullopt;
  RankedTensorType keyType = signature.arguments[keys].type;
  RankedTensorType tableType = signature.arguments[table].type;
  RankedTensorType lengthType = signature.arguments[lengths].type;
  if (signature.arguments[x].type.getRank() != 3 || keyType.getRank() != 4 ||
      signature.arguments[values].type.getRank() != 4 ||
      tableType.getRank() != 2 || !tableType.getElementType().isInteger(32) ||
      lengthType.getRank() != 1 || !lengthType.getElementType().isInteger(64) ||
      ShapedType::isDynamic(keyType.getDimSize(2)) ||
      ShapedType::isDynamic(tableType.getDimSize(1)))
    return std::nullopt;
  PagedLayout paged;
  paged.x = x;
  paged.keyPool = keys;
  paged.valuePool = values;
  paged.table = table;
  paged.lengths = lengths;
  paged.pageRows = keyType.getDimSize(2);
  paged.pagesPerSequence = tableType.getDimSize(1);
  return paged;
}

void writePagedHeader(llvm::raw_ostream &os, const LibraryInterface &interface,
                      const PagedLayout &paged) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "/*\n * A paged cache: the pools k_pool, v_pool [N, Hkv, " << upper
     << "_PAGE_ROWS, d] hold\n * pages of rows; row j of sequence b is row "
     << "j % " << upper << "_PAGE_ROWS of page\n * block_table[b, j / " << upper
     << "_PAGE_ROWS]. The caller owns the pools and the table;\n"
     << " * " << n << "_call and " << n
     << "_run check, before the graph runs, that each\n"
     << " * sequence's rows after the call (cache_lengths[b] + T) fit in its "
        "row\n * of the table and that the entries of their pages are pages "
        "of both\n * pools, none given to two sequences ("
     << upper << "_BAD_ARGUMENT otherwise).\n */\n"
     << "#define " << upper << "_PAGE_ROWS " << paged.pageRows << "\n"
     << "#define " << upper << "_PAGES_PER_SEQUENCE " << paged.pagesPerSequence
     << "\n"
     << "/* " << n << "_pages_reserve: a sequence's tokens would pass its "
     << upper << "_PAGES_PER_SEQUENCE\n   pages. */\n"
     << "#define " << upper << "_CACHE_FULL 3\n"
     << "/* " << n << "_pages_reserve: the free list has too few pages. */\n"
     << "#define " << upper << "_POOL_FULL 5\n\n"
     << "/*\n * The caller's block table and the free pages of its pools, "
        "for the\n * helpers below; the arrays are the caller's, the helpers "
        "allocate\n * nothing. An entry of -1 holds no page.\n */\n"
     << "typedef struct " << n << "_pages {\n"
     << "  int32_t *block_table; /* [batch, " << upper
     << "_PAGES_PER_SEQUENCE] */\n"
     << "  int64_t batch;\n"
     << "  int32_t *free_pages;  /* room for pool_pages; the first "
        "free_count are free */\n"
     << "  int64_t free_count;\n"
     << "  int64_t pool_pages;   /* N, the pages of each pool */\n"
     << "} " << n << "_pages;\n\n"
     << "/* Sets every entry of `block_table` [batch, " << upper
     << "_PAGES_PER_SEQUENCE] to -1\n   and every page of the pools free "
        "(`free_pages` has room for\n   `pool_pages`). Returns "
     << upper << "_OK or " << upper << "_BAD_ARGUMENT. */\n"
     << "int " << n << "_pages_init(" << n
     << "_pages *pages, int32_t *block_table, int64_t batch,\n"
     << "    int32_t *free_pages, int64_t pool_pages);\n\n"
     << "/* Gives sequence `sequence`, which holds `length` tokens, the pages "
        "its\n   next `tokens` need (the entries of -1 among its first\n"
        "   ceil((length + tokens) / "
     << upper << "_PAGE_ROWS)), from the free list. Returns\n   " << upper
     << "_OK; " << upper << "_CACHE_FULL past " << upper
     << "_PAGES_PER_SEQUENCE pages, " << upper
     << "_POOL_FULL\n   when too "
        "few pages are free, "
     << upper
     << "_BAD_ARGUMENT for a wrong entry or\n   argument: then nothing is "
        "taken. */\n"
     << "int " << n << "_pages_reserve(" << n
     << "_pages *pages, int64_t sequence, int64_t length,\n"
     << "    int64_t tokens);\n\n"
     << "/* Puts the pages of sequence `sequence` back on the free list and "
        "sets\n   its entries to -1 (a finished sequence: a new one may start "
        "there at\n   length 0). Returns "
     << upper << "_OK or " << upper << "_BAD_ARGUMENT. */\n"
     << "int " << n << "_pages_release(" << n
     << "_pages *pages, int64_t sequence);\n\n";
}

void writePagedChecks(llvm::raw_ostream &os, const LibraryInterface &interface,
                      Arguments which) {
  std::optional<PagedLayout> paged = findPagedCache(interface);
  if (!paged)
    return;
  for (unsigned index : {paged->x, paged->keyPool, paged->valuePool,
                         paged->table, paged->lengths})
    if (!takes(interface, which, index))
      return;
  const auto &arguments = interface.signature.arguments;
  auto id = [&](unsigned index) {
    return toCIdentifier(arguments[index].name);
  };
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  // The pools' page counts are sizes of their own: an entry must be a page
  // of every pool the call writes (the keys', the values', any scales').
  os << "  {\n    int64_t pool_pages = " << id(paged->keyPool)
     << "_shape[0];\n";
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (isWritten(interface, index) && takes(interface, which, index))
      os << "    if (" << id(index) << "_shape[0] < pool_pages)\n"
         << "      pool_pages = " << id(index) << "_shape[0];\n";
  os << "    int pages_status = " << n << "_check_pages(" << id(paged->table)
     << ", " << id(paged->table) << "_shape, pool_pages, " << id(paged->lengths)
     << ", " << id(paged->x) << "_shape[1]);\n"
     << "    if (pages_status != " << upper
     << "_OK)\n      return pages_status;\n  }\n";
}

} // namespace mha::compile
