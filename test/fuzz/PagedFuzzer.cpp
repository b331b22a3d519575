//===- PagedFuzzer.cpp - libFuzzer target: a paged int8 cache library -----===//
//
// Calls `pgd_call` of a library that mha-compile built from a paged int8
// cache graph (d_model 4, 2 query heads on 1 key/value head, pages of 16
// rows, 3 per sequence: 48 rows; CMakeLists.txt) with a fuzzed batch, token
// count, pool sizes (the key and the value pools may differ), block table
// and lengths: entries that are pages, -1, just past either pool or far
// outside, pages given twice, lengths from negative to past 48 rows. The
// library must run exactly the calls whose every entry a sequence uses is a
// page of both pools, given once, and whose lengths leave room for the
// tokens, and refuse the rest with PGD_BAD_ARGUMENT having written nothing;
// a call that runs writes only its new rows. The pools end at a PROT_NONE
// page, so a write past them faults even in the uninstrumented compiled
// code.
//
//===----------------------------------------------------------------------===//

#include "FuzzBytes.h"
#include "GuardedBuffer.h"
#include "pgd.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <vector>

namespace {
constexpr int64_t kD = 4, kKeyDim = 2, kKvHeads = 1;
constexpr int64_t kRows = PGD_PAGE_ROWS, kPerSequence = PGD_PAGES_PER_SEQUENCE;

using Guarded = GuardedBuffer;

/// One pool of `pages` pages, `unit` bytes per row of a page, filled with
/// a pattern; `written` says whether byte i may differ from the copy.
struct Pool {
  Pool(int64_t pages, size_t unit, uint8_t seed)
      : unit(unit),
        memory(std::max<int64_t>(pages, 0) * kKvHeads * kRows * unit) {
    for (size_t i = 0; i < memory.bytes; ++i)
      memory.data[i] = static_cast<char>((i * (seed | 1)) % 61);
    before.assign(memory.data, memory.data + memory.bytes);
  }
  /// Whether every byte outside the rows in `rows` (page * kRows + row)
  /// kept its value.
  bool keptOutside(const std::set<int64_t> &rows) const {
    for (size_t i = 0; i < memory.bytes; ++i)
      if (memory.data[i] != before[i] && !rows.count(i / unit))
        return false;
    return true;
  }
  size_t unit;
  Guarded memory;
  std::vector<char> before;
};

/// A table entry: mostly a page of the pools, else -1, just past the smaller
/// or the larger pool, or far outside.
int32_t entry(uint8_t byte, int64_t low, int64_t high) {
  switch (byte % 8) {
  case 5:
    return -1;
  case 6:
    return static_cast<int32_t>(byte / 8 % 2 ? high : low);
  case 7:
    return byte / 8 % 2 ? std::numeric_limits<int32_t>::min()
                        : std::numeric_limits<int32_t>::max();
  default:
    return low > 0 ? static_cast<int32_t>(byte / 8 % low) : 0;
  }
}

/// A length: mostly 0 .. 48 - tokens (the room: ending at the last row of
/// the table row), else negative, just past the room, or far past it.
int64_t length(uint8_t byte, int64_t tokens) {
  int64_t room = kPerSequence * kRows - tokens;
  switch (byte % 8) {
  case 4:
    return room; // ends exactly at the table row's last row
  case 5:
    return -1 - byte / 8 % 3;
  case 6:
    return room + 1 + byte / 8 % 3;
  case 7:
    return byte / 8 % 2 ? std::numeric_limits<int64_t>::max()
                        : std::numeric_limits<int64_t>::min();
  default:
    return byte / 8 % (room + 1);
  }
}

pgd_handle *handle() {
  static pgd_handle *shared = [] {
    static float wq[kD * kD], wk[kD * kKeyDim], wo[kD * kD], b[kD];
    for (int64_t i = 0; i < kD * kD; ++i)
      wq[i] = wo[i] = static_cast<float>((i * 7) % 11 - 5) / 16;
    for (int64_t i = 0; i < kD * kKeyDim; ++i)
      wk[i] = static_cast<float>((i * 5) % 9 - 4) / 8;
    for (int64_t i = 0; i < kD; ++i)
      b[i] = static_cast<float>(i % 3) / 10;
    int64_t square[2] = {kD, kD}, narrow[2] = {kD, kKeyDim}, full[1] = {kD},
            half[1] = {kKeyDim};
    return pgd_create(wq, square, wk, narrow, wk, narrow, wo, square, b, full,
                      b, half, b, half, b, full);
  }();
  if (!shared)
    abort();
  return shared;
}

} // namespace

// A broken expectation names its line and the library's last message.
#define REQUIRE(ok)                                                            \
  do {                                                                         \
    if (!(ok)) {                                                               \
      fprintf(stderr, "PagedFuzzer.cpp:%d: %s failed; last error: %s\n",       \
              __LINE__, #ok, pgd_last_error());                                \
      abort();                                                                 \
    }                                                                          \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in{data, size};
  int64_t batch = 1 + in.next() % 3, tokens = 1 + in.next() % 4;
  // The pools' pages: 0 .. 7, the value pools another count one time in 4.
  uint8_t pages = in.next();
  int64_t keyPages = pages % 8;
  int64_t valuePages = pages / 8 % 4 ? keyPages : pages / 32 % 8;
  int64_t low = std::min(keyPages, valuePages);
  int64_t high = std::max(keyPages, valuePages);
  std::vector<int32_t> table(batch * kPerSequence);
  for (int32_t &e : table)
    e = entry(in.next(), low, high);
  std::vector<int64_t> lengths(batch);
  for (int64_t &l : lengths)
    l = length(in.next(), tokens);

  // The call runs when the pools have pages, each sequence has room and
  // every entry it uses is a page of both pools, given once.
  bool runs = low >= 1;
  std::set<int64_t> used, written;
  for (int64_t b = 0; b < batch && runs; ++b) {
    int64_t l = lengths[b];
    runs = l >= 0 && l <= kPerSequence * kRows - tokens;
    for (int64_t e = 0; runs && e < (l + tokens + kRows - 1) / kRows; ++e) {
      int64_t page = table[b * kPerSequence + e];
      runs = page >= 0 && page < low && used.insert(page).second;
    }
    for (int64_t t = 0; runs && t < tokens; ++t) {
      int64_t row = l + t;
      written.insert(table[b * kPerSequence + row / kRows] * kRows +
                     row % kRows);
    }
  }

  uint8_t seed = in.next();
  Pool kCodes(keyPages, kKeyDim, seed), kScales(keyPages, sizeof(float), seed),
      vCodes(valuePages, kKeyDim, seed),
      vScales(valuePages, sizeof(float), seed);
  Guarded x(batch * tokens * kD * sizeof(float)),
      y(batch * tokens * kD * sizeof(float));
  float *xs = reinterpret_cast<float *>(x.data);
  for (int64_t i = 0; i < batch * tokens * kD; ++i)
    xs[i] = static_cast<float>((i * 5 + seed) % 13 - 6) / 8;
  int64_t xShape[3] = {batch, tokens, kD};
  int64_t kShape[4] = {keyPages, kKvHeads, kRows, kKeyDim};
  int64_t kScalesShape[3] = {keyPages, kKvHeads, kRows};
  int64_t vShape[4] = {valuePages, kKvHeads, kRows, kKeyDim};
  int64_t vScalesShape[3] = {valuePages, kKvHeads, kRows};
  int64_t tableShape[2] = {batch, kPerSequence}, lengthsShape[1] = {batch};
  int64_t resultShape[3];
  int status = pgd_call(
      handle(), xs, xShape, reinterpret_cast<int8_t *>(kCodes.memory.data),
      kShape, reinterpret_cast<float *>(kScales.memory.data), kScalesShape,
      reinterpret_cast<int8_t *>(vCodes.memory.data), vShape,
      reinterpret_cast<float *>(vScales.memory.data), vScalesShape,
      table.data(), tableShape, lengths.data(), lengthsShape,
      reinterpret_cast<float *>(y.data), batch * tokens * kD, resultShape);
  REQUIRE(status == (runs ? PGD_OK : PGD_BAD_ARGUMENT));
  // A refused call writes nothing; one that runs only its new rows.
  if (!runs)
    written.clear();
  REQUIRE(kCodes.keptOutside(written) && kScales.keptOutside(written) &&
          vCodes.keptOutside(written) && vScales.keptOutside(written));
  if (runs) {
    const float *ys = reinterpret_cast<const float *>(y.data);
    for (int64_t i = 0; i < batch * tokens * kD; ++i)
      REQUIRE(std::isfinite(ys[i]));
  }
  return 0;
}
