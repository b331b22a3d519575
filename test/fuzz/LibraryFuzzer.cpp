//===- LibraryFuzzer.cpp - libFuzzer target: a compiled library's sizes ---===//
//
// Calls `layer_run` of a library that mha-compile built from a `?`-sized
// cross-attention graph with a mask (d_model 4, 2 heads; CMakeLists.txt)
// with fuzzed shapes and mask bytes, and with the result or its shape put in
// one region with an input: overlapping it, back to back or apart (the bytes
// after the data say which). Every buffer is exactly as large as its claimed
// shape and ends at a PROT_NONE page, so an out-of-bounds read faults even
// in the uninstrumented compiled code. The library must run exactly the
// calls whose sizes fit, whose mask bytes are 0 or 1 and whose outputs share
// no byte with an input, and refuse the rest.
//
//===----------------------------------------------------------------------===//

#include "FuzzBytes.h"
#include "GuardedBuffer.h"
#include "layer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {
constexpr int kArgs = 11; // x kv mask w_q w_k w_v w_o b_q b_k b_v b_o
constexpr int64_t kD = 4;

using Guarded = GuardedBuffer;

/// A copy of an input and an output in one guarded region, the output
/// `offset` bytes from the input's start (a multiple of its alignment; the
/// region starts 8-aligned): whether they overlap is what the library must
/// find, the checks and a call that writes past either fault alike.
struct Shared {
  Shared(const char *input, int64_t inputBytes, int64_t outputBytes,
         int64_t offset)
      : low(std::min<int64_t>(0, offset)),
        region((std::max(inputBytes, offset + outputBytes) - low + 7) / 8 * 8),
        in(region.data - low), out(in + offset),
        overlap(inputBytes > 0 && outputBytes > 0 && offset < inputBytes &&
                -offset < outputBytes) {
    memcpy(in, input, inputBytes);
  }
  int64_t low;
  Guarded region;
  char *in, *out;
  bool overlap;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in{data, size};
  // Sizes: the batch and sequence lengths 0..4; each static size 4 or, one
  // time in eight, 2..5; ranks stay as declared.
  int rank[kArgs] = {3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1};
  int64_t shape[kArgs][3];
  for (int arg = 0; arg < kArgs; ++arg)
    for (int dim = 0; dim < rank[arg]; ++dim) {
      uint8_t byte = in.next();
      bool isStatic = (arg < 2 && dim == 2) || arg >= 3;
      shape[arg][dim] =
          isStatic ? (byte % 8 ? kD : 2 + byte / 8 % 4) : byte % 5;
    }
  const int64_t *x = shape[0], *kv = shape[1], *mask = shape[2];
  bool fits = true;
  int64_t count[kArgs];
  for (int arg = 0; arg < kArgs; ++arg) {
    count[arg] = 1;
    for (int dim = 0; dim < rank[arg]; ++dim) {
      fits = fits && shape[arg][dim] >= 1;
      count[arg] *= shape[arg][dim];
    }
    for (int dim = 0; dim < rank[arg]; ++dim)
      if (arg >= 3 || (arg < 2 && dim == 2))
        fits = fits && shape[arg][dim] == kD;
  }
  fits = fits && kv[0] == x[0] && (mask[0] == 1 || mask[0] == x[0]) &&
         mask[1] == x[1] && mask[2] == kv[1];

  std::vector<Guarded *> buffers;
  const void *pointers[kArgs];
  bool maskBytesOk = true;
  for (int arg = 0; arg < kArgs; ++arg) {
    size_t element = arg == 2 ? 1 : sizeof(float);
    auto *buffer = new Guarded(count[arg] * element);
    buffers.push_back(buffer);
    for (int64_t i = 0; i < count[arg]; ++i) {
      uint8_t byte = in.next();
      if (arg == 2) {
        // Mostly 0 or 1; any byte when the input says so.
        uint8_t value = byte < 250 ? byte % 2 : byte;
        maskBytesOk = maskBytesOk && value <= 1;
        buffer->data[i] = static_cast<char>(value);
      } else {
        reinterpret_cast<float *>(buffer->data)[i] = (byte - 128) / 64.0f;
      }
    }
    pointers[arg] = buffer->data;
  }
  int64_t resultCount = fits ? x[0] * x[1] * kD : 1;
  Guarded ownResult(resultCount * sizeof(float));
  int64_t ownShape[3];
  float *result = reinterpret_cast<float *>(ownResult.data);
  int64_t *resultShape = ownShape;
  // Where the outputs go: their own buffers (also once the bytes run out),
  // or the result or its shape `shift` elements from an input's start.
  uint8_t where = in.next() % 3;
  int target = in.next() % kArgs;
  int64_t shift = static_cast<int8_t>(in.next());
  std::unique_ptr<Shared> shared;
  if (where) {
    int64_t unit = where == 1 ? sizeof(float) : sizeof(int64_t);
    shared = std::make_unique<Shared>(
        buffers[target]->data,
        count[target] * (target == 2 ? 1 : sizeof(float)),
        where == 1 ? resultCount * sizeof(float) : sizeof ownShape,
        shift * unit);
    pointers[target] = shared->in;
    if (where == 1)
      result = reinterpret_cast<float *>(shared->out);
    else
      resultShape = reinterpret_cast<int64_t *>(shared->out);
  }
  bool overlap = shared && shared->overlap;
  const float *const *f = reinterpret_cast<const float *const *>(pointers);
  int status = layer_run(
      f[0], shape[0], f[1], shape[1], static_cast<const uint8_t *>(pointers[2]),
      shape[2], f[3], shape[3], f[4], shape[4], f[5], shape[5], f[6], shape[6],
      f[7], shape[7], f[8], shape[8], f[9], shape[9], f[10], shape[10], result,
      resultCount, resultShape);
  for (Guarded *buffer : buffers)
    delete buffer;
  // Exactly the calls that fit run; the others are refused.
  int expected =
      fits && maskBytesOk && !overlap ? LAYER_OK : LAYER_BAD_ARGUMENT;
  if (status != expected)
    abort();
  return 0;
}
