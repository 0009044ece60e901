//===- SM100KernelPlan.h - the shape of an sm100 kernel ---------*- C++ -*-===//
//
// Everything the sm100 lowering decides before emitting IR, in one place:
// warp roles, the K steps, the tensor memory (TMEM) of the accumulators, the
// shared-memory layout of the TMA ring, the mbarriers and the epilogue's
// staging tile, and the tcgen05 descriptors. Unit-tested without a GPU.
//
// The kernel (cta_group::1: one CTA computes a tile_m = 128 row tile;
// cta_group::2: a 2-CTA cluster computes a 256-row tile, see ctaGroup):
//   warp 0     TMA producer: one thread issues, per K step (one filter tap x
//              64 channels), the rank-5 TMA im2col load of the activation
//              tile and the tiled load of the FQRSC filter tile into the
//              128-byte-swizzled ring, exactly as the sm90 producer does;
//   warp 1     MMA: allocates the TMEM columns (whole warp), and one elected
//              thread issues per step 4 tcgen05.mma kind::f16 (K = 16 each)
//              into the tile's accumulator buffer, then commits the stage
//              back to the producer and, after the tile's last step, the
//              accumulator to the epilogue;
//   warps 2-5  epilogue: warp w reads TMEM lanes 32 (w % 4) .. + 31 (the
//              lanes a warp may reach) with tcgen05.ld 32x32b, one row per
//              thread, and hands the accumulator buffer back before the
//              shared staged epilogue (bias, activation, residual, cast,
//              stores or split-K atomics) writes the tile out.
// Persistent: min(multiprocessors, tiles) CTAs walk the tiles. With two
// accumulator buffers (2 x tile_n columns fit the 512 of TMEM for every
// tile_n up to 256) the epilogue of tile i overlaps the MMAs of tile i + 1.
//
// Both operand tiles are the canonical K-major 128-byte-swizzled layout: 8-row
// atoms of 1024 bytes, each k16 slice 32 bytes further; the shared-memory
// descriptor is the tcgen05 encoding (Tcgen05Descriptors.h).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM100_SM100KERNELPLAN_H
#define CONV3D_TARGET_SM100_SM100KERNELPLAN_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"
#include "conv3d/Target/SM100/Tcgen05Descriptors.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::conv3d::sm100 {

inline constexpr int64_t kWarpThreads = 32;
/// Warp roles.
inline constexpr int64_t kProducerWarp = 0, kMmaWarp = 1,
                         kFirstEpilogueWarp = 2, kEpilogueWarps = 4;
inline constexpr int64_t kEpilogueThreads = kEpilogueWarps * kWarpThreads;
inline constexpr int64_t kThreads =
    (kFirstEpilogueWarp + kEpilogueWarps) * kWarpThreads;
/// Channels of one TMA box row: 64 16-bit elements = one 128-byte swizzle
/// span; the K of one tcgen05.mma kind::f16.
inline constexpr int64_t kChannelBlock = 64, kRowBytes = 128, kMmaK = 16;
/// Tensor memory: 128 lanes x 512 columns of 32 bits per CTA.
inline constexpr int64_t kTmemLanes = 128, kTmemColumns = 512;
/// Dynamic shared memory a block can opt into (227 KiB, as on sm90).
inline constexpr int64_t kMaxSharedBytes = 232448;
/// The 128-byte swizzle needs 1024-byte-aligned tiles; the dynamic shared
/// memory base is aligned at run time inside this much slack.
inline constexpr int64_t kAlignmentSlack = 1024;
/// Named barrier of the epilogue warps (0 is the CTA's).
inline constexpr int64_t kEpilogueBarrierId = 1;

struct SM100KernelPlan {
  int64_t tileM = 0, tileN = 0, stages = 0;
  /// CTAs one MMA spans: 1, or 2 for tile_m = 256 (cta_group::2 over a
  /// 2-CTA cluster: each CTA loads its 128 rows of A and half of B's rows,
  /// holds its 128 accumulator rows in its TMEM and runs their epilogue;
  /// the even CTA's MMA warp issues for both, both CTAs' loads complete on
  /// its full barriers and its commits arrive on both CTAs' barriers).
  int64_t ctaGroup = 1;

  // K steps: (tap, channel block) pairs, q outermost (a depth-slice range of
  // steps is contiguous).
  int64_t channelBlocks = 0, taps = 0, stepsPerSlice = 0, totalSteps = 0;
  KOrder kOrder = KOrder::taps_outer;
  int64_t splitK = 1;

  // Tensor memory: `accumulatorBuffers` accumulators of tileN f32 columns
  // (buffer b at column b * tileN), `tmemColumns` allocated (a power of two,
  // at least 32).
  int64_t accumulatorBuffers = 1, tmemColumns = 0;

  // The epilogue: the tile's columns in `epilogueChunks` chunks through an
  // f32 staging tile of tileM x stagingStride, `loadColumns` columns per
  // tcgen05.ld (32x32b.x<loadColumns>).
  int64_t epilogueChunks = 1, chunkColumns = 0, loadColumns = 0;
  int64_t stagingStride = 0, stagingBytes = 0;

  // Shared memory of each CTA, from the run-time-aligned base (bytes): the A
  // ring (128 rows a stage), the B ring (tileN / ctaGroup rows), the staging
  // tile (128 rows), the mbarriers (full and empty per stage, then
  // accumulator-full and accumulator-empty per buffer) and the 4-byte slot
  // tcgen05.alloc writes the TMEM address to.
  int64_t aStageBytes = 0, bStageBytes = 0, pipelineBytes = 0;
  /// The block-scaled kernel's scale areas of a stage (both operands'),
  /// after the A and B rings in the pipeline; 0 for kind::f16.
  int64_t scaleStageBytes = 0;
  int64_t stagingOffset = 0, barrierOffset = 0, tmemSlotOffset = 0;
  int64_t sharedBytes = 0;
  /// Bytes one K step's TMA loads deliver, both CTAs' for cta_group::2 (the
  /// full barrier's transaction count; out-of-bounds fill included).
  int64_t stepBytes = 0;
  /// Output elements per epilogue access.
  int64_t outputVector = 1;

  /// Builds the plan, or returns why the configuration cannot be lowered to
  /// the sm100 kernel for this convolution. `warpsM` x `warpsN` must be 4 x
  /// 1 (the four epilogue warps) and `tileK` 64.
  static std::optional<std::string>
  build(const ConvGeometry &geometry, int64_t tileM, int64_t tileN,
        int64_t tileK, int64_t stages, int64_t warpsM, int64_t warpsN,
        KOrder kOrder, int64_t splitK, int64_t epilogueAlignment,
        SM100KernelPlan &plan);

  /// Lays out the shared memory and the epilogue (tile sizes, ctaGroup,
  /// stages, scaleStageBytes and the accumulator buffers set): the rings,
  /// then the fewest column chunks of the staging tile (whole multiples of
  /// 8 columns, the tcgen05.ld granularity used) that fit beside them, the
  /// barriers and the TMEM slot. Returns whether it fits.
  bool layOutSharedMemory();

  /// The most stages (up to `limit`) of a tileM x tileN configuration that
  /// fit in shared memory beside the epilogue's staging, or 0 if not even
  /// two do.
  static int64_t maxStages(int64_t tileM, int64_t tileN, int64_t limit);

  // Barrier offsets (from the aligned base).
  int64_t fullBarrierOffset(int64_t stage) const {
    return barrierOffset + 8 * stage;
  }
  int64_t emptyBarrierOffset(int64_t stage) const {
    return barrierOffset + 8 * (stages + stage);
  }
  int64_t accFullBarrierOffset(int64_t buffer) const {
    return barrierOffset + 8 * (2 * stages + buffer);
  }
  int64_t accEmptyBarrierOffset(int64_t buffer) const {
    return barrierOffset + 8 * (2 * stages + accumulatorBuffers + buffer);
  }

  /// The kind::f16 instruction descriptor of the kernel's MMA: bf16 or f16
  /// operands (`bf16`), f32 accumulators, both K-major, M = tileM, N = tileN.
  uint32_t instructionDescriptor(bool bf16) const {
    Tcgen05Format format = bf16 ? Tcgen05Format::BF16 : Tcgen05Format::F16;
    return Tcgen05InstrDescriptor{Tcgen05AccFormat::F32,
                                  format,
                                  format,
                                  false,
                                  false,
                                  false,
                                  false,
                                  tileM,
                                  tileN}
        .encode();
  }
  /// The shared-memory descriptor of a K-major 128-byte-swizzled tile at
  /// `address`: 8-row atoms 1024 bytes apart.
  static uint64_t sharedMemoryDescriptor(uint32_t address) {
    Tcgen05SmemDescriptor descriptor;
    descriptor.address = address;
    return descriptor.encode();
  }
  /// The descriptor's address-independent bits.
  static uint64_t descriptorTemplate() { return sharedMemoryDescriptor(0); }
};

} // namespace mlir::conv3d::sm100

#endif // CONV3D_TARGET_SM100_SM100KERNELPLAN_H
