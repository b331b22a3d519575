//===- Npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// The format:
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html A
// 6-byte magic, a 2-byte version, a 2-byte (v1.0) or 4-byte (v2.0, v3.0)
// little-endian header length, a Python dict literal padded with spaces and
// ended by '\n', then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"
#include "runtime/MemoryLimit.h"
#include "runtime/NpyHeader.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <optional>

using namespace mha::runtime;
using namespace mha::runtime::npy;
using llvm::StringRef;

// NpyArray hands out its bytes as floats without swapping them.
static_assert(llvm::sys::IsLittleEndianHost,
              "the .npy code assumes a little-endian host");

// The product skips zero dimensions so that, whenever this succeeds, every
// partial product (every stride a consumer computes) fits as well.
std::optional<int64_t> mha::runtime::getByteCount(llvm::ArrayRef<int64_t> shape,
                                                  ElementType type) {
  int64_t bytes = static_cast<int64_t>(getElementSize(type));
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  }
  if (static_cast<uint64_t>(bytes) > std::numeric_limits<size_t>::max())
    return std::nullopt;
  return empty ? 0 : bytes;
}

llvm::StringRef mha::runtime::getElementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "float32";
  case ElementType::Bool:
    return "bool";
  case ElementType::I64:
    return "int64";
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::I8:
    return "int8";
  case ElementType::I32:
    return "int32";
  }
  llvm_unreachable("unknown element type");
}

size_t mha::runtime::getElementSize(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return sizeof(float);
  case ElementType::Bool:
    return 1;
  case ElementType::I64:
    return sizeof(int64_t);
  case ElementType::BF16:
    return sizeof(uint16_t);
  case ElementType::I8:
    return 1;
  case ElementType::I32:
    return sizeof(int32_t);
  }
  llvm_unreachable("unknown element type");
}

int64_t NpyArray::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

float *NpyArray::f32() {
  assert(elementType == ElementType::F32 && "not a float32 array");
  return reinterpret_cast<float *>(data.data());
}

const float *NpyArray::f32() const {
  assert(elementType == ElementType::F32 && "not a float32 array");
  return reinterpret_cast<const float *>(data.data());
}

uint8_t *NpyArray::bools() {
  assert(elementType == ElementType::Bool && "not a bool array");
  return reinterpret_cast<uint8_t *>(data.data());
}

const uint8_t *NpyArray::bools() const {
  assert(elementType == ElementType::Bool && "not a bool array");
  return reinterpret_cast<const uint8_t *>(data.data());
}

int64_t *NpyArray::i64() {
  assert(elementType == ElementType::I64 && "not an int64 array");
  return reinterpret_cast<int64_t *>(data.data());
}

const int64_t *NpyArray::i64() const {
  assert(elementType == ElementType::I64 && "not an int64 array");
  return reinterpret_cast<const int64_t *>(data.data());
}

int8_t *NpyArray::i8() {
  assert(elementType == ElementType::I8 && "not an int8 array");
  return reinterpret_cast<int8_t *>(data.data());
}

const int8_t *NpyArray::i8() const {
  assert(elementType == ElementType::I8 && "not an int8 array");
  return reinterpret_cast<const int8_t *>(data.data());
}

int32_t *NpyArray::i32() {
  assert(elementType == ElementType::I32 && "not an int32 array");
  return reinterpret_cast<int32_t *>(data.data());
}

const int32_t *NpyArray::i32() const {
  assert(elementType == ElementType::I32 && "not an int32 array");
  return reinterpret_cast<const int32_t *>(data.data());
}

NpyArray NpyArray::zeros(ElementType elementType,
                         llvm::ArrayRef<int64_t> shape) {
  std::optional<int64_t> byteCount = getByteCount(shape, elementType);
  assert(byteCount && "negative dimension or overflowing shape");
  NpyArray array;
  array.elementType = elementType;
  array.shape.assign(shape.begin(), shape.end());
  array.data.assign(static_cast<size_t>(byteCount.value_or(0)), 0);
  return array;
}

std::string mha::runtime::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return result;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Where the bytes of a .npy file come from. Reads never ask for more than
/// the format says comes next, so that an endless stream (/dev/zero, a pipe)
/// costs no more memory than its header claims, and that claim is checked
/// against the memory limit first.
using ReadFn = llvm::function_ref<llvm::Expected<size_t>(char *, size_t)>;

/// Reads until `size` bytes are in `buffer` or the source ends; returns how
/// many arrived (fewer than `size` only at the end of the source).
llvm::Expected<size_t> readFully(ReadFn read, char *buffer, size_t size) {
  size_t done = 0;
  while (done < size) {
    llvm::Expected<size_t> got = read(buffer + done, size - done);
    if (!got)
      return got.takeError();
    if (*got == 0)
      break;
    done += *got;
  }
  return done;
}
} // namespace

/// The largest header accepted. numpy's own reader stops at 10000 bytes;
/// a header of our two dtypes and 64 dimensions takes well under 2000, so
/// this only keeps a hostile 4 GiB header length from being allocated.
static constexpr uint64_t kMaxHeaderSize = 1 << 20;

/// Bytes of data read (and allocated) at a time, so that a file that claims
/// a large shape but ends early never makes its whole size resident.
static constexpr size_t kDataChunk = size_t(64) << 20;

namespace {
/// A source of .npy bytes, and how many it gave so far, for the messages
/// about files that end early.
class NpySource {
public:
  NpySource(ReadFn read, StringRef name) : name(name), read(read) {}

  /// Reads until `size` bytes are in `buffer` or the source ends.
  llvm::Expected<size_t> readInto(char *buffer, size_t size) {
    llvm::Expected<size_t> got = readFully(read, buffer, size);
    if (!got)
      return makeError(name, "cannot read .npy file: " +
                                 llvm::toString(got.takeError()));
    total += *got;
    return *got;
  }

  /// The error for a source that ends inside `where`.
  llvm::Error truncated(StringRef where) const {
    return makeError(name, "truncated .npy file: " + llvm::Twine(total) +
                               " bytes end inside the " + where);
  }

  /// What the messages call the source.
  StringRef name;

private:
  ReadFn read;
  uint64_t total = 0;
};
} // namespace

/// Reads the magic, the version, the header length and the header's text.
static llvm::Expected<std::string> readHeaderText(NpySource &source) {
  StringRef name = source.name;
  // The magic, the version and the (v1.0) 2 or (v2.0, v3.0) 4 length bytes.
  char preamble[12];
  llvm::Expected<size_t> got = source.readInto(preamble, kMagic.size());
  if (!got)
    return got.takeError();
  StringRef magic(preamble, *got);
  if (magic != kMagic) {
    if (kMagic.starts_with(magic))
      return source.truncated("magic string");
    return makeError(name, "not a .npy file: expected the magic string " +
                               quoteBytes(kMagic) + ", found " +
                               quoteBytes(magic));
  }
  if (!(got = source.readInto(preamble + kMagic.size(), 2)))
    return got.takeError();
  if (*got < 2)
    return source.truncated("format version");
  unsigned major = static_cast<uint8_t>(preamble[kMagic.size()]);
  unsigned minor = static_cast<uint8_t>(preamble[kMagic.size() + 1]);
  if (major < 1 || major > 3 || minor != 0)
    return makeError(name, "unsupported .npy format version " +
                               llvm::Twine(major) + "." + llvm::Twine(minor) +
                               " (supported: 1.0, 2.0, 3.0)");
  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 (utf8) a 32-bit one.
  size_t lengthSize = major == 1 ? 2 : 4;
  char *lengthPtr = preamble + kMagic.size() + 2;
  if (!(got = source.readInto(lengthPtr, lengthSize)))
    return got.takeError();
  if (*got < lengthSize)
    return source.truncated("header length");
  uint64_t headerSize = major == 1 ? llvm::support::endian::read16le(lengthPtr)
                                   : llvm::support::endian::read32le(lengthPtr);
  if (headerSize > kMaxHeaderSize)
    return makeError(name, "the .npy header is " + llvm::Twine(headerSize) +
                               " bytes, more than the " +
                               llvm::Twine(kMaxHeaderSize) +
                               " bytes a header may take");
  std::string headerText(headerSize, '\0');
  if (!(got = source.readInto(headerText.data(), headerSize)))
    return got.takeError();
  if (*got < headerSize)
    return makeError(name, "truncated .npy file: the header is " +
                               llvm::Twine(headerSize) + " bytes but only " +
                               llvm::Twine(*got) +
                               " bytes follow the preamble");
  return headerText;
}

/// "shape [2, 3] of float32", for messages.
static std::string describeArray(const NpyArray &array) {
  return "shape " + formatShape(array.shape) + " of " +
         getElementTypeName(array.elementType).str();
}

/// The array `headerText` declares, without its data yet; `byteCount` is set
/// to the bytes its data takes.
static llvm::Expected<NpyArray>
declaredArray(StringRef headerText, StringRef name, size_t &byteCount) {
  NpyHeader header;
  if (llvm::Error err = parseHeader(headerText, name, header))
    return std::move(err);

  std::optional<ElementType> type = parseDescr(header.descr);
  if (!type)
    return makeError(
        name, "unsupported dtype '" + header.descr +
                  "' (supported: '<f4' for float32, '|b1' for "
                  "bool, '<i8' for int64, '|i1' for int8, '<i4' for int32)");
  if (header.fortranOrder)
    return makeError(name, "Fortran-order arrays are not supported; save "
                           "with np.ascontiguousarray");
  NpyArray array;
  array.elementType = *type;
  array.shape = std::move(header.shape);
  std::string what = describeArray(array);
  std::optional<int64_t> bytes = getByteCount(array.shape, *type);
  if (!bytes)
    return makeError(name, what + " is too large: its byte count overflows");
  // Before any data is read, so that a header claiming a huge shape says so
  // rather than that the file is truncated, and nothing that large is
  // allocated.
  if (llvm::Error error = checkMemoryLimit(*bytes, what))
    return makeError(name, llvm::toString(std::move(error)));
  byteCount = static_cast<size_t>(*bytes);
  return array;
}

/// Reads exactly the `dataSize` bytes of `array`'s data, then one byte more
/// to tell whether anything follows them.
static llvm::Error readData(NpySource &source, NpyArray &array,
                            size_t dataSize) {
  StringRef name = source.name;
  std::string what = describeArray(array);
  size_t dataRead = 0;
  while (dataRead < dataSize) {
    size_t chunk = std::min(kDataChunk, dataSize - dataRead);
    array.data.resize(dataRead + chunk);
    llvm::Expected<size_t> got =
        source.readInto(array.data.data() + dataRead, chunk);
    if (!got)
      return got.takeError();
    dataRead += *got;
    if (*got < chunk)
      return makeError(name, "data is " + llvm::Twine(dataRead) +
                                 " bytes but " + what + " needs " +
                                 llvm::Twine(dataSize) +
                                 " bytes (file truncated)");
  }
  // One byte more tells a longer file from an exact one without reading an
  // endless stream to its end.
  char extra;
  llvm::Expected<size_t> got = source.readInto(&extra, 1);
  if (!got)
    return got.takeError();
  if (*got != 0)
    return makeError(name, "data is longer than the " + llvm::Twine(dataSize) +
                               " bytes " + what + " needs (trailing bytes)");
  return llvm::Error::success();
}

/// Refuses a bool array holding a byte other than 0 or 1.
static llvm::Error checkBoolBytes(const NpyArray &array, StringRef name) {
  if (array.elementType != ElementType::Bool)
    return llvm::Error::success();
  StringRef payload(array.data.data(), array.data.size());
  size_t bad = payload.find_first_not_of(StringRef("\0\1", 2));
  if (bad != StringRef::npos)
    return makeError(name, "bool element " + llvm::Twine(bad) +
                               " is the byte " +
                               llvm::Twine(unsigned(uint8_t(payload[bad]))) +
                               " (expected 0 or 1)");
  return llvm::Error::success();
}

/// The reader behind parseNpy and readNpy: magic, version, header length and
/// header, then exactly the bytes the shape needs, then one byte more to tell
/// whether anything follows the data.
static llvm::Expected<NpyArray> readNpyFrom(ReadFn read, StringRef name) {
  NpySource source(read, name);
  llvm::Expected<std::string> headerText = readHeaderText(source);
  if (!headerText)
    return headerText.takeError();
  size_t dataSize = 0;
  llvm::Expected<NpyArray> array = declaredArray(*headerText, name, dataSize);
  if (!array)
    return array.takeError();
  if (llvm::Error error = readData(source, *array, dataSize))
    return std::move(error);
  if (llvm::Error error = checkBoolBytes(*array, name))
    return std::move(error);
  return array;
}

llvm::Expected<NpyArray> mha::runtime::parseNpy(StringRef bytes,
                                                StringRef name) {
  size_t offset = 0;
  auto read = [&](char *buffer, size_t size) -> llvm::Expected<size_t> {
    size_t count = std::min(size, bytes.size() - offset);
    if (count)
      std::memcpy(buffer, bytes.data() + offset, count);
    offset += count;
    return count;
  };
  return readNpyFrom(read, name);
}

llvm::Expected<NpyArray> mha::runtime::readNpy(StringRef path) {
  // Reading a directory fails with a vague "Is a directory" or not at all,
  // depending on the platform; say it plainly.
  if (llvm::sys::fs::is_directory(path))
    return makeError(path, "is a directory, expected a .npy file");
  // A descriptor read piece by piece, not a MemoryBuffer of the whole file:
  // a pipe or a device (/dev/zero) has no size to check first.
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return makeError(path, "cannot read .npy file: " +
                               llvm::toString(file.takeError()));
  llvm::scope_exit closeFile([&] { llvm::sys::fs::closeFile(*file); });
  auto read = [&](char *buffer, size_t size) -> llvm::Expected<size_t> {
    return llvm::sys::fs::readNativeFile(*file,
                                         llvm::MutableArrayRef(buffer, size));
  };
  return readNpyFrom(read, path);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

llvm::Expected<std::string> mha::runtime::serializeNpy(const NpyArray &array,
                                                       StringRef name) {
  if (array.elementType == ElementType::BF16)
    return makeError(name, "bfloat16 has no .npy type; widen the array to "
                           "float32 first");
  std::optional<int64_t> byteCount =
      getByteCount(array.shape, array.elementType);
  if (!byteCount || array.data.size() != static_cast<uint64_t>(*byteCount))
    return makeError(name, "array data is " + llvm::Twine(array.data.size()) +
                               " bytes, which does not match shape " +
                               formatShape(array.shape) + " of " +
                               getElementTypeName(array.elementType));

  std::string dict;
  llvm::raw_string_ostream os(dict);
  StringRef descr = array.elementType == ElementType::F32    ? "<f4"
                    : array.elementType == ElementType::Bool ? "|b1"
                    : array.elementType == ElementType::I8   ? "|i1"
                    : array.elementType == ElementType::I32  ? "<i4"
                                                             : "<i8";
  os << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  llvm::interleave(array.shape, os, ", ");
  os << (array.shape.size() == 1 ? ",), }" : "), }");
  // np.save leaves room for the first dimension to grow to 21 digits in place;
  // doing the same makes our files byte-identical to numpy's.
  if (!array.shape.empty())
    dict.append(21 - std::min<size_t>(21, llvm::utostr(array.shape[0]).size()),
                ' ');

  // numpy's padding rule: spaces, then '\n', so the data starts at a multiple
  // of 64 bytes (always at least one space, as numpy writes it).
  const size_t align = 64;
  bool fitsV1 = dict.size() + align + 1 <= 0xffff;
  size_t preambleSize = kMagic.size() + 2 + (fitsV1 ? 2 : 4);
  size_t padding = align - (preambleSize + dict.size() + 1) % align;
  dict.append(padding, ' ');
  dict.push_back('\n');

  std::string bytes(kMagic);
  bytes.push_back(fitsV1 ? 1 : 2);
  bytes.push_back(0);
  char length[4];
  llvm::support::endian::write32le(length, dict.size());
  bytes.append(length, fitsV1 ? 2 : 4);
  bytes += dict;
  bytes.append(array.data.begin(), array.data.end());
  return bytes;
}

llvm::Error mha::runtime::writeNpy(StringRef path, const NpyArray &array) {
  llvm::Expected<std::string> bytes = serializeNpy(array, path);
  if (!bytes)
    return bytes.takeError();
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError(path, "cannot open for writing: " + ec.message());
  os << *bytes;
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return makeError(path, "cannot write: " + ec.message());
  }
  return llvm::Error::success();
}
