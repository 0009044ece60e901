//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//
//
// Format: the magic "\x93NUMPY", a major and a minor version byte, a
// little-endian header length (2 bytes in 1.0, 4 bytes in 2.0 and 3.0), and
// an ASCII header holding a Python dict literal with exactly the keys
// 'descr', 'fortran_order' and 'shape', padded with spaces and a newline so
// that the data starts at a multiple of 64 bytes. The raw data follows.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <optional>

using namespace mlir::conv3d;
using llvm::StringRef;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

static llvm::Error makeError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "': " + message);
}

namespace {
/// The fields of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser for the header's dict literal. It accepts the
/// spellings NumPy writes (single or double quotes, any spacing, trailing
/// commas) and nothing more general.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  /// Parses the dict; on failure returns a description of the problem.
  std::optional<std::string> parse(NpyHeader &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return std::string("header is not a dict literal");
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return std::string("expected a quoted key in the header");
      if (!consume(':'))
        return "expected ':' after '" + key + "'";
      if (key == "descr") {
        if (!parseString(header.descr))
          return std::string("'descr' must be a string");
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (consumeWord("False"))
          header.fortranOrder = false;
        else
          return std::string("'fortran_order' must be True or False");
        seenOrder = true;
      } else if (key == "shape") {
        if (!parseShape(header.shape))
          return std::string("'shape' must be a tuple of non-negative "
                             "integers");
        seenShape = true;
      } else {
        return "unexpected header key '" + key + "'";
      }
      // Entries are separated by commas; one may trail before the '}'.
      if (!consume(',')) {
        if (!consume('}'))
          return std::string("expected ',' or '}' in the header");
        break;
      }
    }
    skipSpace();
    if (!rest.empty())
      return std::string("unexpected text after the header dict");
    if (!seenDescr || !seenOrder || !seenShape)
      return std::string("header lacks one of 'descr', 'fortran_order', "
                         "'shape'");
    return std::nullopt;
  }

private:
  void skipSpace() { rest = rest.ltrim(" \t\r\n"); }
  bool consume(char c) {
    skipSpace();
    return rest.consume_front(StringRef(&c, 1));
  }
  bool consumeWord(StringRef word) {
    skipSpace();
    return rest.consume_front(word);
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return false;
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return false;
    out = rest.substr(1, end - 1).str();
    rest = rest.drop_front(end + 1);
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return false;
    while (!consume(')')) {
      skipSpace();
      size_t digits = 0;
      while (digits < rest.size() && llvm::isDigit(rest[digits]))
        ++digits;
      int64_t size;
      if (digits == 0 || rest.take_front(digits).getAsInteger(10, size))
        return false;
      rest = rest.drop_front(digits);
      shape.push_back(size);
      if (!consume(',')) {
        // Only a 1-tuple needs the trailing comma; NumPy always writes it.
        return consume(')');
      }
    }
    return true;
  }

  StringRef rest;
};
} // namespace

/// The header of the .npy file `file` (read from `path`) and the offset of
/// its data.
static llvm::Expected<std::pair<NpyHeader, size_t>>
parseFileHeader(StringRef path, StringRef file) {
  if (file.size() < kMagicSize + 2 || !file.starts_with(StringRef(kMagic, 6)))
    return makeError(path, "not a .npy file (bad magic string)");
  uint8_t major = file[6], minor = file[7];
  size_t lengthBytes;
  if (major == 1)
    lengthBytes = 2;
  else if (major == 2 || major == 3)
    lengthBytes = 4;
  else
    return makeError(path, llvm::formatv("unsupported .npy version {0}.{1}",
                                         unsigned(major), unsigned(minor)));
  size_t prefix = kMagicSize + 2 + lengthBytes;
  if (file.size() < prefix)
    return makeError(path, "truncated .npy header");
  const char *lengthPtr = file.data() + kMagicSize + 2;
  size_t headerLength =
      lengthBytes == 2
          ? llvm::support::endian::read16le(lengthPtr)
          : static_cast<size_t>(llvm::support::endian::read32le(lengthPtr));
  if (file.size() - prefix < headerLength)
    return makeError(path, "truncated .npy header");

  NpyHeader header;
  if (auto problem =
          HeaderParser(file.substr(prefix, headerLength)).parse(header))
    return makeError(path, "malformed .npy header: " + *problem);
  if (header.fortranOrder)
    return makeError(path, "Fortran-order (column-major) arrays are not "
                           "supported; save a C-order array "
                           "(numpy.ascontiguousarray)");
  return std::pair{std::move(header), prefix + headerLength};
}

static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
openNpy(StringRef path) {
  auto bufferOr = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!bufferOr)
    return makeError(path, "cannot open: " + bufferOr.getError().message());
  return std::move(*bufferOr);
}

llvm::Expected<std::vector<int64_t>>
mlir::conv3d::readNpyShape(StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = openNpy(path);
  if (!buffer)
    return buffer.takeError();
  auto parsed = parseFileHeader(path, (*buffer)->getBuffer());
  if (!parsed)
    return parsed.takeError();
  return std::move(parsed->first.shape);
}

llvm::Expected<HostTensor> mlir::conv3d::readNpy(StringRef path,
                                                 ElementType target) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = openNpy(path);
  if (!buffer)
    return buffer.takeError();
  StringRef file = (*buffer)->getBuffer();
  auto parsed = parseFileHeader(path, file);
  if (!parsed)
    return parsed.takeError();
  auto &[header, dataOffset] = *parsed;
  size_t itemSize;
  if (header.descr == "<f4")
    itemSize = 4;
  else if (header.descr == "<f8")
    itemSize = 8;
  else
    return makeError(path, "unsupported dtype '" + header.descr +
                               "' (expected little-endian float32 '<f4' or "
                               "float64 '<f8')");

  // Check the size before allocating; a corrupt shape must not overflow.
  uint64_t count = 1;
  for (int64_t size : header.shape) {
    if (size != 0 && count > (uint64_t(1) << 60) / uint64_t(size))
      return makeError(path, "shape in the header is too large");
    count *= uint64_t(size);
  }
  uint64_t dataBytes = count * itemSize;
  uint64_t available = file.size() - dataOffset;
  if (available != dataBytes)
    return makeError(path, llvm::formatv("{0}: expected {1} data bytes for "
                                         "{2} elements, found {3}",
                                         available < dataBytes
                                             ? "truncated data"
                                             : "trailing bytes after the data",
                                         dataBytes, count, available));

  HostTensor tensor = HostTensor::zeros(target, header.shape);
  const char *data = file.data() + dataOffset;
  for (uint64_t i = 0; i < count; ++i) {
    double value;
    if (itemSize == 4) {
      uint32_t bits = llvm::support::endian::read32le(data + 4 * i);
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      value = f;
    } else {
      uint64_t bits = llvm::support::endian::read64le(data + 8 * i);
      std::memcpy(&value, &bits, sizeof(value));
    }
    tensor.set(int64_t(i), value); // the only rounding step
  }
  return tensor;
}

/// The header dict NumPy itself writes, padded so that the data is 64-byte
/// aligned.
static std::string makeHeader(const std::vector<int64_t> &shape,
                              size_t prefixSize) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    dict += ","; // a Python 1-tuple
  dict += "), }";
  size_t total = prefixSize + dict.size() + 1; // + '\n'
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  return dict;
}

llvm::Error mlir::conv3d::writeNpyF32(StringRef path,
                                      const std::vector<int64_t> &shape,
                                      const std::vector<float> &values) {
  for (int64_t size : shape)
    if (size < 0)
      return makeError(path, "negative dimension size in shape");
  if (uint64_t(numElementsOf(shape)) != values.size())
    return makeError(path, llvm::formatv("shape has {0} elements but {1} "
                                         "values were given",
                                         numElementsOf(shape), values.size()));

  // Version 1.0 unless the header does not fit its 16-bit length.
  std::string header = makeHeader(shape, kMagicSize + 4);
  uint8_t major = 1;
  if (header.size() > 0xFFFF) {
    major = 2;
    header = makeHeader(shape, kMagicSize + 6);
  }

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError(path, "cannot open for writing: " + ec.message());
  os.write(kMagic, kMagicSize);
  os << char(major) << char(0);
  char length[4];
  if (major == 1) {
    llvm::support::endian::write16le(length, uint16_t(header.size()));
    os.write(length, 2);
  } else {
    llvm::support::endian::write32le(length, uint32_t(header.size()));
    os.write(length, 4);
  }
  os << header;
  for (float value : values) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    char word[4];
    llvm::support::endian::write32le(word, bits);
    os.write(word, 4);
  }
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return makeError(path, "write failed: " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error mlir::conv3d::writeNpyF32(StringRef path,
                                      const HostTensor &tensor) {
  std::vector<float> values(static_cast<size_t>(tensor.numElements()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(tensor.get(int64_t(i)));
  return writeNpyF32(path, tensor.shape, values);
}
