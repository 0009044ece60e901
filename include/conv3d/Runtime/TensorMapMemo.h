//===- TensorMapMemo.h - recent device TMA maps by arguments --*- C++ -*-===//
//-*-===//
//
// Lowered host code asks for the same TMA descriptors on every launch of a
// convolution whose buffers have not moved. CudaDriver finds a map by its
// encoding parameters (building them and the cache key, under its lock);
// this memo answers a repeated request from the raw arguments of the
// runtime call that made it, before any of that: a fixed table of recent
// answers, one per calling thread (no lock), checked against the driver's
// tensor map epoch, which changes whenever a generation of map slots is
// reused (TensorMapSlots), so a remembered map is one the driver would
// still return. Only maps whose upload is known complete are remembered: a
// kernel on any stream may read them without waiting. Policy only, no
// driver: unit-tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_TENSORMAPMEMO_H
#define CONV3D_RUNTIME_TENSORMAPMEMO_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace mlir::conv3d {

class TensorMapMemo {
public:
  /// The most argument words a request may have (longer ones are never
  /// remembered).
  static constexpr size_t kMaxWords = 24;
  /// Remembered requests: a direct-mapped table, a newer request replacing
  /// an older one in its entry.
  static constexpr size_t kEntries = 64;

  /// The map remembered for `words` under `epoch`, or null.
  void *lookup(llvm::ArrayRef<int64_t> words, uint64_t epoch) const;
  /// Remembers `map` (not null) as the answer to `words` under `epoch`.
  void remember(llvm::ArrayRef<int64_t> words, uint64_t epoch, void *map);

private:
  struct Entry {
    void *map = nullptr; ///< null: empty
    uint64_t epoch = 0;
    size_t count = 0;
    std::array<int64_t, kMaxWords> words{};
  };
  static size_t indexOf(llvm::ArrayRef<int64_t> words);
  std::array<Entry, kEntries> entries{};
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_TENSORMAPMEMO_H
