//===- KernelCache.cpp - compiled convolutions kept across processes ------===//

#include "conv3d/Runtime/KernelCache.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::conv3d;

/// Bumped whenever the entry format or what an entry holds changes.
static constexpr llvm::StringLiteral kFormatTag = "conv3d-mlir cache v2\n";

/// Entries larger than this are not read (a lowered module with its cubin
/// is a few MB): a link to a device or a huge file is a miss, not an
/// unbounded read.
static constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

/// How entries and the temporaries they are written to are named.
static constexpr llvm::StringLiteral kEntrySuffix = ".mlirbc";
static constexpr llvm::StringLiteral kTemporaryPrefix = "tmp-";

/// A temporary older than this was abandoned by a process that died while
/// writing it (writing takes milliseconds); eviction deletes it.
static constexpr std::chrono::hours kAbandonedTemporaryAge(1);

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
  if (std::optional<std::string> maxMB = env("CONV3D_CACHE_MAX_MB");
      maxMB && !maxMB->empty()) {
    if (llvm::Expected<uint64_t> bytes = parseCacheMaxMB(*maxMB))
      options.maxBytes = *bytes;
    else
      options.warning = llvm::toString(bytes.takeError()) + "; using " +
                        std::to_string(CacheOptions::kDefaultMaxBytes >> 20) +
                        " MiB";
  }
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

llvm::Expected<uint64_t> mlir::conv3d::parseCacheMaxMB(llvm::StringRef text) {
  uint64_t mebibytes = 0;
  if (text.trim().getAsInteger(10, mebibytes) || mebibytes > (UINT64_MAX >> 20))
    return llvm::createStringError(
        "CONV3D_CACHE_MAX_MB: expected a number of MiB (0: no limit), got '" +
        text.str() + "'");
  return mebibytes << 20;
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

/// The GNU build ID of the loaded object whose segments hold `address`, in
/// hex; "" when it has none.
static std::string buildIdOf(const void *address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto &search = *static_cast<Search *>(data);
        auto segments = llvm::ArrayRef(info->dlpi_phdr, info->dlpi_phnum);
        bool holds = llvm::any_of(segments, [&](const ElfW(Phdr) & segment) {
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          return segment.p_type == PT_LOAD && search.address >= start &&
                 search.address - start < segment.p_memsz;
        });
        if (!holds)
          return 0;
        for (const ElfW(Phdr) & segment : segments) {
          if (segment.p_type != PT_NOTE)
            continue;
          const char *note =
              reinterpret_cast<const char *>(info->dlpi_addr + segment.p_vaddr);
          const char *end = note + segment.p_memsz;
          while (end - note >= ptrdiff_t(sizeof(ElfW(Nhdr)))) {
            const auto *header = reinterpret_cast<const ElfW(Nhdr) *>(note);
            const char *name = note + sizeof(ElfW(Nhdr));
            const char *desc = name + llvm::alignTo(header->n_namesz, 4);
            const char *next = desc + llvm::alignTo(header->n_descsz, 4);
            if (next > end)
              break;
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              search.id = llvm::toHex(llvm::StringRef(desc, header->n_descsz),
                                      /*LowerCase=*/true);
              return 1;
            }
            note = next;
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

llvm::StringRef mlir::conv3d::compilerIdentity() {
  static const std::string identity = [] {
    std::string text = "llvm " LLVM_VERSION_STRING "\n";
    // The library (or executable) holding this code. Its build ID, which the
    // linker derives from everything it links, survives what installing and
    // staging do to the file (RPATH rewriting, stripping): a configuration
    // tuned through one copy of a build (the Python package's) is found
    // through another (conv3d-run's). Without one, the file's bytes.
    auto *self = reinterpret_cast<void *>(&compilerIdentity);
    if (std::string id = buildIdOf(self); !id.empty()) {
      text += "build-id " + id + "\n";
    } else if (Dl_info info; dladdr(self, &info) && info.dli_fname) {
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
  return hashHex(keyText) + kEntrySuffix.str();
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
  // link to a device would be read without end. The status before opening
  // keeps devices from being opened at all; the one of the open file (opened
  // without blocking) decides, whatever replaced the name in between.
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status) || !llvm::sys::fs::exists(status))
    return std::nullopt;
  if (!llvm::sys::fs::is_regular_file(status))
    return reject("not a regular file");
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    // Deleted meanwhile (another process evicted it): a plain miss.
    if (errno == ENOENT)
      return std::nullopt;
    return reject(std::string("unreadable: ") + std::strerror(errno));
  }
  llvm::scope_exit closeFile([fd] { ::close(fd); });
  struct stat openStatus;
  if (::fstat(fd, &openStatus) != 0 || !S_ISREG(openStatus.st_mode))
    return reject("not a regular file");
  if (uint64_t(openStatus.st_size) > kMaxEntryBytes)
    return reject("larger than " + std::to_string(kMaxEntryBytes) + " bytes");
  // Read, not mapped: a file truncated under a mapping would fault.
  auto buffer = llvm::MemoryBuffer::getOpenFile(
      fd, path, openStatus.st_size, /*RequiresNullTerminator=*/false,
      /*IsVolatile=*/true);
  if (!buffer)
    return reject("unreadable: " + buffer.getError().message());
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
  // Mark the entry used for eviction; a directory shared read-only is fine.
  (void)::futimens(fd, nullptr);
  return payload.str();
}

llvm::Error DiskCache::store(llvm::StringRef keyText,
                             llvm::StringRef payload) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return llvm::createStringError(ec, "cannot create the cache directory " +
                                           directory + ": " + ec.message());
  llvm::SmallString<256> model(directory);
  llvm::sys::path::append(model, kTemporaryPrefix + "%%%%%%%%%%%%");
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
  evict(llvm::sys::path::filename(path));
  return llvm::Error::success();
}

unsigned DiskCache::evict(llvm::StringRef keep) const {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    bool isEntry = name.ends_with(kEntrySuffix);
    bool isTemporary = name.starts_with(kTemporaryPrefix);
    // Files of other programs are never touched, nor links.
    llvm::sys::fs::file_status status;
    if ((!isEntry && !isTemporary) ||
        llvm::sys::fs::status(it->path(), status, /*Follow=*/false) ||
        !llvm::sys::fs::is_regular_file(status))
      continue; // includes entries deleted meanwhile
    if (isTemporary) {
      if (now - status.getLastModificationTime() > kAbandonedTemporaryAge)
        (void)llvm::sys::fs::remove(it->path());
      continue;
    }
    total += status.getSize();
    if (name != keep)
      entries.push_back(
          {it->path(), status.getSize(), status.getLastModificationTime()});
  }
  if (maxBytes == 0 || total <= maxBytes)
    return 0;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  unsigned evicted = 0;
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    // Another process may have deleted it already: gone either way.
    std::error_code removeError = llvm::sys::fs::remove(entry.path);
    total -= entry.size;
    evicted += !removeError;
  }
  return evicted;
}
