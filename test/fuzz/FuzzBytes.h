//===- FuzzBytes.h - The fuzzers' bytes, read one at a time ----*- C++ -*-===//

#ifndef MHA_TEST_FUZZ_FUZZBYTES_H
#define MHA_TEST_FUZZ_FUZZBYTES_H

#include <cstddef>
#include <cstdint>

/// Reads the fuzzer's bytes one at a time, 0 once they run out.
struct Reader {
  const uint8_t *data;
  size_t size;
  uint8_t next() {
    if (!size)
      return 0;
    --size;
    return *data++;
  }
};

#endif // MHA_TEST_FUZZ_FUZZBYTES_H
