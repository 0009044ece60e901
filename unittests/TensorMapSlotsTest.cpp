//===- TensorMapSlotsTest.cpp - the bounded device TMA map slots ----------===//

#include "conv3d/Runtime/TensorMapSlots.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir::conv3d;

TEST(TensorMapSlots, KeysAndAliasesNameOneSlot) {
  TensorMapSlots slots(4);
  EXPECT_FALSE(slots.lookup("params"));
  TensorMapSlots::Allocation a = slots.allocate();
  EXPECT_FALSE(a.reusesRetired);
  slots.alias("content", a.slot);
  slots.alias("params", a.slot);
  EXPECT_EQ(slots.lookup("content"), a.slot);
  EXPECT_EQ(slots.lookup("params"), a.slot);
  TensorMapSlots::Allocation b = slots.allocate();
  EXPECT_NE(a.slot, b.slot);
  // A key moved to another slot no longer names the first.
  slots.alias("params", b.slot);
  EXPECT_EQ(slots.lookup("params"), b.slot);
  EXPECT_EQ(slots.lookup("content"), a.slot);
}

TEST(TensorMapSlots, BoundedByTwoGenerations) {
  constexpr size_t kPer = 8;
  TensorMapSlots slots(kPer);
  std::set<size_t> seen;
  int waits = 0;
  // Many more maps than slots: the slots stay within capacity and the keys
  // held never exceed it.
  for (size_t i = 0; i < 10 * kPer; ++i) {
    TensorMapSlots::Allocation allocation = slots.allocate();
    ASSERT_LT(allocation.slot, slots.capacity());
    seen.insert(allocation.slot);
    waits += allocation.reusesRetired;
    slots.alias("map" + std::to_string(i), allocation.slot);
    EXPECT_LE(slots.size(), slots.capacity());
  }
  EXPECT_EQ(seen.size(), 2 * kPer);
  // The first rotation fills the unused generation (no wait); each later one
  // reuses a retired generation and asks the caller to wait once.
  EXPECT_EQ(waits, 10 - 2);
}

TEST(TensorMapSlots, RetiredMapsStayValidForOneMoreGeneration) {
  constexpr size_t kPer = 4;
  TensorMapSlots slots(kPer);
  size_t first = slots.allocate().slot;
  slots.alias("first", first);
  for (size_t i = 1; i < kPer; ++i)
    slots.alias("a" + std::to_string(i), slots.allocate().slot);
  // The next generation: "first" is retired but still found.
  for (size_t i = 0; i < kPer; ++i) {
    TensorMapSlots::Allocation allocation = slots.allocate();
    EXPECT_NE(allocation.slot, first);
    EXPECT_FALSE(allocation.reusesRetired);
    slots.alias("b" + std::to_string(i), allocation.slot);
  }
  EXPECT_EQ(slots.lookup("first"), first);
  // Reusing its generation forgets it, and the caller must wait first.
  TensorMapSlots::Allocation reuse = slots.allocate();
  EXPECT_TRUE(reuse.reusesRetired);
  EXPECT_LE(reuse.droppedBegin, first);
  EXPECT_LT(first, reuse.droppedEnd);
  EXPECT_FALSE(slots.lookup("first"));
  EXPECT_TRUE(slots.lookup("b0"));
}
