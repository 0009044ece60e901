//===- SM100ScheduleModelTest.cpp - the sm100 kernel's plan replayed -----===//
//
// A host-side model of the sm100 kernel's schedule, without a GPU: the plan
// (SM100KernelPlan) and the descriptors it encodes are replayed on host
// memory, and the result must be the convolution (the independent reference
// of lib/Reference). It tests the plan the lowering emits from, not the
// hardware; no sm_100 GPU has run the kernel.
//
// What is modelled, each from its documented semantics rather than from the
// lowering's code:
// - the CTAs (fewer than tiles, so each walks several: the ring wraps and
//   both TMEM accumulator buffers are used), their roles as three actors
//   (TMA producer, MMA issuer, epilogue) interleaved by a scheduler that
//   runs whichever actor can proceed, each waiting on mbarriers by phase
//   parity exactly as the kernel does (a wait for parity p passes once the
//   barrier has completed a phase of parity p; empty and accumulator-empty
//   waits start one phase ahead), so a wrong phase or count shows up as a
//   deadlock or as data overwritten before it was read;
// - TMA im2col loads (coordinates of the tile's first output position, the
//   im2col offsets of the tap, the traversal of the box's pixels W first
//   between the corners, zeros outside the tensor and past the last
//   batch) and tiled loads of the FQRSC filter, written with the 128-byte
//   swizzle (16-byte chunk j of row i at chunk j ^ (i % 8));
// - each tcgen05.mma reading A and B through its shared-memory descriptors
//   (start address, stride byte offset, the 128-byte swizzle applied to the
//   address bits as the hardware does) with M and N from the instruction
//   descriptor, accumulating into the TMEM columns of its buffer (the first
//   MMA of a tile overwrites);
// - the epilogue warps reading TMEM lanes 32 (warp % 4) .. + 31 through the
//   staging tile in column chunks, and the output written (or added, for
//   split-K) at the tile's rows and columns inside the GEMM.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Support/HostTensor.h"
#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"
#include "conv3d/Target/SM100/SM100BlockScaledTma.h"
#include "conv3d/Target/SM100/SM100KernelPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;

namespace {

/// bf16 bits of a float that bf16 holds exactly.
uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}
float fromBF16(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

/// An mbarrier: an expected arrival count and the number of completed
/// phases.
struct Barrier {
  int64_t count = 0, pending = 0, phases = 0, bytes = 0;
  void init(int64_t arrivals) { count = pending = arrivals; }
  /// arrive (with expect_tx of `expect` bytes).
  void arrive(int64_t expect = 0) {
    bytes += expect;
    --pending;
    complete();
  }
  /// complete_tx of a TMA load.
  void transfer(int64_t delivered) {
    bytes -= delivered;
    complete();
  }
  void complete() {
    if (pending == 0 && bytes == 0) {
      ++phases;
      pending = count;
    }
  }
  /// try_wait.parity(p): the phase of parity p has completed (the current,
  /// incomplete phase has the other parity).
  bool passes(int64_t parity) const { return (phases & 1) != parity; }
};

/// The K step range [begin, end) of a tile (split-K ranges of the flat
/// steps, or the depth slices the tile reads outside the halo).
std::pair<int64_t, int64_t> stepRange(const ConvGeometry &g,
                                      const SM100KernelPlan &plan, int64_t m0,
                                      int64_t split) {
  if (plan.kOrder == KOrder::qslice_outer) {
    ScalarIndexMath math;
    int64_t last = std::min(m0 + plan.tileM - 1, g.gemmM() - 1);
    auto first = g.decomposeM(math, m0), final = g.decomposeM(math, last);
    int64_t begin = g.window[kDepth], end = 0;
    for (int64_t q = 0; q < g.window[kDepth]; ++q) {
      auto [lo, hi] = g.validOutputRange(kDepth, q);
      bool reads = lo < hi &&
                   (first[0] != final[0] || (first[1] < hi && final[1] >= lo));
      if (reads) {
        begin = std::min(begin, q);
        end = std::max(end, q + 1);
      }
    }
    if (end < begin)
      end = begin;
    return {begin * plan.stepsPerSlice, end * plan.stepsPerSlice};
  }
  int64_t per = (plan.totalSteps + plan.splitK - 1) / plan.splitK;
  int64_t begin = split * per;
  int64_t end = std::max(begin, std::min(begin + per, plan.totalSteps));
  return {begin, end};
}

struct Problem {
  ConvGeometry g;
  HostTensor input, filter; // NDHWC, FQRSC (bf16)
  int64_t tileM = 128, tileN = 0, stages = 0, splitK = 1;
  /// CTAs (CTA pairs for tile_m = 256) of the persistent grid.
  int64_t blocks = 2;
  KOrder kOrder = KOrder::taps_outer;
};

/// One CTA's replay state: its memories, barriers and actors' positions
/// (the tile index into `tiles` and the step within it). The MMA actor runs
/// in a group's first CTA only.
struct Cta {
  std::vector<uint8_t> shared;
  std::vector<float> tmem; // kTmemLanes x plan.tmemColumns
  std::vector<Barrier> full, empty, accFull, accEmpty;
  std::vector<int64_t> tiles;
  size_t producerTile = 0, mmaTile = 0, epilogueTile = 0;
  int64_t producerStep = 0, mmaStep = -1; // -1: before the tile's wait
  int64_t producerDone = 0, mmaDone = 0;
};

/// The CTAs that compute a tile together (one, or a cta_group::2 pair).
using Group = std::vector<Cta>;

/// The order in which the scheduler offers the actors a move each round.
enum class Order { ProducersFirst, MmaFirst, Interleaved };

class Model {
public:
  Model(const Problem &p, const SM100KernelPlan &plan,
        std::vector<float> &output, Order order)
      : p(p), g(p.g), plan(plan), output(output), order(order) {}

  /// Runs every CTA to completion; false on a deadlock.
  bool run() {
    numMT = (g.gemmM() + plan.tileM - 1) / plan.tileM;
    numNT = (g.gemmN() + plan.tileN - 1) / plan.tileN;
    int64_t numTiles = numMT * numNT * plan.splitK;
    int64_t blocks = std::min(p.blocks, numTiles);
    groups.assign(blocks, Group(plan.ctaGroup));
    for (int64_t b = 0; b < blocks; ++b)
      for (Cta &cta : groups[b]) {
        cta.shared.assign(plan.sharedBytes - kAlignmentSlack, 0xFF);
        cta.tmem.assign(kTmemLanes * plan.tmemColumns, std::nanf(""));
        // The kernel's barrier counts: full (the producer's expect_tx), empty
        // (one tcgen05.commit), accumulator full (one commit), accumulator
        // empty (every epilogue thread).
        cta.full.resize(plan.stages);
        cta.empty.resize(plan.stages);
        for (int64_t s = 0; s < plan.stages; ++s) {
          cta.full[s].init(1);
          cta.empty[s].init(1);
        }
        cta.accFull.resize(plan.accumulatorBuffers);
        cta.accEmpty.resize(plan.accumulatorBuffers);
        for (int64_t a = 0; a < plan.accumulatorBuffers; ++a) {
          cta.accFull[a].init(1);
          // Every epilogue thread of the group hands the buffer back.
          cta.accEmpty[a].init(kEpilogueThreads * plan.ctaGroup);
        }
        for (int64_t tile = b; tile < numTiles; tile += blocks)
          cta.tiles.push_back(tile);
      }
    for (Group &group : groups) {
      // Greedy: the producers run as far ahead as their barriers allow,
      // then the MMA issuer (or the other way round), then the epilogues.
      while (true) {
        bool moved = false;
        auto producers = [&](size_t from, size_t to) {
          for (size_t rank = from; rank < std::min(to, group.size()); ++rank)
            moved |= stepProducer(group, rank);
        };
        switch (order) {
        case Order::ProducersFirst:
          producers(0, group.size());
          moved |= stepMma(group);
          break;
        case Order::MmaFirst:
          moved |= stepMma(group);
          producers(0, group.size());
          break;
        case Order::Interleaved:
          // The MMA issuer between the pair's two producers.
          producers(0, 1);
          moved |= stepMma(group);
          producers(1, group.size());
          break;
        }
        for (size_t rank = 0; rank < group.size(); ++rank)
          moved |= stepEpilogue(group, rank);
        if (!moved)
          break;
      }
      for (const Cta &cta : group)
        if (cta.producerTile != cta.tiles.size() ||
            cta.epilogueTile != cta.tiles.size())
          return false;
      if (group[0].mmaTile != group[0].tiles.size())
        return false;
    }
    return true;
  }

  int64_t mmaCount = 0, loads = 0;

private:
  struct Origin {
    int64_t m0, n0, split;
  };
  // The kernel's tile order: N tiles fastest, then M tiles, then splits.
  Origin origin(int64_t tile) const {
    return {((tile / numNT) % numMT) * plan.tileM, (tile % numNT) * plan.tileN,
            tile / (numNT * numMT)};
  }

  int64_t aStage(int64_t s) const { return s * plan.aStageBytes; }
  int64_t bStage(int64_t s) const {
    return plan.stages * plan.aStageBytes + s * plan.bStageBytes;
  }
  /// Writes a box row (64 bf16 channels) to row `row` of a 128-byte
  /// swizzled tile at `base`.
  void writeSwizzledRow(Cta &cta, int64_t base, int64_t row,
                        const uint16_t *values) {
    ASSERT_EQ(base % 1024, 0) << "swizzled tiles start on a 1024-byte atom";
    for (int64_t chunk = 0; chunk < 8; ++chunk) {
      int64_t at = base + row * kRowBytes + ((chunk ^ (row % 8)) * 16);
      ASSERT_LE(at + 16, plan.stagingOffset) << "a TMA box spills out of the "
                                                "ring";
      std::memcpy(&cta.shared[at], values + chunk * 8, 16);
    }
  }

  /// The producer of CTA `rank` of `group`: its loads complete on the
  /// group's first CTA's full barrier, which alone expects the bytes.
  bool stepProducer(Group &group, size_t rank) {
    Cta &cta = group[rank];
    if (cta.producerTile == cta.tiles.size())
      return false;
    Origin o = origin(cta.tiles[cta.producerTile]);
    auto [begin, end] = stepRange(g, plan, o.m0, o.split);
    if (cta.producerStep == end - begin) {
      cta.producerDone += end - begin;
      ++cta.producerTile;
      cta.producerStep = 0;
      return true;
    }
    int64_t position = cta.producerDone + cta.producerStep;
    int64_t stage = position % plan.stages;
    int64_t phase = (position / plan.stages) & 1;
    if (!cta.empty[stage].passes(phase ^ 1))
      return false;
    int64_t step = begin + cta.producerStep;
    Barrier &full = group[0].full[stage];
    if (rank == 0)
      full.arrive(plan.stepBytes); // arrive.expect_tx
    full.transfer(loadStep(cta, stage, step, o, rank));
    ++cta.producerStep;
    return true;
  }

  /// The two TMA loads of K step `step` into stage `stage` of CTA `rank`
  /// (its 128 rows of A, its tileN / ctaGroup rows of B); returns their
  /// bytes.
  int64_t loadStep(Cta &cta, int64_t stage, int64_t step, const Origin &o,
                   int64_t rank) {
    ++loads;
    int64_t tap = step / plan.channelBlocks;
    int64_t c0 = (step % plan.channelBlocks) * kChannelBlock;
    ScalarIndexMath math;
    auto qrs = delinearize<ScalarIndexMath, 3>(
        math, tap, {g.window[0], g.window[1], g.window[2]});
    // Activation: the im2col box from the coordinates the producer gives,
    // the tile's first output position's input corner, pixel by pixel
    // between the descriptor's corners.
    int64_t rowsB = plan.tileN / plan.ctaGroup;
    int64_t rowA = o.m0 + rank * kTmemLanes, rowB = o.n0 + rank * rowsB;
    auto pos = g.decomposeM(math, rowA);
    std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                           upper = g.tmaIm2colUpperCorner();
    std::array<int64_t, 3> base;
    for (unsigned axis = 0; axis < 3; ++axis)
      base[axis] = pos[axis + 1] * g.strides[axis] - g.padLow[axis];
    int64_t n = pos[0];
    std::array<int64_t, 3> offset = {qrs[0] * g.dilations[0],
                                     qrs[1] * g.dilations[1],
                                     qrs[2] * g.dilations[2]};
    uint16_t row[kChannelBlock];
    int64_t boxBytes = 0;
    for (int64_t i = 0; i < kTmemLanes; ++i) {
      for (int64_t c = 0; c < kChannelBlock; ++c) {
        float value = 0.f;
        std::array<int64_t, 3> at;
        bool inside = n < g.batch && c0 + c < g.channels;
        for (unsigned axis = 0; axis < 3; ++axis) {
          at[axis] = base[axis] + offset[axis];
          inside &= at[axis] >= 0 && at[axis] < g.inputSize[axis];
        }
        if (inside)
          value = float(p.input.get(
              (((n * g.inputSize[0] + at[0]) * g.inputSize[1] + at[1]) *
                   g.inputSize[2] +
               at[2]) *
                  g.channels +
              c0 + c));
        row[c] = toBF16(value);
      }
      writeSwizzledRow(cta, aStage(stage), i, row);
      boxBytes += kRowBytes;
      // The next pixel: W first, wrapping at the upper corner to the lower
      // one, then H, D and the batch.
      for (int axis = 2; axis >= 0; --axis) {
        base[axis] += g.strides[axis];
        if (base[axis] <= g.inputSize[axis] - 1 + upper[axis])
          break;
        base[axis] = lower[axis];
        if (axis == 0)
          ++n;
      }
    }
    // Filter: the tiled box {64 channels, 1 tap, rowsB filters} at
    // {c0, tap, rowB}; zeros past F and C.
    for (int64_t f = 0; f < rowsB; ++f) {
      for (int64_t c = 0; c < kChannelBlock; ++c) {
        int64_t filter = rowB + f, channel = c0 + c;
        float value = 0.f;
        if (filter < g.filters && channel < g.channels)
          value = float(p.filter.get(
              (filter * (g.window[0] * g.window[1] * g.window[2]) + tap) *
                  g.channels +
              channel));
        row[c] = toBF16(value);
      }
      writeSwizzledRow(cta, bStage(stage), f, row);
      boxBytes += kRowBytes;
    }
    EXPECT_EQ(boxBytes * plan.ctaGroup, plan.stepBytes)
        << "the full barrier's transaction count is not the boxes' bytes";
    return boxBytes;
  }

  /// A K-major, 128-byte-swizzled operand as its tcgen05 shared-memory
  /// descriptor describes it.
  struct Operand {
    int64_t start = 0, strideBytes = 0;
  };
  static Operand decode(uint64_t descriptor) {
    EXPECT_EQ((descriptor >> 46) & 7, 1u) << "bits 46-48 must be 0b001";
    EXPECT_EQ(descriptor >> 61, 2u) << "not the 128-byte swizzle";
    EXPECT_EQ((descriptor >> 49) & 7, 0u) << "a nonzero base offset";
    EXPECT_EQ((descriptor >> 52) & 1, 0u) << "an absolute leading offset";
    return {int64_t(descriptor & 0x3FFF) << 4,
            int64_t((descriptor >> 32) & 0x3FFF) << 4};
  }
  /// Its bf16 element (row, k): rows in 8-row groups `strideBytes` apart,
  /// 128 bytes a row inside a group, 2 bytes an element; the swizzle XORs
  /// address bits 4-6 with bits 7-9.
  static float element(const Cta &cta, const Operand &operand, int64_t row,
                       int64_t k) {
    int64_t address = operand.start + (row / 8) * operand.strideBytes +
                      (row % 8) * 128 + k * 2;
    address ^= ((address >> 7) & 7) << 4;
    uint16_t bits;
    std::memcpy(&bits, &cta.shared[address], 2);
    return fromBF16(bits);
  }

  /// The MMA issuer of the group's first CTA: an M = 128 x ctaGroup MMA
  /// reads rows 128 r .. 128 r + 127 of A from CTA r's shared memory and
  /// rows r N / 2 .. of B from CTA r's (cta_group::2), at the addresses its
  /// descriptors name, and accumulates rows 128 r .. into CTA r's TMEM; its
  /// commits arrive on every CTA of the group.
  bool stepMma(Group &group) {
    Cta &cta = group[0];
    if (cta.mmaTile == cta.tiles.size())
      return false;
    int64_t local = cta.mmaTile;
    int64_t buffer = local % plan.accumulatorBuffers;
    int64_t accPhase = (local / plan.accumulatorBuffers) & 1;
    Origin o = origin(cta.tiles[cta.mmaTile]);
    auto [begin, end] = stepRange(g, plan, o.m0, o.split);
    if (cta.mmaStep == -1) {
      if (!cta.accEmpty[buffer].passes(accPhase ^ 1))
        return false;
      cta.mmaStep = 0;
      return true;
    }
    if (cta.mmaStep == end - begin) {
      for (Cta &each : group)
        each.accFull[buffer].arrive(); // tcgen05.commit (multicast)
      cta.mmaDone += end - begin;
      ++cta.mmaTile;
      cta.mmaStep = -1;
      return true;
    }
    int64_t position = cta.mmaDone + cta.mmaStep;
    int64_t stage = position % plan.stages;
    if (!cta.full[stage].passes((position / plan.stages) & 1))
      return false;
    uint32_t idesc = plan.instructionDescriptor(/*bf16=*/true);
    int64_t m = int64_t((idesc >> 24) & 0x1F) << 4;
    int64_t n = int64_t((idesc >> 17) & 0x3F) << 3;
    EXPECT_EQ(m, plan.tileM);
    EXPECT_EQ(n, plan.tileN);
    EXPECT_EQ((idesc >> 15) & 3, 0u) << "A and B must be K-major";
    // The accumulator's columns: buffer b from column b * tileN.
    int64_t column0 = buffer * plan.tileN;
    EXPECT_LE(column0 + n, plan.tmemColumns);
    for (int64_t kk = 0; kk < kChannelBlock / kMmaK; ++kk) {
      Operand a = decode(SM100KernelPlan::sharedMemoryDescriptor(
          uint32_t(aStage(stage) + kk * 32)));
      Operand b = decode(SM100KernelPlan::sharedMemoryDescriptor(
          uint32_t(bStage(stage) + kk * 32)));
      bool accumulate = kk > 0 || cta.mmaStep != 0;
      std::vector<float> rowsA(m * kMmaK), rowsB(n * kMmaK);
      int64_t perCtaB = n / plan.ctaGroup;
      for (int64_t k = 0; k < kMmaK; ++k) {
        for (int64_t r = 0; r < m; ++r)
          rowsA[r * kMmaK + k] =
              element(group[r / kTmemLanes], a, r % kTmemLanes, k);
        for (int64_t c = 0; c < n; ++c)
          rowsB[c * kMmaK + k] = element(group[c / perCtaB], b, c % perCtaB, k);
      }
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          float &d =
              group[r / kTmemLanes]
                  .tmem[(r % kTmemLanes) * plan.tmemColumns + column0 + c];
          float sum = accumulate ? d : 0.f;
          for (int64_t k = 0; k < kMmaK; ++k)
            sum += rowsA[r * kMmaK + k] * rowsB[c * kMmaK + k];
          d = sum;
        }
      ++mmaCount;
    }
    for (Cta &each : group)
      each.empty[stage].arrive(); // tcgen05.commit (multicast)
    ++cta.mmaStep;
    return true;
  }

  /// The epilogue warps of CTA `rank`: its 128 rows of the tile; the
  /// hand-back arrives on the group's first CTA's barrier.
  bool stepEpilogue(Group &group, size_t rank) {
    Cta &cta = group[rank];
    if (cta.epilogueTile == cta.tiles.size())
      return false;
    int64_t local = cta.epilogueTile;
    int64_t buffer = local % plan.accumulatorBuffers;
    if (!cta.accFull[buffer].passes((local / plan.accumulatorBuffers) & 1))
      return false;
    Origin o = origin(cta.tiles[local]);
    auto [begin, end] = stepRange(g, plan, o.m0, o.split);
    bool hasSteps = end > begin;
    std::vector<float> staging(kTmemLanes * plan.stagingStride, std::nanf(""));
    std::vector<int> rowsRead(kTmemLanes, 0);
    int64_t firstRow = o.m0 + int64_t(rank) * kTmemLanes;
    for (int64_t c = 0; c < plan.epilogueChunks; ++c) {
      for (int64_t warp = kFirstEpilogueWarp;
           warp < kFirstEpilogueWarp + kEpilogueWarps; ++warp)
        for (int64_t lane = 0; lane < kWarpThreads; ++lane) {
          // tcgen05.ld 32x32b: thread `lane` of the warp reads TMEM lane
          // 32 (warp % 4) + lane, the tile's row.
          int64_t row = 32 * (warp % 4) + lane;
          if (c == 0)
            ++rowsRead[row];
          for (int64_t j = 0; j < plan.chunkColumns; j += plan.loadColumns)
            for (int64_t i = 0; i < plan.loadColumns; ++i) {
              int64_t column = buffer * plan.tileN + c * plan.chunkColumns + j;
              float value = cta.tmem[row * plan.tmemColumns + column + i];
              staging[row * plan.stagingStride + j + i] =
                  hasSteps ? value : 0.f;
            }
        }
      // The staged pass: row-major over the chunk, inside the GEMM only.
      for (int64_t row = 0; row < kTmemLanes; ++row)
        for (int64_t col = 0; col < plan.chunkColumns; ++col) {
          int64_t m = firstRow + row, f = o.n0 + c * plan.chunkColumns + col;
          if (m >= g.gemmM() || f >= g.filters)
            continue;
          float value = staging[row * plan.stagingStride + col];
          float &out = output[m * g.filters + f];
          out = plan.splitK > 1 ? out + value : value;
        }
    }
    for (int64_t row = 0; row < kTmemLanes; ++row)
      EXPECT_EQ(rowsRead[row], 1) << "TMEM lane " << row;
    for (int64_t t = 0; t < kEpilogueThreads; ++t)
      group[0].accEmpty[buffer].arrive();
    // TMEM is stale once handed back: poison it, so that a reuse before the
    // next tile's first MMA overwrote it shows.
    for (int64_t r = 0; r < kTmemLanes; ++r)
      for (int64_t col = 0; col < plan.tileN; ++col)
        cta.tmem[r * plan.tmemColumns + buffer * plan.tileN + col] =
            std::nanf("");
    ++cta.epilogueTile;
    return true;
  }

  const Problem &p;
  const ConvGeometry &g;
  const SM100KernelPlan &plan;
  std::vector<float> &output;
  Order order;
  int64_t numMT = 0, numNT = 0;
  std::vector<Group> groups;
};

Problem makeProblem(std::array<int64_t, 5> inputShape,
                    std::array<int64_t, 5> filterShape,
                    std::array<int64_t, 3> strides,
                    std::array<int64_t, 3> dilations,
                    std::array<int64_t, 6> padding, uint64_t seed) {
  Problem p;
  p.g = ConvGeometry::fromShapes(inputShape, filterShape, FilterLayout::fqrsc,
                                 strides, dilations, padding);
  p.input = HostTensor::zeros(
      ElementType::bf16,
      std::vector<int64_t>(inputShape.begin(), inputShape.end()));
  p.filter = HostTensor::zeros(
      ElementType::bf16,
      std::vector<int64_t>(filterShape.begin(), filterShape.end()));
  // Small integers: every product and sum is exact in f32, so the model
  // must equal the reference exactly.
  std::mt19937_64 rng(seed);
  for (HostTensor *t : {&p.input, &p.filter})
    for (int64_t i = 0; i < t->numElements(); ++i)
      t->set(i, double(int64_t(rng() % 9) - 4));
  return p;
}

/// Builds the plan, replays it with each actor order and compares with the
/// reference.
void expectComputesConvolution(const Problem &p) {
  SM100KernelPlan plan;
  ASSERT_EQ(SM100KernelPlan::build(p.g, p.tileM, p.tileN, 64, p.stages, 4, 1,
                                   p.kOrder, p.splitK, 8, plan),
            std::nullopt);
  ReferenceConvProblem ref;
  ref.geometry = p.g;
  ref.filterLayout = FilterLayout::fqrsc;
  ref.input = &p.input;
  ref.filter = &p.filter;
  std::vector<double> expected = referenceConv(ref);
  for (Order order :
       {Order::ProducersFirst, Order::MmaFirst, Order::Interleaved}) {
    // Split-K adds onto zeros; an overwrite must write every element.
    std::vector<float> output(expected.size(),
                              p.splitK > 1 ? 0.f : std::nanf(""));
    Model model(p, plan, output, order);
    ASSERT_TRUE(model.run()) << "the barriers deadlock";
    EXPECT_GT(model.mmaCount, 0);
    int64_t mismatches = 0;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!(double(output[i]) == expected[i]) && mismatches++ < 5)
        ADD_FAILURE() << "element " << i << ": " << output[i] << " vs "
                      << expected[i];
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(SM100ScheduleModel, CausalTailsAndPersistence) {
  // Causal 3x3x3, C = 64, F = 96; M = 6 x 9 x 7 = 378 (3 M tiles, the last
  // partial); one CTA walks all three (both accumulator buffers, one twice)
  // through a 3-stage ring that wraps.
  Problem p = makeProblem({1, 6, 9, 7, 64}, {96, 3, 3, 3, 64}, {1, 1, 1},
                          {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 1);
  p.tileN = 96;
  p.stages = 3;
  p.blocks = 1;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, ChannelAndFilterTailsStridesDilations) {
  // C = 72 (two channel blocks, the second mostly TMA zeros), F = 40 (a
  // 48-wide N tile, its last 8 columns past F), stride 2 in H/W, dilation 2
  // in W, batch 2 (tiles cross the batch boundary), 3 CTAs.
  Problem p = makeProblem({2, 5, 10, 11, 72}, {40, 2, 3, 3, 72}, {1, 2, 2},
                          {1, 1, 2}, {1, 0, 1, 1, 2, 2}, 2);
  p.tileN = 48;
  p.stages = 4;
  p.blocks = 3;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, WideTileChunkedEpilogue) {
  // F = 256 with 4 stages: all 512 TMEM columns, the staging in 32-column
  // chunks; pointwise over two channel blocks; M = 192 (2 M tiles).
  Problem p = makeProblem({1, 2, 8, 12, 128}, {256, 1, 1, 1, 128}, {1, 1, 1},
                          {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 3);
  p.tileN = 256;
  p.stages = 4;
  p.blocks = 1;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, SplitK) {
  // 27 taps x 1 channel block in 4 ranges of 7 (the last 6); F = 80 in two
  // N tiles of 64 (the second partial).
  Problem p = makeProblem({1, 4, 6, 6, 64}, {80, 3, 3, 3, 64}, {1, 1, 1},
                          {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 4);
  p.tileN = 64;
  p.stages = 3;
  p.splitK = 4;
  p.blocks = 3;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, SplitKWithEmptyRanges) {
  // 2 x 1 x 1 window, C = 64: 2 steps split 3 ways, the last range empty:
  // its tiles hand over an unwritten accumulator, read as zeros.
  Problem p = makeProblem({1, 3, 4, 8, 64}, {32, 2, 1, 1, 64}, {1, 1, 1},
                          {1, 1, 1}, {1, 0, 0, 0, 0, 0}, 5);
  p.tileN = 32;
  p.stages = 2;
  p.splitK = 3;
  p.blocks = 2;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, QSlicesFusedWithSkippedSlices) {
  // k_order = qslice_outer with depth padding 3 and Q = 3: the first
  // output frame (16 x 16 = 256 rows, two whole tiles) reads only padding,
  // its tiles have no K steps; the next frames skip some slices.
  Problem p = makeProblem({1, 4, 16, 16, 64}, {64, 3, 3, 3, 64}, {1, 1, 1},
                          {1, 1, 1}, {3, 0, 1, 1, 1, 1}, 6);
  p.tileN = 64;
  p.stages = 4;
  p.kOrder = KOrder::qslice_outer;
  p.blocks = 3;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, CtaPairs) {
  // tile_m = 256, cta_group::2: M = 2 x 5 x 9 x 11 = 990 (4 pair tiles,
  // the last partial), F = 96 (48 rows of B a CTA), C = 72; two pairs, each
  // walking two tiles (both accumulator buffers).
  Problem p = makeProblem({2, 5, 9, 11, 72}, {96, 3, 3, 3, 72}, {1, 1, 1},
                          {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 7);
  p.tileM = 256;
  p.tileN = 96;
  p.stages = 3;
  p.blocks = 2;
  expectComputesConvolution(p);
}

TEST(SM100ScheduleModel, CtaPairsSplitKAndQSlices) {
  Problem p = makeProblem({1, 4, 6, 6, 64}, {80, 3, 3, 3, 64}, {1, 1, 1},
                          {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 8);
  p.tileM = 256;
  p.tileN = 96; // 48 rows of B a CTA; F = 80 leaves 16 columns past F
  p.stages = 2;
  p.splitK = 3;
  p.blocks = 2;
  expectComputesConvolution(p);
  Problem q = makeProblem({1, 4, 16, 16, 64}, {64, 3, 3, 3, 64}, {1, 1, 1},
                          {1, 1, 1}, {3, 0, 1, 1, 1, 1}, 9);
  q.tileM = 256;
  q.tileN = 64;
  q.stages = 4;
  q.kOrder = KOrder::qslice_outer;
  q.blocks = 2;
  expectComputesConvolution(q);
}

} // namespace

//===----------------------------------------------------------------------===//
// Real NVFP4: the block-scaled mainloop (SM100BlockScaledPlan.h) replayed
//===----------------------------------------------------------------------===//
//
// The operands are packed by the reference packer (lib/Quant), as
// conv3d.pack_nvfp4 packs them (bit for bit: test/Execution/pack-nvfp4.test).
// Per tile and K step (one tap x 256 channels) the model writes what the
// TMA boxes deliver (128-byte rows of codes, 128-byte swizzle, zeros in the
// halo and past C and F) and the scale atoms of each MMA, copies the atoms
// to TMEM as tcgen05.cp.32x128b.warpx4 does (atom row r to lane r of every
// 32-lane quarter), and replays each kind::mxf4nvf4 MMA from its
// descriptors: the codes through the shared-memory descriptor (nibble k % 2
// of byte k / 2 of the row's 32-byte slice), the scales of row m from TMEM
// lane m at the plan's column, the shape from the instruction descriptor.
// The accumulator (in long double: every product of decoded codes and
// scales and their sums are exact there) must equal the sum of the decoded
// operands over the GEMM K exactly, and the epilogue's result (times the
// global scales) the fake-quantized convolution up to f32 rounding. The
// mutations (a misread layout each) must fail it. For C % 256 == 0 the
// rows can also come through the producer's TMA maps
// (SM100BlockScaledTma.h), each box simulated from the map's fields alone
// at the kernel's coordinates; a misencoded map must fail the replay.

namespace {

namespace nvfp4 = mlir::conv3d::sm100::nvfp4;
using nvfp4::BlockScaledPlan;
using nvfp4::kAtomBytes;
using nvfp4::kAtomLanes;
using nvfp4::kAtomRowBytes;
using nvfp4::kAtomRows;
using nvfp4::kMmaBytes;
using nvfp4::kMmasPerStep;
using nvfp4::kScaleBlock;
using nvfp4::kScalesPerMma;
using nvfp4::scaleAtomOffset;
using nvfp4::scaleTmemWord;

enum class BlockScaledMutation {
  None,
  /// A's high nibble read as the even element (the same swap in both
  /// operands would permute K alike in A and B and go unnoticed).
  NibbleOrder,
  /// The atom's 4-byte groups as K blocks and bytes as row groups.
  AtomTransposed,
  /// Each MMA reads the next MMA's B scales.
  WrongScaleColumn,
  /// A K = 64 MMA advancing 16 bytes along the row (the 8-bit kinds' K = 32
  /// slice of FP4 packed one per byte), not 32.
  SliceStride,
};

struct BlockScaledProblem {
  ConvGeometry g;
  int64_t tileN = 0, stages = 3;
};

/// The packed operands and their decoded values (without the global scale).
struct PackedConv {
  HostTensor input, filter; // bf16 NDHWC, FQRSC
  float amaxA = 0, amaxB = 0;
  NVFP4Packed a, b;
  HostTensor decodedA, decodedB; // f32, q * s8
};

HostTensor decodePacked(const HostTensor &x, const NVFP4Packed &packed) {
  HostTensor decoded = HostTensor::zeros(ElementType::f32, x.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    uint8_t byte = packed.codes[i / 2];
    uint8_t code = i % 2 ? byte >> 4 : byte & 0xF;
    decoded.set(i, double(nvfp4DecodeE2M1(code)) *
                       double(nvfp4DecodeE4M3(packed.scales[i / 16])));
  }
  return decoded;
}

PackedConv packConv(const ConvGeometry &g, uint64_t seed) {
  PackedConv p;
  int64_t taps = g.window[0] * g.window[1] * g.window[2];
  p.input = HostTensor::zeros(
      ElementType::bf16,
      {g.batch, g.inputSize[0], g.inputSize[1], g.inputSize[2], g.channels});
  p.filter =
      HostTensor::zeros(ElementType::bf16, {g.filters, g.window[0], g.window[1],
                                            g.window[2], g.channels});
  fillRandomNormal(p.input, seed, 1.0);
  fillRandomNormal(p.filter, seed + 1, 1.0 / std::sqrt(double(taps)));
  for (const HostTensor *t : {&p.input, &p.filter}) {
    float amax = 0;
    for (int64_t i = 0; i < t->numElements(); ++i)
      amax = std::max(amax, float(std::fabs(t->get(i))));
    (t == &p.input ? p.amaxA : p.amaxB) = amax;
  }
  // C % 16 == 0: the blocks along C of each voxel (of each filter tap) are
  // the K-order blocks of the GEMM.
  p.a = referencePackNVFP4(p.input, kScaleBlock, p.amaxA);
  p.b = referencePackNVFP4(p.filter, kScaleBlock, p.amaxB);
  p.decodedA = decodePacked(p.input, p.a);
  p.decodedB = decodePacked(p.filter, p.b);
  return p;
}

using nvfp4::BlockScaledTmaPlan;
using nvfp4::PackedTensorMap;

/// Byte `address` of `data`; a misencoded map (the corruption tests) may
/// address past the end, which reads a marker instead.
uint8_t readByte(const std::vector<uint8_t> &data, int64_t address) {
  return address >= 0 && address < int64_t(data.size()) ? data[address] : 0x5A;
}

/// Row `row` of a rank-5 TMA im2col load over `map` (box[0] bytes from byte
/// `column` of each pixel) from the base pixel `start` (W, H, D, N) with
/// im2col offsets `offsets` (W, H, D), as the hardware walks it: rows step
/// through the base pixels of the bounding box (corners and element
/// strides), W fastest, wrapping into H, D and N; pixels and bytes outside
/// the tensor read zeros. Only the map's fields are used.
void tmaIm2colRow(const PackedTensorMap &map, const std::vector<uint8_t> &data,
                  int64_t column, std::array<int64_t, 4> start,
                  std::array<int64_t, 3> offsets, int64_t row, uint8_t *out) {
  std::array<int64_t, 3> first, count, index;
  for (unsigned a = 0; a < 3; ++a) {
    int64_t step = map.elementStrides[a + 1];
    first[a] = map.lowerCorner[a];
    int64_t last = map.globalDim[a + 1] - 1 + map.upperCorner[a];
    count[a] = (last - first[a]) / step + 1;
    index[a] = (start[a] - first[a]) / step;
  }
  int64_t linear =
      ((start[3] * count[2] + index[2]) * count[1] + index[1]) * count[0] +
      index[0] + row;
  std::array<int64_t, 3> pixel;
  for (unsigned a = 0; a < 3; ++a) {
    pixel[a] =
        first[a] + (linear % count[a]) * map.elementStrides[a + 1] + offsets[a];
    linear /= count[a];
  }
  int64_t n = linear;
  bool inside = n < map.globalDim[4];
  for (unsigned a = 0; a < 3; ++a)
    inside &= pixel[a] >= 0 && pixel[a] < map.globalDim[a + 1];
  for (int64_t j = 0; j < map.box[0]; ++j) {
    int64_t byte = column + j;
    out[j] = inside && byte < map.globalDim[0]
                 ? readByte(data, n * map.globalStrides[3] +
                                      pixel[2] * map.globalStrides[2] +
                                      pixel[1] * map.globalStrides[1] +
                                      pixel[0] * map.globalStrides[0] + byte)
                 : 0;
  }
}

/// Row `row` of a rank-3 tiled TMA load over `map` at (column, tap, f0).
void tmaTiledRow(const PackedTensorMap &map, const std::vector<uint8_t> &data,
                 int64_t column, int64_t tap, int64_t f0, int64_t row,
                 uint8_t *out) {
  int64_t f = f0 + row;
  for (int64_t j = 0; j < map.box[0]; ++j) {
    int64_t byte = column + j;
    bool inside = byte < map.globalDim[0] && tap < map.globalDim[1] &&
                  f < map.globalDim[2];
    out[j] = inside ? readByte(data, f * map.globalStrides[1] +
                                         tap * map.globalStrides[0] + byte)
                    : 0;
  }
}

class BlockScaledModel {
public:
  /// With `tma`, the step's rows of codes and scales come from the TMA maps
  /// (tmaIm2colRow, tmaTiledRow) at the kernel's coordinates; without, from
  /// the packed tensors directly.
  BlockScaledModel(const ConvGeometry &g, const BlockScaledPlan &plan,
                   const PackedConv &p, BlockScaledMutation mutation,
                   const BlockScaledTmaPlan *tma = nullptr)
      : g(g), plan(plan), p(p), mutation(mutation), tma(tma) {}

  /// The accumulators (M x F, row-major) after every tile's MMAs.
  std::vector<long double> run() {
    std::vector<long double> out(g.gemmM() * g.filters, 0);
    shared.assign(plan.pipelineBytes, 0xFF);
    tmem.assign(kTmemLanes * plan.tmemColumns, 0xDEADBEEF);
    accumulator.assign(kTmemLanes * plan.tileN, 0);
    int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
    int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
    for (int64_t tile = 0; tile < numMT * numNT; ++tile) {
      int64_t m0 = (tile / numNT) * plan.tileM,
              n0 = (tile % numNT) * plan.tileN;
      for (int64_t step = 0; step < plan.totalSteps; ++step) {
        int64_t stage = step % plan.stages;
        load(stage, step, m0, n0);
        for (int64_t kk = 0; kk < kMmasPerStep; ++kk)
          mma(stage, kk, /*accumulate=*/step > 0 || kk > 0);
      }
      for (int64_t i = 0; i < plan.tileM && m0 + i < g.gemmM(); ++i)
        for (int64_t j = 0; j < plan.tileN && n0 + j < g.filters; ++j)
          out[(m0 + i) * g.filters + n0 + j] = accumulator[i * plan.tileN + j];
    }
    return out;
  }

private:
  // The kernel's shared layout (BlockScaledPlan's offsets: the code rings,
  // then the scale rings).
  int64_t aStage(int64_t s) const { return plan.aCodesOffset(s); }
  int64_t bStage(int64_t s) const { return plan.bCodesOffset(s); }
  int64_t aScales(int64_t s) const { return plan.aScalesOffset(s); }
  int64_t bScales(int64_t s) const { return plan.bScalesOffset(s); }

  /// A 128-byte row of packed codes at row `row` of a swizzled tile.
  void writeRow(int64_t base, int64_t row, const uint8_t *bytes) {
    ASSERT_EQ(base % 1024, 0) << "swizzled tiles start on a 1024-byte atom";
    for (int64_t chunk = 0; chunk < 8; ++chunk)
      std::memcpy(&shared[base + row * kRowBytes + ((chunk ^ (row % 8)) * 16)],
                  bytes + chunk * 16, 16);
  }

  /// The step's boxes (codes and the natural 16 scale bytes of each row)
  /// and the scale atoms of its MMAs, then the tcgen05.cp of each atom.
  void load(int64_t stage, int64_t step, int64_t m0, int64_t n0) {
    int64_t tap = step / plan.channelBlocks;
    int64_t cb = step % plan.channelBlocks;
    int64_t c0 = cb * nvfp4::kChannelBlock;
    ScalarIndexMath math;
    auto qrs = delinearize<ScalarIndexMath, 3>(
        math, tap, {g.window[0], g.window[1], g.window[2]});
    int64_t voxelCodes = g.channels / 2, voxelScales = g.channels / 16;
    auto rowBytes = [&](const NVFP4Packed &packed, int64_t voxel,
                        uint8_t *codes, uint8_t *scales) {
      for (int64_t c = 0; c < nvfp4::kChannelBlock; c += 2) {
        bool inside = voxel >= 0 && c0 + c < g.channels;
        codes[c / 2] =
            inside ? packed.codes[voxel * voxelCodes + (c0 + c) / 2] : 0;
      }
      for (int64_t b = 0; b < nvfp4::kChannelBlock / kScaleBlock; ++b) {
        bool inside = voxel >= 0 && c0 + b * kScaleBlock < g.channels;
        scales[b] =
            inside ? packed.scales[voxel * voxelScales + c0 / 16 + b] : 0;
      }
    };
    std::vector<std::array<uint8_t, 16>> naturalA(plan.tileM),
        naturalB(plan.tileN);
    uint8_t codes[kRowBytes];
    if (tma) {
      // The kernel's coordinates: the tile's first output position, the
      // tap's offsets, the channel block's byte column.
      auto pos = g.decomposeM(math, m0);
      std::array<int64_t, 4> start;
      std::array<int64_t, 3> offsets;
      for (unsigned a = 0; a < 3; ++a) {
        unsigned axis = 2 - a; // W first
        start[a] = pos[axis + 1] * g.strides[axis] - g.padLow[axis];
        offsets[a] = qrs[axis] * g.dilations[axis];
      }
      start[3] = pos[0];
      for (int64_t i = 0; i < plan.tileM; ++i) {
        tmaIm2colRow(tma->activationCodes, p.a.codes,
                     BlockScaledTmaPlan::codesColumn(cb), start, offsets, i,
                     codes);
        writeRow(aStage(stage), i, codes);
        tmaIm2colRow(tma->activationScales, p.a.scales,
                     BlockScaledTmaPlan::scalesColumn(cb), start, offsets, i,
                     naturalA[i].data());
      }
      for (int64_t j = 0; j < plan.tileN; ++j) {
        tmaTiledRow(tma->filterCodes, p.b.codes,
                    BlockScaledTmaPlan::codesColumn(cb), tap, n0, j, codes);
        writeRow(bStage(stage), j, codes);
        tmaTiledRow(tma->filterScales, p.b.scales,
                    BlockScaledTmaPlan::scalesColumn(cb), tap, n0, j,
                    naturalB[j].data());
      }
    }
    for (int64_t i = 0; !tma && i < plan.tileM; ++i) {
      int64_t voxel = -1, m = m0 + i;
      if (m < g.gemmM()) {
        auto pos = g.decomposeM(math, m);
        std::array<int64_t, 3> at;
        bool inside = true;
        for (unsigned axis = 0; axis < 3; ++axis) {
          at[axis] = pos[axis + 1] * g.strides[axis] - g.padLow[axis] +
                     qrs[axis] * g.dilations[axis];
          inside &= at[axis] >= 0 && at[axis] < g.inputSize[axis];
        }
        if (inside)
          voxel = ((pos[0] * g.inputSize[0] + at[0]) * g.inputSize[1] + at[1]) *
                      g.inputSize[2] +
                  at[2];
      }
      rowBytes(p.a, voxel, codes, naturalA[i].data());
      writeRow(aStage(stage), i, codes);
    }
    int64_t taps = g.window[0] * g.window[1] * g.window[2];
    for (int64_t j = 0; !tma && j < plan.tileN; ++j) {
      int64_t f = n0 + j;
      rowBytes(p.b, f < g.filters ? f * taps + tap : -1, codes,
               naturalB[j].data());
      writeRow(bStage(stage), j, codes);
    }
    // The scale atoms: MMA kk's 4 scales of row r at scaleAtomOffset(r, b).
    auto atoms = [&](const std::vector<std::array<uint8_t, 16>> &natural,
                     int64_t base) {
      int64_t rowAtoms = ceilDiv(int64_t(natural.size()), kAtomRows);
      for (int64_t kk = 0; kk < kMmasPerStep; ++kk)
        for (int64_t r = 0; r < int64_t(natural.size()); ++r)
          for (int64_t b = 0; b < kScalesPerMma; ++b) {
            int64_t offset = scaleAtomOffset(r, b);
            if (mutation == BlockScaledMutation::AtomTransposed)
              offset = (r % kAtomLanes) * kAtomRowBytes + b * 4 +
                       (r % kAtomRows) / kAtomLanes;
            shared[base +
                   BlockScaledPlan::scaleAtomBase(kk, r / kAtomRows, rowAtoms) +
                   offset] = natural[r][kk * kScalesPerMma + b];
          }
    };
    // Through TMA the boxes land in the scale areas as natural rows and
    // are permuted into the atoms in place (every word read first), as the
    // plan's scaleWordAtomOffset says; otherwise the atoms are written
    // directly.
    // As the kernel's MMA warp does it (BlockScaledKernel.cpp): lane l
    // takes rows l + 32 i, so the rows past the box up to a multiple of 32
    // (whatever earlier steps left there) are permuted too, into atom lanes
    // of rows past the tile; they must not land on a word the MMAs read.
    auto permuteInPlace = [&](const std::vector<std::array<uint8_t, 16>> &rows,
                              int64_t base) {
      int64_t n = int64_t(rows.size());
      for (int64_t r = 0; r < n; ++r)
        std::memcpy(&shared[base + r * kAtomRowBytes], rows[r].data(), 16);
      int64_t lanesRows = ceilDiv(n, kAtomLanes) * kAtomLanes;
      std::vector<uint32_t> words(4 * lanesRows);
      std::memcpy(words.data(), &shared[base], 16 * lanesRows);
      for (int64_t r = 0; r < lanesRows; ++r)
        for (int64_t kk = 0; kk < kMmasPerStep; ++kk)
          std::memcpy(
              &shared[base + BlockScaledPlan::scaleWordAtomOffset(r, kk, n)],
              &words[4 * r + kk], 4);
    };
    if (tma) {
      permuteInPlace(naturalA, aScales(stage));
      permuteInPlace(naturalB, bScales(stage));
    } else {
      atoms(naturalA, aScales(stage));
      atoms(naturalB, bScales(stage));
    }
    // tcgen05.cp.32x128b.warpx4 of each atom, through its descriptor.
    auto copy = [&](int64_t base, int64_t rows, auto column) {
      int64_t rowAtoms = ceilDiv(rows, kAtomRows);
      for (int64_t kk = 0; kk < kMmasPerStep; ++kk)
        for (int64_t a = 0; a < rowAtoms; ++a) {
          uint64_t desc = BlockScaledPlan::scaleAtomDescriptor(
              uint32_t(base + BlockScaledPlan::scaleAtomBase(kk, a, rowAtoms)));
          ASSERT_EQ(desc >> 61, 0u) << "scale atoms are not swizzled";
          int64_t start = int64_t(desc & 0x3FFF) << 4;
          int64_t sbo = int64_t((desc >> 32) & 0x3FFF) << 4;
          for (int64_t r = 0; r < kAtomLanes; ++r)
            for (int64_t w = 0; w < 4; ++w) {
              uint32_t word;
              std::memcpy(&word,
                          &shared[start + (r / 8) * sbo + (r % 8) * 16 + 4 * w],
                          4);
              for (int64_t quarter = 0; quarter < 4; ++quarter)
                tmem[(quarter * kAtomLanes + r) * plan.tmemColumns +
                     column(kk) + 4 * a + w] = word;
            }
        }
    };
    copy(aScales(stage), plan.tileM,
         [&](int64_t kk) { return plan.aScaleTmemColumn(kk); });
    copy(bScales(stage), plan.tileN,
         [&](int64_t kk) { return plan.bScaleTmemColumn(kk); });
  }

  /// A code of a K-major 128-byte-swizzled FP4 operand at `start`.
  uint8_t code(int64_t start, int64_t strideBytes, int64_t row, int64_t k,
               bool isA) const {
    int64_t address = start + (row / 8) * strideBytes + (row % 8) * 128 + k / 2;
    address ^= ((address >> 7) & 7) << 4;
    uint8_t byte = shared[address];
    bool swapped = isA && mutation == BlockScaledMutation::NibbleOrder;
    bool high = (k % 2 == 1) != swapped;
    return high ? byte >> 4 : byte & 0xF;
  }
  float scale(int64_t column, int64_t row, int64_t block) const {
    auto [lane, col] = scaleTmemWord(column, row);
    uint32_t word = tmem[lane * plan.tmemColumns + col];
    return nvfp4DecodeE4M3(uint8_t(word >> (8 * block)));
  }

  void mma(int64_t stage, int64_t kk, bool accumulate) {
    int64_t slice = mutation == BlockScaledMutation::SliceStride
                        ? kk * kMmaBytes / 2
                        : kk * kMmaBytes;
    uint64_t descA = SM100KernelPlan::sharedMemoryDescriptor(
        uint32_t(aStage(stage) + slice));
    uint64_t descB = SM100KernelPlan::sharedMemoryDescriptor(
        uint32_t(bStage(stage) + slice));
    uint32_t idesc = plan.instructionDescriptor();
    ASSERT_EQ((idesc >> 7) & 7, 1u) << "A is not E2M1";
    ASSERT_EQ((idesc >> 10) & 3, 1u) << "B is not E2M1";
    ASSERT_EQ((idesc >> 23) & 1, 0u) << "the scales are not UE4M3";
    ASSERT_EQ((idesc >> 15) & 3, 0u) << "FP4 operands must be K-major";
    ASSERT_EQ((idesc >> 4) & 3, 0u) << "B's scale-factor ID is not 0";
    ASSERT_EQ((idesc >> 29) & 3, 0u) << "A's scale-factor ID is not 0";
    int64_t m = int64_t((idesc >> 24) & 0x1F) << 4;
    int64_t n = int64_t((idesc >> 17) & 0x3F) << 3;
    ASSERT_EQ(m, plan.tileM);
    ASSERT_EQ(n, plan.tileN);
    int64_t startA = int64_t(descA & 0x3FFF) << 4,
            strideA = int64_t((descA >> 32) & 0x3FFF) << 4;
    int64_t startB = int64_t(descB & 0x3FFF) << 4,
            strideB = int64_t((descB >> 32) & 0x3FFF) << 4;
    int64_t aColumn = plan.aScaleTmemColumn(kk);
    int64_t bColumn =
        plan.bScaleTmemColumn(mutation == BlockScaledMutation::WrongScaleColumn
                                  ? (kk + 1) % kMmasPerStep
                                  : kk);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        long double sum = accumulate ? accumulator[i * plan.tileN + j] : 0;
        for (int64_t k = 0; k < nvfp4::kMmaK; ++k) {
          long double a = nvfp4DecodeE2M1(code(startA, strideA, i, k, true)) *
                          (long double)scale(aColumn, i, k / kScaleBlock);
          long double b = nvfp4DecodeE2M1(code(startB, strideB, j, k, false)) *
                          (long double)scale(bColumn, j, k / kScaleBlock);
          sum += a * b;
        }
        accumulator[i * plan.tileN + j] = sum;
      }
  }

  const ConvGeometry &g;
  const BlockScaledPlan &plan;
  const PackedConv &p;
  BlockScaledMutation mutation;
  const BlockScaledTmaPlan *tma;
  std::vector<uint8_t> shared;
  std::vector<uint32_t> tmem;
  std::vector<long double> accumulator;
};

/// The sums of the decoded operands over the GEMM K, in long double, from
/// the implicit im2col rows of the reference.
std::vector<long double> decodedGemm(const ConvGeometry &g,
                                     const PackedConv &p) {
  ReferenceConvProblem problem;
  problem.geometry = g;
  problem.filterLayout = FilterLayout::fqrsc;
  problem.input = &p.decodedA;
  problem.filter = &p.decodedB;
  int64_t k = g.gemmK();
  std::vector<long double> out(g.gemmM() * g.filters);
  for (int64_t m = 0; m < g.gemmM(); ++m) {
    std::vector<float> row = referenceIm2colRow(problem, m);
    for (int64_t f = 0; f < g.filters; ++f) {
      long double sum = 0;
      for (int64_t i = 0; i < k; ++i)
        sum += (long double)row[i] * p.decodedB.get(f * k + i);
      out[m * g.filters + f] = sum;
    }
  }
  return out;
}

/// Replays `problem` and checks it; with a mutation, returns whether the
/// result differed from the reference.
/// With `viaTma`, the operands are loaded through the TMA maps of
/// SM100BlockScaledTma.h, after `corruptMaps` (a misencoded map to catch).
bool replayBlockScaled(
    const BlockScaledProblem &problem,
    BlockScaledMutation mutation = BlockScaledMutation::None,
    bool viaTma = false,
    std::function<void(BlockScaledTmaPlan &)> corruptMaps = {}) {
  const ConvGeometry &g = problem.g;
  BlockScaledPlan plan;
  std::optional<std::string> error =
      BlockScaledPlan::build(g, 128, problem.tileN, problem.stages, plan);
  EXPECT_FALSE(error) << *error;
  if (error)
    return false;
  BlockScaledTmaPlan tma;
  if (viaTma) {
    std::optional<std::string> tmaError =
        BlockScaledTmaPlan::build(g, plan, tma);
    EXPECT_FALSE(tmaError) << *tmaError;
    if (tmaError)
      return false;
    if (corruptMaps)
      corruptMaps(tma);
  }
  PackedConv p = packConv(g, 7);
  std::vector<long double> got =
      BlockScaledModel(g, plan, p, mutation, viaTma ? &tma : nullptr).run();
  std::vector<long double> expected = decodedGemm(g, p);
  int64_t differing = 0;
  for (size_t i = 0; i < got.size(); ++i)
    differing += got[i] != expected[i];
  if (mutation != BlockScaledMutation::None || corruptMaps)
    return differing > 0;
  EXPECT_EQ(differing, 0) << "of " << got.size() << " outputs";

  // The epilogue's result against the fake-quantized convolution (both
  // operands dequantized in f32, spec/nvfp4.md): equal up to the f32
  // rounding of each dequantized value.
  float gsA = p.amaxA / 2688.0f, gsB = p.amaxB / 2688.0f;
  HostTensor inputF32 = HostTensor::zeros(ElementType::f32, p.input.shape);
  HostTensor filterF32 = HostTensor::zeros(ElementType::f32, p.filter.shape);
  for (int64_t i = 0; i < p.input.numElements(); ++i)
    inputF32.set(i, p.input.get(i));
  for (int64_t i = 0; i < p.filter.numElements(); ++i)
    filterF32.set(i, p.filter.get(i));
  HostTensor fakeFilter = referenceQuantize(filterF32, 16, p.amaxB, 1, 4);
  ReferenceConvProblem fake;
  fake.geometry = g;
  fake.filterLayout = FilterLayout::fqrsc;
  fake.input = &inputF32;
  fake.filter = &fakeFilter;
  fake.inputQuantBlockSize = 16;
  fake.inputQuantAmax = p.amaxA;
  std::vector<double> reference = referenceConv(fake);
  double errorSquares = 0, normSquares = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    float result = float(got[i]) * (gsA * gsB);
    errorSquares += (result - reference[i]) * (result - reference[i]);
    normSquares += reference[i] * reference[i];
  }
  EXPECT_GT(normSquares, 0.0);
  EXPECT_LT(std::sqrt(errorSquares / normSquares), 1e-6)
      << "the real NVFP4 result is not the fake-quantized convolution";
  return true;
}

ConvGeometry blockScaledGeometry(std::array<int64_t, 3> input, int64_t c,
                                 std::array<int64_t, 3> window, int64_t f,
                                 int64_t batch = 1) {
  ConvGeometry g;
  g.batch = batch;
  g.inputSize = input;
  g.channels = c;
  g.window = window;
  g.filters = f;
  return g;
}

TEST(SM100BlockScaledModel, CausalThreeByThreeTwoChannelBlocks) {
  // C = 320: a full 256-channel step and a partial one (zeros past C);
  // M = 4 * 6 * 6 = 144: a ragged second M tile.
  BlockScaledProblem p{blockScaledGeometry({4, 6, 6}, 320, {3, 3, 3}, 32), 32};
  p.g.padLow = {2, 1, 1};
  p.g.padHigh = {0, 1, 1};
  replayBlockScaled(p);
}

TEST(SM100BlockScaledModel, StridesDilationsBatchAndFilterTail) {
  // C = 64 (a quarter of a step), F = 40 in a 48-wide tile, batch 2.
  BlockScaledProblem p{
      blockScaledGeometry({5, 9, 9}, 64, {2, 3, 3}, 40, /*batch=*/2), 48};
  p.g.strides = {1, 2, 2};
  p.g.dilations = {2, 1, 2};
  p.g.padLow = {1, 1, 2};
  p.g.padHigh = {0, 1, 2};
  replayBlockScaled(p);
}

TEST(SM100BlockScaledModel, WideTileTwoScaleAtomsForB) {
  // tile_n = 256: B's scales take two atoms (8 TMEM columns per MMA) and a
  // single accumulator buffer leaves room for the scale columns.
  BlockScaledProblem p{blockScaledGeometry({2, 8, 8}, 256, {1, 1, 1}, 256), 256,
                       2};
  replayBlockScaled(p);
}

TEST(SM100BlockScaledModel, MutationsFail) {
  BlockScaledProblem p{blockScaledGeometry({3, 5, 5}, 96, {3, 1, 3}, 144), 160};
  p.g.padLow = {1, 0, 1};
  p.g.padHigh = {1, 0, 1};
  for (BlockScaledMutation mutation :
       {BlockScaledMutation::NibbleOrder, BlockScaledMutation::AtomTransposed,
        BlockScaledMutation::WrongScaleColumn,
        BlockScaledMutation::SliceStride})
    EXPECT_TRUE(replayBlockScaled(p, mutation))
        << "mutation " << int(mutation) << " went unnoticed";
}

// Through the TMA maps (C % 256 == 0, what they take): the boxes at the
// kernel's coordinates deliver the rows the MMAs need, halo, ragged M tile,
// batch wrap and filter tail included.
TEST(SM100BlockScaledModel, ViaTmaCausalTwoStepsBatchWrap) {
  // C = 512: two K steps a tap; M = 2 * 3 * 5 * 6 = 180 rows walk across
  // the batch inside the first tile.
  BlockScaledProblem p{
      blockScaledGeometry({3, 5, 6}, 512, {3, 3, 3}, 40, /*batch=*/2), 48};
  p.g.padLow = {2, 1, 1};
  p.g.padHigh = {0, 1, 1};
  replayBlockScaled(p, BlockScaledMutation::None, /*viaTma=*/true);
}

TEST(SM100BlockScaledModel, ViaTmaStridesAndDilations) {
  BlockScaledProblem p{blockScaledGeometry({5, 11, 10}, 256, {2, 3, 3}, 32),
                       32};
  p.g.strides = {1, 2, 3};
  p.g.dilations = {2, 2, 1};
  p.g.padLow = {1, 2, 1};
  p.g.padHigh = {1, 2, 1};
  replayBlockScaled(p, BlockScaledMutation::None, /*viaTma=*/true);
}

// A map misencoded in any one field is caught by the replay.
TEST(SM100BlockScaledModel, ViaTmaCorruptMapsFail) {
  BlockScaledProblem p{
      blockScaledGeometry({2, 4, 5}, 256, {3, 3, 3}, 16, /*batch=*/2), 16};
  p.g.padLow = {2, 1, 1};
  p.g.padHigh = {0, 1, 1};
  std::vector<
      std::pair<const char *, std::function<void(BlockScaledTmaPlan &)>>>
      corruptions = {
          {"activation scale stride of W",
           [](BlockScaledTmaPlan &t) {
             t.activationScales.globalStrides[0] += 16;
           }},
          {"activation code corner",
           [](BlockScaledTmaPlan &t) { t.activationCodes.lowerCorner[1] = 0; }},
          {"filter scale tap stride",
           [](BlockScaledTmaPlan &t) {
             t.filterScales.globalStrides[0] += 16;
           }},
          {"filter code stride of F",
           [](BlockScaledTmaPlan &t) {
             t.filterCodes.globalStrides[1] -= 128;
           }},
          {"activation element stride of H",
           [](BlockScaledTmaPlan &t) {
             t.activationCodes.elementStrides[2] = 2;
           }},
      };
  for (auto &[what, corrupt] : corruptions)
    EXPECT_TRUE(replayBlockScaled(p, BlockScaledMutation::None,
                                  /*viaTma=*/true, corrupt))
        << what << " went unnoticed";
}

} // namespace
