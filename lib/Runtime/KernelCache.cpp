//===- KernelCache.cpp - compiled convolutions kept across processes ------===//

#include "conv3d/Runtime/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace mlir::conv3d;

/// Bumped whenever the entry format or what an entry holds changes.
static constexpr llvm::StringLiteral kFormatTag = "conv3d-mlir cache v2\n";

/// Entries larger than this are not read (a lowered module with its cubin
/// is a few MB): a link to a device or a huge file is a miss, not an
/// unbounded read.
static constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

/// The checksum of an entry: xxh3 over its key text and payload.
static std::string entryChecksum(llvm::StringRef keyText,
                                 llvm::StringRef payload) {
  std::string text = (keyText + llvm::StringRef("\0", 1) + payload).str();
  return llvm::formatv(
             "{0:x-16}",
             llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                 text.data() ? reinterpret_cast<const uint8_t *>(text.data())
                             : nullptr,
                 text.size())))
      .str();
}

static std::string hashHex(llvm::StringRef bytes) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(bytes.bytes_begin(), bytes.size()));
  return llvm::formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

CacheOptions CacheOptions::fromEnvironment() {
  CacheOptions options;
  auto env = [](const char *name) -> std::optional<std::string> {
    if (const char *value = std::getenv(name))
      return std::string(value);
    return std::nullopt;
  };
  if (std::optional<std::string> dir = env("CONV3D_CACHE_DIR")) {
    if (*dir != "off")
      options.directory = *dir;
    return options;
  }
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg = env("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    llvm::sys::path::append(path, *xdg, "conv3d-mlir");
  else if (std::optional<std::string> home = env("HOME");
           home && !home->empty())
    llvm::sys::path::append(path, *home, ".cache", "conv3d-mlir");
  options.directory = std::string(path);
  return options;
}

llvm::StringRef mlir::conv3d::stringifyCacheSource(CacheSource source) {
  switch (source) {
  case CacheSource::Compiled:
    return "compiled";
  case CacheSource::Memory:
    return "memory cache";
  case CacheSource::Disk:
    return "disk cache";
  }
  return "unknown";
}

llvm::StringRef mlir::conv3d::compilerIdentity() {
  static const std::string identity = [] {
    std::string text = "llvm " LLVM_VERSION_STRING "\n";
    // The library (or executable) holding this code: its bytes change with
    // every change to the compiler.
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&compilerIdentity), &info) &&
        info.dli_fname) {
      if (auto buffer = llvm::MemoryBuffer::getFile(info.dli_fname))
        text += "code " + hashHex((*buffer)->getBuffer()) + "\n";
      else
        text += std::string("code path ") + info.dli_fname + "\n";
    }
    return hashHex(text);
  }();
  return identity;
}

std::string mlir::conv3d::fileIdentity(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status) || !llvm::sys::fs::exists(status))
    return (path + " missing").str();
  return llvm::formatv(
             "{0} size={1} mtime={2}", path, status.getSize(),
             status.getLastModificationTime().time_since_epoch().count())
      .str();
}

std::string DiskCache::entryName(llvm::StringRef keyText) {
  return hashHex(keyText) + ".mlirbc";
}

std::string DiskCache::pathFor(llvm::StringRef keyText) const {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, entryName(keyText));
  return std::string(path);
}

// An entry: the format tag, the key text's length in decimal and a newline,
// the key text, the checksum of key and payload (16 hex digits) and a
// newline, then the payload.
std::optional<std::string> DiskCache::load(llvm::StringRef keyText,
                                           std::string *warning) const {
  std::string path = pathFor(keyText);
  auto reject = [&](llvm::StringRef why) -> std::optional<std::string> {
    if (warning)
      *warning = ("ignoring cache entry " + path + ": " + why).str();
    return std::nullopt;
  };
  // Only regular files of bounded size are read: a FIFO would block, a
  // link to a device would be read without end.
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status) || !llvm::sys::fs::exists(status))
    return std::nullopt;
  if (!llvm::sys::fs::is_regular_file(status))
    return reject("not a regular file");
  if (status.getSize() > kMaxEntryBytes)
    return reject("larger than " + std::to_string(kMaxEntryBytes) + " bytes");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return reject("unreadable");
  llvm::StringRef rest = (*buffer)->getBuffer();
  if (!rest.consume_front(kFormatTag))
    return reject("not an entry of this format");
  auto [lengthText, afterLength] = rest.split('\n');
  size_t length = 0;
  if (lengthText.getAsInteger(10, length) || afterLength.size() < length)
    return reject("truncated");
  // Another key's entry under this name is a hash collision: a plain miss.
  if (afterLength.take_front(length) != keyText)
    return std::nullopt;
  auto [checksum, payload] = afterLength.drop_front(length).split('\n');
  if (checksum != entryChecksum(keyText, payload))
    return reject("checksum mismatch (damaged)");
  return payload.str();
}

llvm::Error DiskCache::store(llvm::StringRef keyText,
                             llvm::StringRef payload) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return llvm::createStringError(ec, "cannot create the cache directory " +
                                           directory + ": " + ec.message());
  llvm::SmallString<256> model(directory);
  llvm::sys::path::append(model, "tmp-%%%%%%%%%%%%");
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, temporary))
    return llvm::createStringError(ec, "cannot write to the cache directory " +
                                           directory + ": " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << kFormatTag << keyText.size() << "\n"
       << keyText << entryChecksum(keyText, payload) << "\n"
       << payload;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError(ec, "cannot write " + temporary.str() +
                                             ": " + ec.message());
    }
  }
  // rename() replaces atomically: readers see the old entry or the new one.
  std::string path = pathFor(keyText);
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(ec, "cannot store " + path + ": " +
                                           ec.message());
  }
  return llvm::Error::success();
}
