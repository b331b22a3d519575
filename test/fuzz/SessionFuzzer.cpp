//===- SessionFuzzer.cpp - libFuzzer target: a library's session API ------===//
//
// Drives the session API of a library that mha-compile built from a cache
// graph (d_model 4, 2 heads, capacity 4; CMakeLists.txt). The fuzz bytes
// choose the batch and where the borrowed key and value caches live: the
// session's own, two separate regions, one array for both, or one region
// with v_cache a fuzzed number of floats from k_cache (before it, inside it,
// one float into it, back to back or apart). Then a few steps (tokens, and
// y exact, one float short, over x, or x or y inside a cache), lengths and
// resets. The library must refuse exactly the caches that share a byte, and
// every step or length it should refuse, without writing anything; the
// floats around the caches must keep their value, and the regions end at a
// PROT_NONE page, so a write past them faults even in the uninstrumented
// compiled code.
//
//===----------------------------------------------------------------------===//

#include "FuzzBytes.h"
#include "GuardedBuffer.h"
#include "sess.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {
constexpr int64_t kD = SESS_MODEL_DIM;
constexpr int64_t kCapacity = SESS_CACHE_CAPACITY;
constexpr int64_t kFront = 4; // sentinel floats before the lowest cache
constexpr float kSentinel = -7.0f;

/// `floats` floats that end right before a PROT_NONE page.
struct Guarded : GuardedBuffer {
  explicit Guarded(int64_t floats)
      : GuardedBuffer(floats * sizeof(float)), floats(floats),
        data(reinterpret_cast<float *>(GuardedBuffer::data)) {}
  int64_t floats;
  float *data;
};

/// The borrowed caches: the regions that hold them, every float sentinel but
/// the caches'. `check` says whether the sentinels hold; `snapshot` and
/// `unchanged` whether a refused call wrote anything at all.
struct Caches {
  std::vector<std::unique_ptr<Guarded>> regions;
  float *k = nullptr, *v = nullptr;
  int64_t keys = 0, values = 0;
  std::vector<std::vector<float>> saved;

  float *region(int64_t floats) {
    regions.push_back(std::make_unique<Guarded>(floats));
    std::fill_n(regions.back()->data, floats, kSentinel);
    return regions.back()->data;
  }
  void fill(uint8_t seed) {
    // The values a borrowed cache holds before the first step (lengths may
    // be set past the rows written): small and finite.
    for (int64_t i = 0; i < keys; ++i)
      k[i] = static_cast<float>((i * (seed | 1)) % 17 - 8) / 8;
    for (int64_t i = 0; i < values; ++i)
      v[i] = static_cast<float>((i * (seed | 3)) % 13 - 6) / 8;
  }
  bool check() const {
    for (const auto &r : regions)
      for (float *p = r->data; p != r->data + r->floats; ++p)
        if (!(p >= k && p < k + keys) && !(p >= v && p < v + values) &&
            memcmp(p, &kSentinel, sizeof(float)))
          return false;
    return true;
  }
  void snapshot() {
    saved.clear();
    for (const auto &r : regions)
      saved.emplace_back(r->data, r->data + r->floats);
  }
  bool unchanged() const {
    for (size_t i = 0; i < regions.size(); ++i)
      if (memcmp(saved[i].data(), regions[i]->data,
                 saved[i].size() * sizeof(float)))
        return false;
    return true;
  }
};

} // namespace

// A broken expectation names its line and the library's last message, so
// that a crash input says what went wrong before it is minimized.
#define REQUIRE(ok)                                                            \
  do {                                                                         \
    if (!(ok)) {                                                               \
      fprintf(stderr, "SessionFuzzer.cpp:%d: %s failed; last error: %s\n",     \
              __LINE__, #ok, sess_last_error());                               \
      abort();                                                                 \
    }                                                                          \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in{data, size};
  int64_t batch = 1 + in.next() % 3;
  Caches caches;
  caches.keys = batch * SESS_KV_HEADS * kCapacity * SESS_KEY_DIM;
  caches.values = batch * SESS_KV_HEADS * kCapacity * SESS_VALUE_DIM;
  // Where the caches live: 0 the session's own, 1 apart, 2 one array for
  // both, 3 one region, v_cache `shift` floats from k_cache's start (near
  // its start, its end or v_cache's length before it, to reach the edges).
  uint8_t layout = in.next() % 4;
  uint8_t anchor = in.next() % 3;
  int64_t shift = (anchor == 0   ? 0
                   : anchor == 1 ? caches.keys
                                 : -caches.values) +
                  static_cast<int8_t>(in.next());
  bool overlap = false;
  if (layout == 1) {
    caches.k = caches.region(kFront + caches.keys) + kFront;
    caches.v = caches.region(kFront + caches.values) + kFront;
  } else if (layout == 2) {
    int64_t both = std::max(caches.keys, caches.values);
    caches.k = caches.v = caches.region(kFront + both) + kFront;
    overlap = true;
  } else if (layout == 3) {
    int64_t low = std::min<int64_t>(0, shift);
    int64_t high = std::max(caches.keys, shift + caches.values);
    caches.k = caches.region(kFront + high - low) + kFront - low;
    caches.v = caches.k + shift;
    overlap = shift < caches.keys && -shift < caches.values;
  }
  bool borrowed = layout != 0;
  if (borrowed)
    caches.fill(in.next());

  float w[kD * kD], b[kD];
  for (int64_t i = 0; i < kD * kD; ++i)
    w[i] = static_cast<float>((i * 7) % 11 - 5) / 16;
  for (int64_t i = 0; i < kD; ++i)
    b[i] = static_cast<float>(i % 3) / 10;
  int64_t wShape[2] = {kD, kD}, bShape[1] = {kD};
  caches.snapshot();
  sess_session *session = sess_session_create(
      batch, caches.k, caches.v, w, wShape, w, wShape, w, wShape, w, wShape, b,
      bShape, b, bShape, b, bShape, b, bShape);
  // Exactly the caches that share a byte are refused, untouched.
  if (overlap) {
    REQUIRE(!session && caches.unchanged());
    return 0;
  }
  REQUIRE(session && caches.check());

  // The lengths and the rows each cache holds, as the session must keep
  // them: all of a borrowed cache, the rows the steps wrote of its own.
  std::vector<int64_t> lengths(batch, 0),
      written(batch, borrowed ? kCapacity : 0), read(batch);
  for (int op = 0; op < 8 && in.size; ++op) {
    caches.snapshot();
    uint8_t kind = in.next() % 3;
    int expected = SESS_OK, status;
    if (kind == 0) {
      // A step: 0 .. capacity + 1 tokens; y exact, one float short, over x,
      // or (borrowed caches) y or x inside a cache.
      int64_t tokens = in.next() % (kCapacity + 2);
      uint8_t place = in.next() % 5;
      int64_t at = in.next();
      int64_t count = std::max<int64_t>(1, batch * tokens * kD);
      if (!borrowed && place >= 3)
        place = 2;
      Guarded x(place == 2 ? count + at % count : count),
          own(place == 1 ? count - 1 : count);
      for (int64_t i = 0; i < count; ++i)
        x.data[i] = static_cast<float>((i * 5 + at) % 13 - 6) / 8;
      const float *xp = x.data;
      float *y = own.data;
      if (place == 2)
        y = x.data + at % count;
      else if (place == 3)
        y = (at % 2 ? caches.k : caches.v) + at % 8;
      else if (place == 4)
        xp = (at % 2 ? caches.k : caches.v) + at % 8;
      bool full = false;
      for (int64_t s = 0; s < batch; ++s)
        full = full || lengths[s] + tokens > kCapacity;
      expected = tokens < 1   ? SESS_BAD_ARGUMENT
                 : full       ? SESS_CACHE_FULL
                 : place >= 2 ? SESS_BAD_ARGUMENT
                 : place == 1 ? SESS_RESULT_TOO_SMALL
                              : SESS_OK;
      status = sess_session_step(session, xp, tokens, y,
                                 place == 1 ? count - 1 : count);
      if (status == SESS_OK && expected == SESS_OK) {
        for (int64_t i = 0; i < batch * tokens * SESS_OUT_DIM; ++i)
          REQUIRE(std::isfinite(y[i]));
        for (int64_t s = 0; s < batch; ++s) {
          lengths[s] += tokens;
          written[s] = std::max(written[s], lengths[s]);
        }
      }
    } else if (kind == 1) {
      // Lengths -1 .. capacity + 1: each within the rows its cache holds.
      std::vector<int64_t> wanted(batch);
      for (int64_t s = 0; s < batch; ++s) {
        wanted[s] = in.next() % (kCapacity + 3) - 1;
        if (wanted[s] < 0 || wanted[s] > written[s])
          expected = SESS_BAD_ARGUMENT;
      }
      status = sess_session_set_lengths(session, wanted.data());
      if (status == SESS_OK && expected == SESS_OK)
        lengths = wanted;
    } else {
      sess_session_reset(session);
      status = SESS_OK;
      std::fill(lengths.begin(), lengths.end(), 0);
      if (!borrowed)
        std::fill(written.begin(), written.end(), 0);
    }
    REQUIRE(status == expected);
    // A refused call writes nothing (y's room is checked before the graph
    // appends to the caches); no call writes outside the caches.
    REQUIRE(status == SESS_OK ? caches.check() : caches.unchanged());
    REQUIRE(sess_session_lengths(session, read.data()) == SESS_OK &&
            read == lengths);
  }
  sess_session_free(session);
  return 0;
}
