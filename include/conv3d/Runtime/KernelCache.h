//===- KernelCache.h - compiled convolutions kept across processes -*- C++
//-*-===//
//
// The engine keeps every compiled convolution in memory (per Engine) and, as
// the fully lowered module (LLVM dialect with the device binaries embedded)
// in MLIR bytecode, on disk. A process that finds its convolution on disk
// skips the conv3d pipeline and ptxas; only the host code is JIT-compiled.
//
// Entries are keyed by a hash of everything the lowered module depends on:
// the spec, every compile option, the GPU chip and toolkit, and the
// compiler's own identity (a hash of the library's code and the LLVM
// version), so a rebuilt compiler never reads a stale entry. Each file also
// stores the full key text, which is compared on load, so a hash collision
// is a miss, not a wrong kernel. Files are written to a unique temporary and
// renamed into place: concurrent processes never see a partial entry.
//
// The directory is bounded ($CONV3D_CACHE_MAX_MB, default 1 GiB): after each
// store the least recently used entries are deleted until the rest fit. A
// hit marks its entry used by setting the file's modification time, so
// recency is shared by every process using the directory (access times are
// unreliable: relatime, noatime). Several processes may evict at once; an
// entry that vanishes under a reader is a plain miss.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_KERNELCACHE_H
#define CONV3D_RUNTIME_KERNELCACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::conv3d {

/// Where the engine caches compiled convolutions.
struct CacheOptions {
  /// The default bound of the disk cache directory: 1 GiB.
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;

  /// Directory of the disk cache; empty: no disk cache.
  std::string directory;
  /// The most bytes the directory's entries may take; the least recently
  /// used are evicted beyond it. 0: no bound.
  uint64_t maxBytes = kDefaultMaxBytes;
  /// Keep compiled convolutions in memory, per engine, for repeated
  /// compile() calls with the same spec and options.
  bool inMemory = true;
  /// Set by fromEnvironment() when a variable's value was not understood
  /// (and the default used instead); tools print it.
  std::string warning;

  /// The default: $CONV3D_CACHE_DIR when set (empty or "off" disables the
  /// disk cache), else $XDG_CACHE_HOME/conv3d-mlir, else
  /// $HOME/.cache/conv3d-mlir; no disk cache when none of them is set.
  /// The bound is $CONV3D_CACHE_MAX_MB mebibytes (0: none) when set.
  static CacheOptions fromEnvironment();
};

/// Parses a $CONV3D_CACHE_MAX_MB value (a non-negative number of MiB, 0 for
/// no bound) into bytes.
llvm::Expected<uint64_t> parseCacheMaxMB(llvm::StringRef text);

/// Where a compiled convolution came from.
enum class CacheSource { Compiled, Memory, Disk };
llvm::StringRef stringifyCacheSource(CacheSource source);

/// A hash of the compiler itself: the LLVM version and the library this
/// function is in (its GNU build ID, else its bytes), so that copies of one
/// build (installed with a rewritten RPATH, stripped) share cache entries.
/// Computed once per process.
llvm::StringRef compilerIdentity();

/// Identity of a file the compilation runs (ptxas): path, size and
/// modification time; "missing" when it does not exist.
std::string fileIdentity(llvm::StringRef path);

/// The disk half of the cache: one file per key in one directory.
class DiskCache {
public:
  explicit DiskCache(std::string directory,
                     uint64_t maxBytes = CacheOptions::kDefaultMaxBytes)
      : directory(std::move(directory)), maxBytes(maxBytes) {}

  /// The file name of an entry: a 128-bit hash of `keyText`, in hex.
  static std::string entryName(llvm::StringRef keyText);
  std::string pathFor(llvm::StringRef keyText) const;

  /// The payload stored under `keyText`, or none: no entry, one written for
  /// a different key, or one that cannot be trusted (not a regular file,
  /// over 1 GiB, truncated, another format, or a checksum that does not
  /// match its key and payload); for the last kind `warning` (if given)
  /// names the file and why it was ignored. A hit marks the entry as
  /// recently used.
  std::optional<std::string> load(llvm::StringRef keyText,
                                  std::string *warning = nullptr) const;

  /// Stores `payload` under `keyText`, creating the directory if needed,
  /// then evicts least recently used entries beyond the bound.
  llvm::Error store(llvm::StringRef keyText, llvm::StringRef payload) const;

  /// Deletes the least recently used entries (never `keep`, a file name)
  /// until the directory's entries take at most the bound, and temporaries
  /// abandoned by processes that died while writing. Entries that other
  /// processes delete meanwhile are skipped. Returns how many entries were
  /// deleted.
  unsigned evict(llvm::StringRef keep = {}) const;

  llvm::StringRef getDirectory() const { return directory; }
  uint64_t getMaxBytes() const { return maxBytes; }

private:
  std::string directory;
  uint64_t maxBytes;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_KERNELCACHE_H
