//===- TensorMapMemo.cpp - recent device TMA maps by call arguments -------===//

#include "conv3d/Runtime/TensorMapMemo.h"

#include "llvm/Support/xxhash.h"

#include <algorithm>

using namespace mlir::conv3d;

size_t TensorMapMemo::indexOf(llvm::ArrayRef<int64_t> words) {
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(words.data()),
                                words.size() * sizeof(int64_t));
  return llvm::xxh3_64bits(bytes) % kEntries;
}

void *TensorMapMemo::lookup(llvm::ArrayRef<int64_t> words,
                            uint64_t epoch) const {
  if (words.size() > kMaxWords)
    return nullptr;
  const Entry &entry = entries[indexOf(words)];
  if (!entry.map || entry.epoch != epoch || entry.count != words.size() ||
      !std::equal(words.begin(), words.end(), entry.words.begin()))
    return nullptr;
  return entry.map;
}

void TensorMapMemo::remember(llvm::ArrayRef<int64_t> words, uint64_t epoch,
                             void *map) {
  if (!map || words.size() > kMaxWords)
    return;
  Entry &entry = entries[indexOf(words)];
  entry.map = map;
  entry.epoch = epoch;
  entry.count = words.size();
  std::copy(words.begin(), words.end(), entry.words.begin());
}
