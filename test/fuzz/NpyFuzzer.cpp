//===- NpyFuzzer.cpp - libFuzzer target: the .npy reader ------------------===//
//
// Any bytes go to parseNpy, which must return an array or an error: never
// crash, read outside the bytes, or allocate past the memory limit (ASan and
// UBSan watch). An array it accepts must also be what its header says, and
// come back unchanged from a round trip through serializeNpy.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mha::runtime;

/// A broken property is a crash for libFuzzer to report and minimize.
static void require(bool property, const char *what) {
  if (property)
    return;
  llvm::errs() << "mha-fuzz-npy: property violated: " << what << "\n";
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<NpyArray> array = parseNpy(bytes, "fuzz.npy");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  require(getByteCount(array->shape, array->elementType) ==
              static_cast<int64_t>(array->data.size()),
          "the data matches the shape");
  if (array->elementType == ElementType::Bool)
    for (char byte : array->data)
      require(byte == 0 || byte == 1, "bools are 0 or 1");

  llvm::Expected<std::string> written = serializeNpy(*array);
  require(static_cast<bool>(written), "an accepted array serializes");
  llvm::Expected<NpyArray> back = parseNpy(*written, "round-trip.npy");
  require(static_cast<bool>(back), "a serialized array parses");
  require(back->elementType == array->elementType &&
              back->shape == array->shape && back->data == array->data,
          "the round trip keeps the array");
  return 0;
}
