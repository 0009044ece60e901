//===- TensorMapMemo.h - recent device TMA maps by arguments --*- C++ -*-===//
//-*-===//
//
// Lowered host code asks for the same TMA descriptors on every launch of a
// convolution whose buffers have not moved. CudaDriver finds a map by its
// encoding parameters (building them and the cache key, under its lock);
// this memo answers a repeated request from the raw arguments of the
// runtime call that made it, before any of that: a fixed set-associative
// table of recent answers, one per calling thread (no lock), checked
// against the driver's
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
  /// Remembered requests: sets of kWays entries, a request's set chosen by
  /// a hash of its words. Set-associative, so that the few maps of a
  /// convolution (three on sm90) or of a network's convolutions never evict
  /// each other by sharing a slot, as in a direct-mapped table, where
  /// whether they do depends on the buffers' addresses.
  static constexpr size_t kWays = 4;
  static constexpr size_t kSets = 64;
  static constexpr size_t kEntries = kSets * kWays;

  /// The map remembered for `words` under `epoch`, or null.
  void *lookup(llvm::ArrayRef<int64_t> words, uint64_t epoch) const;
  /// Remembers `map` (not null) as the answer to `words` under `epoch`:
  /// in the entry that holds `words` already, else a free or outdated one
  /// of its set, else in place of the set's oldest.
  void remember(llvm::ArrayRef<int64_t> words, uint64_t epoch, void *map);
  /// The set `words` belong to (for tests).
  static size_t setOf(llvm::ArrayRef<int64_t> words);

private:
  struct Entry {
    void *map = nullptr; ///< null: empty
    uint64_t epoch = 0;
    uint64_t hash = 0;
    size_t count = 0;
    std::array<int64_t, kMaxWords> words{};
  };
  static uint64_t hashOf(llvm::ArrayRef<int64_t> words);
  static bool holds(const Entry &entry, llvm::ArrayRef<int64_t> words,
                    uint64_t hash);
  std::array<Entry, kEntries> entries{};
  /// Per set, the way remember() replaces next when the set is full.
  std::array<uint8_t, kSets> nextVictim{};
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_TENSORMAPMEMO_H
