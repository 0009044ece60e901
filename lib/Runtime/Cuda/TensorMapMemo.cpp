//===- TensorMapMemo.cpp - recent device TMA maps by call arguments -------===//

#include "conv3d/Runtime/TensorMapMemo.h"

#include "llvm/Support/xxhash.h"

#include <algorithm>

using namespace mlir::conv3d;

uint64_t TensorMapMemo::hashOf(llvm::ArrayRef<int64_t> words) {
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(words.data()),
                                words.size() * sizeof(int64_t));
  return llvm::xxh3_64bits(bytes);
}

size_t TensorMapMemo::setOf(llvm::ArrayRef<int64_t> words) {
  return hashOf(words) % kSets;
}

bool TensorMapMemo::holds(const Entry &entry, llvm::ArrayRef<int64_t> words,
                          uint64_t hash) {
  return entry.map && entry.hash == hash && entry.count == words.size() &&
         std::equal(words.begin(), words.end(), entry.words.begin());
}

void *TensorMapMemo::lookup(llvm::ArrayRef<int64_t> words,
                            uint64_t epoch) const {
  if (words.size() > kMaxWords)
    return nullptr;
  uint64_t hash = hashOf(words);
  const Entry *set = &entries[(hash % kSets) * kWays];
  for (size_t way = 0; way < kWays; ++way)
    if (holds(set[way], words, hash))
      return set[way].epoch == epoch ? set[way].map : nullptr;
  return nullptr;
}

void TensorMapMemo::remember(llvm::ArrayRef<int64_t> words, uint64_t epoch,
                             void *map) {
  if (!map || words.size() > kMaxWords)
    return;
  uint64_t hash = hashOf(words);
  size_t index = hash % kSets;
  Entry *set = &entries[index * kWays];
  Entry *slot = nullptr;
  for (size_t way = 0; way < kWays && !slot; ++way)
    if (holds(set[way], words, hash))
      slot = &set[way];
  for (size_t way = 0; way < kWays && !slot; ++way)
    if (!set[way].map || set[way].epoch != epoch)
      slot = &set[way];
  if (!slot) {
    slot = &set[nextVictim[index]];
    nextVictim[index] = uint8_t((nextVictim[index] + 1) % kWays);
  }
  slot->map = map;
  slot->epoch = epoch;
  slot->hash = hash;
  slot->count = words.size();
  std::copy(words.begin(), words.end(), slot->words.begin());
}
