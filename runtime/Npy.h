//===- Npy.h - NumPy .npy reading and writing -------------------*- C++ -*-===//
//
// mha-run exchanges tensors with NumPy through .npy files. The reader is meant
// for files from anywhere: it never trusts a size it has not checked against
// the bytes it was given, and reports every problem as an llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_NPY_H
#define MHA_RUNTIME_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// The element types mha reads and writes: NumPy's '<f4', '|b1', '<i8'
/// (the lengths of key/value caches), '|i1' (the codes of int8 caches) and
/// '<i4' (the block tables of paged caches). BF16
/// has no NumPy type: it is only held in memory, for the bf16 arguments of a
/// graph (runtime/BFloat16.h rounds float32 arrays to it); .npy files never
/// hold it.
enum class ElementType { F32, Bool, I64, BF16, I8, I32 };

/// Returns the NumPy name of `type` ("float32", "bool", "int64", "int8")
/// for messages.
llvm::StringRef getElementTypeName(ElementType type);

/// Returns the size in bytes of one element of `type`.
size_t getElementSize(ElementType type);

/// Returns the byte count of an array of `shape` and `type`, or nothing if a
/// dimension is negative or the count overflows int64_t or size_t.
std::optional<int64_t> getByteCount(llvm::ArrayRef<int64_t> shape,
                                    ElementType type);

/// An allocator of blocks that start on a cache line (64 bytes). The arrays
/// that compiled code reads in place should start on one: an AMX tile row
/// is 64 bytes, and a bf16 projection reads x's rows as such; at malloc's
/// 16-byte alignment each row spans two lines, and the loads take twice as
/// long (docs/performance.md, 2026-11-28).
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t count) {
    return static_cast<T *>(::operator new(count * sizeof(T), kAlignment));
  }
  void deallocate(T *pointer, size_t) {
    ::operator delete(pointer, kAlignment);
  }
  template <typename U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};

/// Bytes that start on a cache line.
using AlignedBytes = std::vector<char, CacheLineAllocator<char>>;

/// A dense C-order array as stored in a .npy file.
struct NpyArray {
  /// The type of every element.
  ElementType elementType = ElementType::F32;
  /// The dimensions, outermost first; empty for a scalar.
  std::vector<int64_t> shape;
  /// The elements in C order, little-endian (the host's order: mha only
  /// builds for little-endian hosts); bools are one byte each, 0 or 1.
  /// They start on a cache line.
  AlignedBytes data;

  /// Returns the number of elements: the product of the dimensions (1 for a
  /// scalar).
  int64_t numElements() const;
  /// Returns the size in bytes of one element.
  size_t elementSize() const { return getElementSize(elementType); }

  /// Returns the elements as floats; only valid for F32 arrays.
  float *f32();
  /// Returns the elements as floats; only valid for F32 arrays.
  const float *f32() const;
  /// Returns the elements as bytes that are 0 or 1; only valid for Bool
  /// arrays.
  uint8_t *bools();
  /// Returns the elements as bytes that are 0 or 1; only valid for Bool
  /// arrays.
  const uint8_t *bools() const;
  /// Returns the elements as int64; only valid for I64 arrays.
  int64_t *i64();
  /// Returns the elements as int64; only valid for I64 arrays.
  const int64_t *i64() const;

  /// Returns the elements as int8; only valid for I8 arrays.
  int8_t *i8();
  /// Returns the elements as int8; only valid for I8 arrays.
  const int8_t *i8() const;

  /// Returns the elements as int32; only valid for I32 arrays.
  int32_t *i32();
  /// Returns the elements as int32; only valid for I32 arrays.
  const int32_t *i32() const;

  /// Returns an array of `shape` filled with zeros (false for Bool); the
  /// dimensions must be non-negative.
  static NpyArray zeros(ElementType elementType, llvm::ArrayRef<int64_t> shape);
};

/// Parses the contents of a .npy file (format versions 1.0, 2.0 and 3.0,
/// dtypes '<f4', '|b1', '<i8' and '|i1', C order). `name` (usually the file's
/// path) starts every error message. A header longer than 1 MiB, an array
/// larger than the memory limit (runtime/MemoryLimit.h), data shorter or longer
/// than the shape needs, and a bool byte other than 0 or 1 are errors.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);

/// Reads and parses the .npy file at `path`, as parseNpy does, from a
/// descriptor: the header first, then exactly the bytes its shape needs
/// (checked against the memory limit before they are read), then at most one
/// byte more to refuse trailing data. So a pipe or a device (/dev/zero, a
/// valid file followed by endless bytes) is refused after a bounded read.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// Serializes `array` to .npy bytes with a version 1.0 header (2.0 only if the
/// header does not fit in 1.0), padded so the data starts at a multiple of 64.
/// Fails if the data does not match the shape; `name` starts the message.
llvm::Expected<std::string> serializeNpy(const NpyArray &array,
                                         llvm::StringRef name = "array");

/// Writes `array` to the .npy file at `path` (see serializeNpy).
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

/// Formats `shape` as "[2, 8, 4]" ("[]" for a scalar) for messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_NPY_H
