//===- TensorMapSlots.cpp - bounded bookkeeping of device TMA maps --------===//

#include "conv3d/Runtime/TensorMapSlots.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir::conv3d;

TensorMapSlots::TensorMapSlots(size_t perGeneration)
    : perGeneration(std::max<size_t>(1, perGeneration)),
      keysOfSlot(2 * this->perGeneration) {}

std::optional<size_t> TensorMapSlots::lookup(llvm::StringRef key) const {
  auto it = keys.find(key);
  if (it == keys.end())
    return std::nullopt;
  return it->second;
}

void TensorMapSlots::alias(llvm::StringRef key, size_t slot) {
  auto [it, inserted] = keys.try_emplace(key, slot);
  if (!inserted) {
    if (it->second == slot)
      return;
    std::vector<std::string> &old = keysOfSlot[it->second];
    llvm::erase(old, key.str());
    it->second = slot;
  }
  keysOfSlot[slot].push_back(key.str());
}

TensorMapSlots::Allocation TensorMapSlots::allocate() {
  Allocation allocation{0, false};
  if (used == perGeneration) {
    // Retire the full generation and reuse the other one.
    current ^= 1;
    used = 0;
    allocation.reusesRetired = otherFilled;
    otherFilled = true;
    allocation.droppedBegin = current * perGeneration;
    allocation.droppedEnd = allocation.droppedBegin + perGeneration;
    for (size_t slot = allocation.droppedBegin; slot < allocation.droppedEnd;
         ++slot) {
      for (const std::string &key : keysOfSlot[slot])
        keys.erase(key);
      keysOfSlot[slot].clear();
    }
  }
  allocation.slot = current * perGeneration + used++;
  return allocation;
}
