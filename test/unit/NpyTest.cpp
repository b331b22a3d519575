//===- NpyTest.cpp - Tests of the .npy reader and writer ------------------===//
//
// Round trips, hand-built headers of every supported version, and one case
// per class of broken input, each checking that the message says what is
// wrong (and never that the parser crashed).
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"
#include "runtime/BFloat16.h"
#include "runtime/MemoryLimit.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mha::runtime;
using llvm::StringRef;

namespace {

/// Builds .npy bytes by hand: magic, version `major`.0, the length field
/// that version uses, `dict` padded to 64 bytes and ended by '\n', then
/// `data`.
std::string makeNpy(StringRef dict, StringRef data, uint8_t major = 1) {
  std::string header = dict.str();
  size_t preamble = major == 1 ? 10 : 12;
  header.append(64 - (preamble + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::string bytes("\x93NUMPY");
  bytes.push_back(static_cast<char>(major));
  bytes.push_back(0);
  char length[4];
  llvm::support::endian::write32le(length, header.size());
  bytes.append(length, major == 1 ? 2 : 4);
  return bytes + header + data.str();
}

/// Returns `count` float32 elements 0, 1, 2, ... as raw bytes.
std::string floatBytes(int count) {
  std::string bytes(count * sizeof(float), '\0');
  for (int i = 0; i < count; ++i) {
    float value = static_cast<float>(i);
    std::memcpy(&bytes[i * sizeof(float)], &value, sizeof(float));
  }
  return bytes;
}

/// Checks that parsing `bytes` fails with a message that names the file and
/// contains `substring`.
testing::AssertionResult failsWith(StringRef bytes, StringRef substring) {
  llvm::Expected<NpyArray> array = parseNpy(bytes, "in.npy");
  if (array)
    return testing::AssertionFailure() << "parsed without error";
  std::string message = llvm::toString(array.takeError());
  if (!StringRef(message).starts_with("in.npy: "))
    return testing::AssertionFailure() << "no file name in: " << message;
  if (!StringRef(message).contains(substring))
    return testing::AssertionFailure()
           << "expected \"" << substring.str() << "\" in: " << message;
  return testing::AssertionSuccess() << message;
}

/// Checks that `result` failed with a message containing `substring`.
template <typename T>
testing::AssertionResult failedWith(llvm::Expected<T> result,
                                    StringRef substring) {
  if (result)
    return testing::AssertionFailure() << "succeeded unexpectedly";
  std::string message = llvm::toString(result.takeError());
  if (!StringRef(message).contains(substring))
    return testing::AssertionFailure()
           << "expected \"" << substring.str() << "\" in: " << message;
  return testing::AssertionSuccess() << message;
}

/// Gives each test a fresh directory for the files it writes.
class NpyFileTest : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mha-npy-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// Returns the path of `file` in the test's directory.
  std::string path(StringRef file) const {
    llvm::SmallString<128> result(dir);
    llvm::sys::path::append(result, file);
    return std::string(result);
  }

  llvm::SmallString<128> dir;
};

/// Writes `array` to a file and reads it back; checks that nothing changed
/// and that the data starts at a multiple of 64 bytes after a '\n'.
void expectRoundTrip(const NpyArray &array, const std::string &file) {
  ASSERT_FALSE(llvm::errorToBool(writeNpy(file, array)));
  llvm::Expected<NpyArray> back = readNpy(file);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->elementType, array.elementType);
  EXPECT_EQ(back->shape, array.shape);
  EXPECT_EQ(back->data, array.data);

  auto buffer = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(buffer));
  StringRef bytes = (*buffer)->getBuffer();
  size_t dataStart = bytes.size() - array.data.size();
  EXPECT_EQ(dataStart % 64, 0u);
  EXPECT_EQ(bytes[dataStart - 1], '\n');
  EXPECT_EQ(bytes[6], 1) << "expected a version 1.0 header";
}

TEST_F(NpyFileTest, RoundTripF32) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {5}, {2, 3}, {2, 8, 4}, {0, 3}, {1, 1, 1, 7}};
  for (const std::vector<int64_t> &shape : shapes) {
    SCOPED_TRACE(formatShape(shape));
    NpyArray array = NpyArray::zeros(ElementType::F32, shape);
    for (int64_t i = 0; i < array.numElements(); ++i)
      array.f32()[i] = 0.25f * i - 3.0f;
    expectRoundTrip(array, path("a.npy"));
  }
}

TEST_F(NpyFileTest, RoundTripBool) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {3}, {2, 4, 5}};
  for (const std::vector<int64_t> &shape : shapes) {
    SCOPED_TRACE(formatShape(shape));
    NpyArray array = NpyArray::zeros(ElementType::Bool, shape);
    for (int64_t i = 0; i < array.numElements(); ++i)
      array.bools()[i] = i % 3 == 0;
    expectRoundTrip(array, path("m.npy"));
  }
}

// The lengths of key/value caches: '<i8', values beyond 32 bits and
// negative ones kept exactly.
TEST_F(NpyFileTest, RoundTripInt64) {
  NpyArray array = NpyArray::zeros(ElementType::I64, {4});
  const int64_t values[] = {0, 4096, -1, int64_t(1) << 40};
  for (int64_t i = 0; i < 4; ++i)
    array.i64()[i] = values[i];
  expectRoundTrip(array, path("l.npy"));
  llvm::Expected<std::string> bytes = serializeNpy(array);
  ASSERT_TRUE(bool(bytes));
  EXPECT_TRUE(StringRef(*bytes).contains(
      "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }"));
  llvm::Expected<NpyArray> parsed = parseNpy(*bytes, "l.npy");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->elementType, ElementType::I64);
  EXPECT_EQ(parsed->i64()[3], int64_t(1) << 40);
  EXPECT_EQ(parsed->i64()[2], -1);
}

// The codes of int8 key/value caches: '|i1', as NumPy writes int8, with
// the ends of the range kept exactly; NumPy's other spellings parse too.
TEST_F(NpyFileTest, RoundTripInt8) {
  NpyArray array = NpyArray::zeros(ElementType::I8, {2, 2});
  const int8_t values[] = {0, 127, -127, -128};
  for (int64_t i = 0; i < 4; ++i)
    array.i8()[i] = values[i];
  expectRoundTrip(array, path("c.npy"));
  llvm::Expected<std::string> bytes = serializeNpy(array);
  ASSERT_TRUE(bool(bytes));
  EXPECT_TRUE(StringRef(*bytes).contains(
      "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }"));
  for (const char *descr : {"|i1", "i1", "<i1"}) {
    SCOPED_TRACE(descr);
    std::string dict = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (2,), }";
    llvm::Expected<NpyArray> parsed =
        parseNpy(makeNpy(dict, StringRef("\x81\x7f", 2)), "c.npy");
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_EQ(parsed->elementType, ElementType::I8);
    EXPECT_EQ(parsed->i8()[0], -127);
    EXPECT_EQ(parsed->i8()[1], 127);
  }
}

// The block tables of paged caches: '<i4', as NumPy writes int32, with the
// ends of the range kept exactly.
TEST_F(NpyFileTest, RoundTripInt32) {
  NpyArray array = NpyArray::zeros(ElementType::I32, {2, 2});
  const int32_t values[] = {0, 7, -1, 2147483647};
  for (int64_t i = 0; i < 4; ++i)
    array.i32()[i] = values[i];
  expectRoundTrip(array, path("t.npy"));
  llvm::Expected<std::string> bytes = serializeNpy(array);
  ASSERT_TRUE(bool(bytes));
  EXPECT_TRUE(StringRef(*bytes).contains(
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"));
  llvm::Expected<NpyArray> parsed = parseNpy(
      makeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
              StringRef("\xfe\xff\xff\xff", 4)),
      "t.npy");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->elementType, ElementType::I32);
  EXPECT_EQ(parsed->i32()[0], -2);
}

TEST(NpyTest, WritesWhatNumpyWrites) {
  for (const char *file :
       {"causal/b_o.npy", "causal/x.npy", "padmask/mask.npy"}) {
    SCOPED_TRACE(file);
    std::string path = std::string(MHA_TEST_VECTORS_DIR "/") + file;
    auto original = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(original));
    llvm::Expected<NpyArray> array = readNpy(path);
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    llvm::Expected<std::string> bytes = serializeNpy(*array);
    ASSERT_TRUE(bool(bytes));
    EXPECT_EQ(*bytes, (*original)->getBuffer().str());
  }
}

TEST(NpyTest, SerializedHeaderSpellsShapes) {
  NpyArray vector = NpyArray::zeros(ElementType::F32, {5});
  llvm::Expected<std::string> bytes = serializeNpy(vector);
  ASSERT_TRUE(bool(bytes));
  EXPECT_TRUE(StringRef(*bytes).contains(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"));

  NpyArray scalar = NpyArray::zeros(ElementType::Bool, {});
  bytes = serializeNpy(scalar);
  ASSERT_TRUE(bool(bytes));
  EXPECT_TRUE(StringRef(*bytes).contains("'descr': '|b1'"));
  EXPECT_TRUE(StringRef(*bytes).contains("'shape': (), }"));
}

TEST(NpyTest, SerializeRejectsInconsistentArray) {
  NpyArray array = NpyArray::zeros(ElementType::F32, {2, 3});
  array.data.pop_back();
  EXPECT_TRUE(failedWith(serializeNpy(array, "out.npy"),
                         "out.npy: array data is 23 bytes, which does not "
                         "match shape [2, 3] of float32"));
}

TEST(NpyTest, FormatShape) {
  EXPECT_EQ(formatShape({2, 8, 4}), "[2, 8, 4]");
  EXPECT_EQ(formatShape({5}), "[5]");
  EXPECT_EQ(formatShape({}), "[]");
}

TEST(NpyTest, ReadsFilesWrittenByNumpy) {
  llvm::Expected<NpyArray> mask =
      readNpy(MHA_TEST_VECTORS_DIR "/masked_row/mask.npy");
  ASSERT_TRUE(bool(mask)) << llvm::toString(mask.takeError());
  EXPECT_EQ(mask->elementType, ElementType::Bool);
  EXPECT_EQ(mask->shape, (std::vector<int64_t>{1, 4, 4}));

  llvm::Expected<NpyArray> x = readNpy(MHA_TEST_VECTORS_DIR "/causal/x.npy");
  ASSERT_TRUE(bool(x)) << llvm::toString(x.takeError());
  EXPECT_EQ(x->elementType, ElementType::F32);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{2, 37, 64}));
}

TEST(NpyTest, ElementsStartOnACacheLine) {
  // Compiled code reads the arrays in place (a bf16 layer's AMX tiles read
  // x's rows as 64-byte lines), so every array's elements start on one:
  // read, rounded to bf16, and of sizes that malloc serves differently.
  llvm::Expected<NpyArray> x = readNpy(MHA_TEST_VECTORS_DIR "/causal/x.npy");
  ASSERT_TRUE(bool(x)) << llvm::toString(x.takeError());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x->data.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(toBF16Array(*x).data.data()) % 64, 0u);
  for (int64_t elements : {1, 3, 1000, 1 << 20}) {
    NpyArray array;
    array.shape = {elements};
    array.data.resize(elements * sizeof(float));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(array.data.data()) % 64, 0u)
        << elements << " elements";
  }
}

TEST(NpyTest, ParsesVersions2And3) {
  for (uint8_t major : {2, 3}) {
    SCOPED_TRACE(int(major));
    std::string bytes =
        makeNpy("{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}",
                floatBytes(4), major);
    llvm::Expected<NpyArray> array = parseNpy(bytes, "v.npy");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(array->f32()[3], 3.0f);
  }
}

TEST(NpyTest, ParsesHeaderVariants) {
  struct Case {
    const char *dict;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {"{'descr':'<f4','fortran_order':False,'shape':(3,)}", {3}},
      {"{ \"fortran_order\" : False , \"shape\" : ( 1 , 3 , ) , "
       "\"descr\" : \"<f4\" , }",
       {1, 3}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 7), }", {0, 7}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dict);
    int64_t count = 1;
    for (int64_t dim : c.shape)
      count *= dim;
    llvm::Expected<NpyArray> array =
        parseNpy(makeNpy(c.dict, floatBytes(count)), "h.npy");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    EXPECT_EQ(array->shape, c.shape);
    EXPECT_EQ(array->numElements(), count);
  }
}

TEST(NpyTest, AcceptsBoolSpellings) {
  for (const char *descr : {"|b1", "?"}) {
    SCOPED_TRACE(descr);
    std::string dict = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (2,), }";
    llvm::Expected<NpyArray> array =
        parseNpy(makeNpy(dict, StringRef("\1\0", 2)), "b.npy");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    EXPECT_EQ(array->elementType, ElementType::Bool);
    EXPECT_EQ(array->bools()[0], 1);
    EXPECT_EQ(array->bools()[1], 0);
  }
}

/// The header of a float32 array of `shape` (a Python tuple).
std::string f32Dict(StringRef shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape.str() +
         ", }";
}

TEST(NpyErrorTest, Truncated) {
  EXPECT_TRUE(failsWith("", "truncated .npy file: 0 bytes end inside the "
                            "magic string"));
  EXPECT_TRUE(failsWith("\x93NUM", "truncated"));
  EXPECT_TRUE(failsWith("\x93NUMPY\x01", "inside the format version"));
  EXPECT_TRUE(failsWith(StringRef("\x93NUMPY\x01\x00\x10", 9),
                        "inside the header length"));
  EXPECT_TRUE(failsWith(StringRef("\x93NUMPY\x02\x00\x10\x00\x00", 11),
                        "inside the header length"));
}

TEST(NpyErrorTest, BadMagic) {
  EXPECT_TRUE(failsWith("PK\x03\x04 this is a zip file",
                        "not a .npy file: expected the magic string "
                        "\"\\93NUMPY\", found \"PK\\03\\04 t\""));
  EXPECT_TRUE(failsWith("x", "not a .npy file"));
}

TEST(NpyErrorTest, UnsupportedVersion) {
  std::string bytes = makeNpy(f32Dict("(1,)"), floatBytes(1), 1);
  bytes[6] = 4;
  EXPECT_TRUE(failsWith(bytes, "unsupported .npy format version 4.0 "
                               "(supported: 1.0, 2.0, 3.0)"));
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_TRUE(failsWith(bytes, "unsupported .npy format version 1.1"));
}

TEST(NpyErrorTest, HeaderLongerThanFile) {
  std::string bytes = makeNpy(f32Dict("(1,)"), floatBytes(1), 2);
  llvm::support::endian::write32le(&bytes[8], 0xfffffff0u);
  EXPECT_TRUE(failsWith(bytes, "the .npy header is 4294967280 bytes, more "
                               "than the 1048576 bytes a header may take"));
  llvm::support::endian::write32le(&bytes[8], 5000);
  EXPECT_TRUE(failsWith(bytes, "truncated .npy file: the header is 5000 bytes "
                               "but only 120 bytes follow the preamble"));
  bytes = makeNpy(f32Dict("(1,)"), floatBytes(1), 1);
  llvm::support::endian::write16le(&bytes[8], 123);
  EXPECT_TRUE(failsWith(bytes, "the header is 123 bytes but only 122 bytes"));
}

TEST(NpyErrorTest, MalformedHeader) {
  const std::pair<const char *, const char *> cases[] = {
      {"", "expected '{' to start the header dict, found the end"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
       "expected ',' or '}' after the value of 'shape'"},
      {"{'descr' '<f4'}", "expected ':' after key 'descr'"},
      {"{descr: '<f4'}", "expected a quoted string"},
      {"{'descr': '<f4}", "expected a simple string closed by '"},
      {"{'descr': '<\\f4'}", "expected a simple string"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}",
       "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 1}",
       "expected '(' to start the shape tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",
       "expected ',' after the first dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
       "expected ',' after the first dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}",
       "expected a non-negative integer dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
       "expected only padding after the header dict"},
      {"{'descr': '<f4', 'fortran_order': False}",
       ".npy header has no 'shape' key"},
      {"{'descr': '<f4', 'descr': '<f4'}", "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}",
       "non-integer dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2e3,)}",
       "non-integer dimension"},
      {"{'descr': '<f4', 'fortran_order': False, "
       "'shape': (99999999999999999999,)}",
       "does not fit in 64 bits"},
  };
  for (auto [dict, message] : cases) {
    SCOPED_TRACE(dict);
    EXPECT_TRUE(failsWith(makeNpy(dict, floatBytes(1)), message));
  }
}

TEST(NpyErrorTest, BigEndianFloat) {
  EXPECT_TRUE(failsWith(
      makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
              floatBytes(1)),
      "unsupported dtype '>f4' (supported: '<f4' for float32, '|b1' for "
      "bool, '<i8' for int64, '|i1' for int8, '<i4' for int32)"));
}

TEST(NpyErrorTest, Float64) {
  EXPECT_TRUE(failsWith(
      makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
              floatBytes(2)),
      "unsupported dtype '<f8'"));
  EXPECT_TRUE(failsWith(
      makeNpy("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }",
              floatBytes(1)),
      "unsupported dtype '<u4'"));
}

TEST(NpyErrorTest, FortranOrder) {
  EXPECT_TRUE(failsWith(
      makeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
              floatBytes(4)),
      "Fortran-order arrays are not supported; save with "
      "np.ascontiguousarray"));
}

TEST(NpyErrorTest, ShapeOverflow) {
  EXPECT_TRUE(failsWith(makeNpy(f32Dict("(4611686018427387904, 4)"), ""),
                        "shape [4611686018427387904, 4] of float32 is too "
                        "large: its byte count overflows"));
  // The elements fit, their bytes do not.
  EXPECT_TRUE(
      failsWith(makeNpy(f32Dict("(4611686018427387904,)"), ""), "overflows"));
  // A zero dimension must not hide an overflowing product of the others.
  EXPECT_TRUE(failsWith(
      makeNpy(f32Dict("(0, 4611686018427387904, 4611686018427387904)"), ""),
      "overflows"));
}

// Refused from the header, before the data is looked at or copied.
TEST(NpyErrorTest, ShapeLargerThanMemory) {
  std::string limit = std::to_string(getMemoryLimit());
  EXPECT_TRUE(failsWith(makeNpy(f32Dict("(1048576, 1048576)"), floatBytes(1)),
                        "shape [1048576, 1048576] of float32 needs "
                        "4398046511104 bytes, more than the memory limit of " +
                            limit + " bytes (the physical memory)"));
}

TEST(NpyErrorTest, DataShort) {
  EXPECT_TRUE(failsWith(makeNpy(f32Dict("(2, 2)"), floatBytes(3)),
                        "data is 12 bytes but shape [2, 2] of float32 needs "
                        "16 bytes (file truncated)"));
}

TEST(NpyErrorTest, DataLong) {
  EXPECT_TRUE(failsWith(makeNpy(f32Dict("(2, 2)"), floatBytes(5)),
                        "data is longer than the 16 bytes shape [2, 2] of "
                        "float32 needs (trailing bytes)"));
}

TEST(NpyErrorTest, BoolByteOtherThanZeroOrOne) {
  EXPECT_TRUE(failsWith(
      makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
              StringRef("\1\0\2", 3)),
      "bool element 2 is the byte 2 (expected 0 or 1)"));
}

TEST_F(NpyFileTest, DirectoryPath) {
  EXPECT_TRUE(failedWith(readNpy(dir), "is a directory, expected a .npy file"));
}

TEST_F(NpyFileTest, MissingFile) {
  std::string missing = path("missing.npy");
  EXPECT_TRUE(
      failedWith(readNpy(missing), missing + ": cannot read .npy file: "));
}

// A device with no end is refused from its first bytes, not read whole.
TEST(NpyStreamTest, EndlessZerosAreNotNpy) {
  EXPECT_TRUE(failedWith(readNpy("/dev/zero"),
                         "/dev/zero: not a .npy file: expected the magic "
                         "string \"\\93NUMPY\", found "
                         "\"\\00\\00\\00\\00\\00\\00\""));
}

// The header and the data are read as the file goes, with no look at its
// size: a short or long file reads the same from a descriptor as from bytes.
TEST_F(NpyFileTest, FileDataShortAndLong) {
  auto write = [&](StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path("a.npy"), ec);
    EXPECT_FALSE(ec);
    os << bytes;
  };
  write(makeNpy(f32Dict("(2, 2)"), floatBytes(3)));
  EXPECT_TRUE(failedWith(readNpy(path("a.npy")),
                         "data is 12 bytes but shape [2, 2] of float32 needs "
                         "16 bytes (file truncated)"));
  write(makeNpy(f32Dict("(2, 2)"), floatBytes(4) + "x"));
  EXPECT_TRUE(failedWith(readNpy(path("a.npy")),
                         "data is longer than the 16 bytes shape [2, 2] of "
                         "float32 needs (trailing bytes)"));
  write(makeNpy(f32Dict("(2, 2)"), floatBytes(4)));
  llvm::Expected<NpyArray> array = readNpy(path("a.npy"));
  ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->f32()[3], 3.0f);
}

TEST_F(NpyFileTest, UnwritablePath) {
  NpyArray array = NpyArray::zeros(ElementType::F32, {1});
  std::string file = path("no/such/dir/a.npy");
  llvm::Error err = writeNpy(file, array);
  ASSERT_TRUE(bool(err));
  EXPECT_TRUE(StringRef(llvm::toString(std::move(err)))
                  .starts_with(file + ": cannot open for writing"));
}

TEST_F(NpyFileTest, ReadErrorsNameThePath) {
  std::string file = path("bad.npy");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec);
    os << "not numpy";
  }
  EXPECT_TRUE(failedWith(readNpy(file), file + ": not a .npy file"));
}

} // namespace
