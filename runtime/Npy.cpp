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
using llvm::StringRef;

// NpyArray hands out its bytes as floats without swapping them.
static_assert(llvm::sys::IsLittleEndianHost,
              "the .npy code assumes a little-endian host");

static constexpr llvm::StringLiteral kMagic("\x93NUMPY");

/// Builds the error for a problem with the file (or array) called `name`.
static llvm::Error makeError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(name + ": " + message);
}

/// Quotes at most the first `limit` bytes of `bytes` with C escapes, so that
/// binary garbage in a hostile file stays readable and short in a message.
static std::string quoteBytes(StringRef bytes, size_t limit = 16) {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << '"';
  llvm::printEscapedString(bytes.take_front(limit), os);
  os << (bytes.size() > limit ? "...\"" : "\"");
  return result;
}

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
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// What the header dict says.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A parser for the one dict literal numpy writes:
/// `{'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple of ints>}`,
/// keys in any order, Python whitespace rules, optional trailing commas.
/// A fixed grammar rather than a general Python literal parser, so that
/// hostile input cannot make it recurse, and it never allocates more than the
/// header's own size.
class HeaderParser {
public:
  HeaderParser(StringRef text, StringRef name) : text(text), name(name) {}

  /// Parses the whole header into `header`.
  llvm::Error parse(NpyHeader &header);

private:
  void skipSpace() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool consume(char c) {
    if (atEnd() || peek() != c)
      return false;
    ++pos;
    return true;
  }
  bool consumeWord(StringRef word) {
    StringRef rest = text.drop_front(pos);
    if (!rest.starts_with(word))
      return false;
    // `Truex` is an identifier, not `True` followed by junk.
    if (rest.size() > word.size() &&
        (llvm::isAlnum(rest[word.size()]) || rest[word.size()] == '_'))
      return false;
    pos += word.size();
    return true;
  }

  /// Returns a "malformed header" error saying `what` was expected here.
  llvm::Error expected(const llvm::Twine &what) const {
    std::string found = atEnd() ? std::string("the end of the header")
                                : quoteBytes(text.drop_front(pos)) +
                                      " at offset " + std::to_string(pos);
    return makeError(name, "malformed .npy header: expected " + what +
                               ", found " + found + " in " +
                               quoteBytes(text, 80));
  }

  llvm::Error parseString(std::string &result);
  llvm::Error parseBool(bool &result);
  llvm::Error parseDim(int64_t &result);
  llvm::Error parseShape(std::vector<int64_t> &result);

  StringRef text;
  StringRef name;
  size_t pos = 0;
};
} // namespace

llvm::Error HeaderParser::parseString(std::string &result) {
  char quote = peek();
  if (quote != '\'' && quote != '"')
    return expected("a quoted string");
  size_t start = pos + 1;
  size_t end = text.find(quote, start);
  StringRef body = text.slice(start, end);
  // numpy never writes escapes; refusing them keeps the parser trivial.
  if (end == StringRef::npos || body.contains('\\') || body.contains('\n'))
    return expected("a simple string closed by " + llvm::Twine(quote));
  result = body.str();
  pos = end + 1;
  return llvm::Error::success();
}

llvm::Error HeaderParser::parseBool(bool &result) {
  if (consumeWord("True"))
    result = true;
  else if (consumeWord("False"))
    result = false;
  else
    return expected("True or False");
  return llvm::Error::success();
}

llvm::Error HeaderParser::parseDim(int64_t &result) {
  if (peek() == '-')
    return makeError(name, "negative dimension in .npy shape, in " +
                               quoteBytes(text, 80));
  if (!llvm::isDigit(peek()))
    return expected("a non-negative integer dimension");
  result = 0;
  while (llvm::isDigit(peek())) {
    int64_t digit = text[pos++] - '0';
    if (llvm::MulOverflow<int64_t>(result, 10, result) ||
        llvm::AddOverflow<int64_t>(result, digit, result))
      return makeError(name, "dimension in .npy shape does not fit in 64 "
                             "bits, in " +
                                 quoteBytes(text, 80));
  }
  if (llvm::isAlnum(peek()) || peek() == '.' || peek() == '_')
    return makeError(name, "non-integer dimension in .npy shape, in " +
                               quoteBytes(text, 80));
  return llvm::Error::success();
}

llvm::Error HeaderParser::parseShape(std::vector<int64_t> &result) {
  result.clear();
  if (!consume('('))
    return expected("'(' to start the shape tuple");
  skipSpace();
  if (consume(')'))
    return llvm::Error::success();
  while (true) {
    int64_t dim;
    if (llvm::Error err = parseDim(dim))
      return err;
    result.push_back(dim);
    skipSpace();
    // In Python `(5)` is the int 5, not a tuple: one dimension needs a comma.
    if (result.size() > 1 && consume(')'))
      return llvm::Error::success();
    if (!consume(','))
      return expected(result.size() > 1 ? "',' or ')' in the shape"
                                        : "',' after the first dimension");
    skipSpace();
    if (consume(')'))
      return llvm::Error::success();
  }
}

llvm::Error HeaderParser::parse(NpyHeader &header) {
  bool seenDescr = false, seenFortran = false, seenShape = false;
  skipSpace();
  if (!consume('{'))
    return expected("'{' to start the header dict");
  while (true) {
    skipSpace();
    if (consume('}'))
      break;
    std::string key;
    if (llvm::Error err = parseString(key))
      return err;
    skipSpace();
    if (!consume(':'))
      return expected("':' after key '" + key + "'");
    skipSpace();
    bool *seen = key == "descr"           ? &seenDescr
                 : key == "fortran_order" ? &seenFortran
                 : key == "shape"         ? &seenShape
                                          : nullptr;
    if (!seen)
      return makeError(name, "unexpected key '" + key +
                                 "' in .npy header (expected 'descr', "
                                 "'fortran_order' and 'shape')");
    if (*seen)
      return makeError(name, "duplicate key '" + key + "' in .npy header");
    if (llvm::Error err = seen == &seenDescr   ? parseString(header.descr)
                          : seen == &seenShape ? parseShape(header.shape)
                                               : parseBool(header.fortranOrder))
      return err;
    *seen = true;
    skipSpace();
    if (consume('}'))
      break;
    if (!consume(','))
      return expected("',' or '}' after the value of '" + key + "'");
  }
  // numpy pads the dict with spaces and ends it with '\n'; nothing else.
  skipSpace();
  if (!atEnd())
    return expected("only padding after the header dict");
  for (auto [seenKey, keyName] :
       {std::pair(seenDescr, "descr"), std::pair(seenFortran, "fortran_order"),
        std::pair(seenShape, "shape")})
    if (!seenKey)
      return makeError(name,
                       llvm::Twine(".npy header has no '") + keyName + "' key");
  return llvm::Error::success();
}

/// Maps a numpy dtype string to the element type it denotes, if supported.
static std::optional<ElementType> parseDescr(StringRef descr) {
  if (descr == "<f4")
    return ElementType::F32;
  if (descr == "<i8")
    return ElementType::I64;
  // numpy writes '|b1'; '?' and '|?' are the other spellings of bool.
  if (descr == "|b1" || descr == "?" || descr == "|?")
    return ElementType::Bool;
  return std::nullopt;
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

/// The reader behind parseNpy and readNpy: magic, version, header length and
/// header, then exactly the bytes the shape needs, then one byte more to tell
/// whether anything follows the data.
static llvm::Expected<NpyArray> readNpyFrom(ReadFn read, StringRef name) {
  // Bytes read so far, for the messages about files that end early.
  uint64_t total = 0;
  auto readInto = [&](char *buffer, size_t size) -> llvm::Expected<size_t> {
    llvm::Expected<size_t> got = readFully(read, buffer, size);
    if (!got)
      return makeError(name, "cannot read .npy file: " +
                                 llvm::toString(got.takeError()));
    total += *got;
    return *got;
  };
  auto truncated = [&](StringRef where) {
    return makeError(name, "truncated .npy file: " + llvm::Twine(total) +
                               " bytes end inside the " + where);
  };

  // The magic, the version and the (v1.0) 2 or (v2.0, v3.0) 4 length bytes.
  char preamble[12];
  llvm::Expected<size_t> got = readInto(preamble, kMagic.size());
  if (!got)
    return got.takeError();
  StringRef magic(preamble, *got);
  if (magic != kMagic) {
    if (kMagic.starts_with(magic))
      return truncated("magic string");
    return makeError(name, "not a .npy file: expected the magic string " +
                               quoteBytes(kMagic) + ", found " +
                               quoteBytes(magic));
  }
  if (!(got = readInto(preamble + kMagic.size(), 2)))
    return got.takeError();
  if (*got < 2)
    return truncated("format version");
  unsigned major = static_cast<uint8_t>(preamble[kMagic.size()]);
  unsigned minor = static_cast<uint8_t>(preamble[kMagic.size() + 1]);
  if (major < 1 || major > 3 || minor != 0)
    return makeError(name, "unsupported .npy format version " +
                               llvm::Twine(major) + "." + llvm::Twine(minor) +
                               " (supported: 1.0, 2.0, 3.0)");
  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 (utf8) a 32-bit one.
  size_t lengthSize = major == 1 ? 2 : 4;
  char *lengthPtr = preamble + kMagic.size() + 2;
  if (!(got = readInto(lengthPtr, lengthSize)))
    return got.takeError();
  if (*got < lengthSize)
    return truncated("header length");
  uint64_t headerSize = major == 1 ? llvm::support::endian::read16le(lengthPtr)
                                   : llvm::support::endian::read32le(lengthPtr);
  if (headerSize > kMaxHeaderSize)
    return makeError(name, "the .npy header is " + llvm::Twine(headerSize) +
                               " bytes, more than the " +
                               llvm::Twine(kMaxHeaderSize) +
                               " bytes a header may take");
  std::string headerText(headerSize, '\0');
  if (!(got = readInto(headerText.data(), headerSize)))
    return got.takeError();
  if (*got < headerSize)
    return makeError(name, "truncated .npy file: the header is " +
                               llvm::Twine(headerSize) + " bytes but only " +
                               llvm::Twine(*got) +
                               " bytes follow the preamble");

  NpyHeader header;
  HeaderParser parser(headerText, name);
  if (llvm::Error err = parser.parse(header))
    return std::move(err);

  std::optional<ElementType> type = parseDescr(header.descr);
  if (!type)
    return makeError(name, "unsupported dtype '" + header.descr +
                               "' (supported: '<f4' for float32, '|b1' for "
                               "bool, '<i8' for int64)");
  if (header.fortranOrder)
    return makeError(name, "Fortran-order arrays are not supported; save "
                           "with np.ascontiguousarray");
  std::string what = "shape " + formatShape(header.shape) + " of " +
                     getElementTypeName(*type).str();
  std::optional<int64_t> byteCount = getByteCount(header.shape, *type);
  if (!byteCount)
    return makeError(name, what + " is too large: its byte count overflows");
  // Before any data is read, so that a header claiming a huge shape says so
  // rather than that the file is truncated, and nothing that large is
  // allocated.
  if (llvm::Error error = checkMemoryLimit(*byteCount, what))
    return makeError(name, llvm::toString(std::move(error)));

  NpyArray array;
  array.elementType = *type;
  array.shape = std::move(header.shape);
  size_t dataSize = static_cast<size_t>(*byteCount);
  size_t dataRead = 0;
  while (dataRead < dataSize) {
    size_t chunk = std::min(kDataChunk, dataSize - dataRead);
    array.data.resize(dataRead + chunk);
    if (!(got = readInto(array.data.data() + dataRead, chunk)))
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
  if (!(got = readInto(&extra, 1)))
    return got.takeError();
  if (*got != 0)
    return makeError(name, "data is longer than the " + llvm::Twine(dataSize) +
                               " bytes " + what + " needs (trailing bytes)");

  if (*type == ElementType::Bool) {
    StringRef payload(array.data.data(), array.data.size());
    size_t bad = payload.find_first_not_of(StringRef("\0\1", 2));
    if (bad != StringRef::npos)
      return makeError(name, "bool element " + llvm::Twine(bad) +
                                 " is the byte " +
                                 llvm::Twine(unsigned(uint8_t(payload[bad]))) +
                                 " (expected 0 or 1)");
  }
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
