//===- TensorMapMemoTest.cpp - recent device TMA maps by call arguments ---===//

#include "conv3d/Runtime/TensorMapMemo.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace mlir::conv3d;

namespace {

void *mapAt(uintptr_t address) { return reinterpret_cast<void *>(address); }

TEST(TensorMapMemo, AnswersOnlyTheSameArgumentsUnderTheSameEpoch) {
  auto memo = std::make_unique<TensorMapMemo>();
  std::vector<int64_t> words = {1, 0x7f0000001000, 9, 1, 2, 8, 8, 64};
  EXPECT_EQ(memo->lookup(words, 0), nullptr);
  memo->remember(words, 0, mapAt(0x1000));
  EXPECT_EQ(memo->lookup(words, 0), mapAt(0x1000));
  // Another epoch: the slots may have been reused since.
  EXPECT_EQ(memo->lookup(words, 1), nullptr);
  // Any other word (the address, a dimension, the function's tag), or a
  // prefix of the arguments: not the same request.
  for (size_t i = 0; i < words.size(); ++i) {
    std::vector<int64_t> other = words;
    ++other[i];
    EXPECT_EQ(memo->lookup(other, 0), nullptr) << "word " << i;
  }
  EXPECT_EQ(memo->lookup(llvm::ArrayRef<int64_t>(words).drop_back(), 0),
            nullptr);
  // Remembered again under the new epoch, with another map.
  memo->remember(words, 1, mapAt(0x2000));
  EXPECT_EQ(memo->lookup(words, 1), mapAt(0x2000));
  EXPECT_EQ(memo->lookup(words, 0), nullptr);
}

TEST(TensorMapMemo, ManyRequestsNeverGiveAWrongAnswer) {
  // More distinct requests than entries: each is answered with its own map
  // or not at all, and the latest one is always answered.
  auto memo = std::make_unique<TensorMapMemo>();
  constexpr int64_t kRequests = 4 * TensorMapMemo::kEntries;
  for (int64_t i = 0; i < kRequests; ++i) {
    std::vector<int64_t> words = {3, 0x7f0000000000 + 256 * i, 9, 64};
    memo->remember(words, 5, mapAt(0x10000 + 128 * i));
    EXPECT_EQ(memo->lookup(words, 5), mapAt(0x10000 + 128 * i));
  }
  int answered = 0;
  for (int64_t i = 0; i < kRequests; ++i) {
    std::vector<int64_t> words = {3, 0x7f0000000000 + 256 * i, 9, 64};
    if (void *map = memo->lookup(words, 5)) {
      EXPECT_EQ(map, mapAt(0x10000 + 128 * i)) << "request " << i;
      ++answered;
    }
  }
  EXPECT_GT(answered, 0);
  EXPECT_LE(answered, int(TensorMapMemo::kEntries));
}

TEST(TensorMapMemo, RequestsSharingASetDoNotEvictEachOther) {
  // kWays requests whose words fall in one set (as the maps of one
  // convolution may, depending on their addresses) are all answered; one
  // more replaces the oldest of them alone.
  auto memo = std::make_unique<TensorMapMemo>();
  auto request = [](int64_t i) {
    return std::vector<int64_t>{1, 0x7f0000000000 + 512 * i, 9, 2, 8, 8, 64};
  };
  std::vector<int64_t> sameSet;
  size_t set = TensorMapMemo::setOf(request(0));
  for (int64_t i = 0; sameSet.size() < TensorMapMemo::kWays + 1; ++i)
    if (TensorMapMemo::setOf(request(i)) == set)
      sameSet.push_back(i);
  for (size_t k = 0; k < TensorMapMemo::kWays; ++k)
    memo->remember(request(sameSet[k]), 3, mapAt(0x1000 + 64 * k));
  for (size_t k = 0; k < TensorMapMemo::kWays; ++k)
    EXPECT_EQ(memo->lookup(request(sameSet[k]), 3), mapAt(0x1000 + 64 * k))
        << "way " << k;
  // Remembering one of them again keeps its entry (no duplicate).
  memo->remember(request(sameSet[1]), 3, mapAt(0x1040));
  size_t last = TensorMapMemo::kWays;
  memo->remember(request(sameSet[last]), 3, mapAt(0x9000));
  EXPECT_EQ(memo->lookup(request(sameSet[last]), 3), mapAt(0x9000));
  EXPECT_EQ(memo->lookup(request(sameSet[0]), 3), nullptr) << "the oldest";
  for (size_t k = 1; k < TensorMapMemo::kWays; ++k)
    EXPECT_EQ(memo->lookup(request(sameSet[k]), 3), mapAt(0x1000 + 64 * k))
        << "way " << k;
  // Under a new epoch the set's entries are all outdated: a request
  // remembered then is answered.
  memo->remember(request(sameSet[0]), 4, mapAt(0xa000));
  EXPECT_EQ(memo->lookup(request(sameSet[0]), 4), mapAt(0xa000));
}

TEST(TensorMapMemo, RefusesWhatItCannotHold) {
  auto memo = std::make_unique<TensorMapMemo>();
  std::vector<int64_t> tooLong(TensorMapMemo::kMaxWords + 1, 7);
  memo->remember(tooLong, 0, mapAt(0x1000));
  EXPECT_EQ(memo->lookup(tooLong, 0), nullptr);
  std::vector<int64_t> words = {1, 2, 3};
  memo->remember(words, 0, nullptr); // null is "no map", never remembered
  EXPECT_EQ(memo->lookup(words, 0), nullptr);
}

} // namespace
