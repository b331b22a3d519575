//===- NpyHeader.cpp - The header dict of a .npy file ---------------------===//

#include "runtime/NpyHeader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using llvm::StringRef;

namespace mha::runtime::npy {

llvm::Error makeError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(name + ": " + message);
}

std::string quoteBytes(StringRef bytes, size_t limit) {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << '"';
  llvm::printEscapedString(bytes.take_front(limit), os);
  os << (bytes.size() > limit ? "...\"" : "\"");
  return result;
}

namespace {
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

std::optional<ElementType> parseDescr(StringRef descr) {
  if (descr == "<f4")
    return ElementType::F32;
  if (descr == "<i8")
    return ElementType::I64;
  if (descr == "<i4")
    return ElementType::I32;
  // numpy writes '|i1' for int8; 'i1' and '<i1' are other spellings.
  if (descr == "|i1" || descr == "i1" || descr == "<i1")
    return ElementType::I8;
  // numpy writes '|b1'; '?' and '|?' are the other spellings of bool.
  if (descr == "|b1" || descr == "?" || descr == "|?")
    return ElementType::Bool;
  return std::nullopt;
}

llvm::Error parseHeader(StringRef text, StringRef name, NpyHeader &header) {
  return HeaderParser(text, name).parse(header);
}

} // namespace mha::runtime::npy
