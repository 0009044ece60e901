//===- SM90KernelPlan.h - the shape of an sm90 convolution kernel -*- C++ -*-//
//
// Everything the sm90 lowering decides before emitting IR, in one place:
// warp roles, the K steps, the shared-memory layout of the TMA ring, the
// mbarriers and the epilogue's staging tile, and the wgmma shared-memory
// descriptors. Unit-tested without a GPU.
//
// The kernel: one producer warpgroup (one thread issues the TMA loads) and
// one or two consumer warpgroups (wgmma, then the epilogue), persistent: as
// many blocks as the device has multiprocessors walk the tiles, and the
// producer loads the next tile's steps while the consumers run the
// epilogue of the last one (its staging tile has its own shared memory). A K
// step is one filter tap x 64 channels: the activation rows come from one
// rank-5 TMA im2col load (tile_m output positions x 64 channels, 128-byte
// swizzle), the filter rows from one tiled TMA load of the FQRSC filter (tile_n
// filters x 64 channels). Both tiles are then the canonical K-major
// 128-byte-swizzled layout that wgmma reads: 8-row atoms of 1024 bytes,
// each k16 slice 32 bytes further.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM90_SM90KERNELPLAN_H
#define CONV3D_TARGET_SM90_SM90KERNELPLAN_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::conv3d::sm90 {

inline constexpr int64_t kWarpgroupThreads = 128;
/// Channels of one TMA box row: 64 16-bit elements = one 128-byte swizzle
/// span.
inline constexpr int64_t kChannelBlock = 64;
inline constexpr int64_t kRowBytes = 128;
/// Rows of one wgmma (m64nNk16) and the K of one instruction.
inline constexpr int64_t kWgmmaM = 64, kWgmmaK = 16;
/// The most blocks of a cluster that reduce split-K partial sums among
/// themselves. Measured on an H200 (bench/RESULTS.md, 2026-11-27): a
/// 512-channel 2x7x7 layer in 64 x 128 tiles took 23.0 us split 4 ways in
/// clusters, 31.5 us split 8 ways in clusters (clusters of 8 do not all fit
/// the machine at once), 20.9 us split 16 ways through the workspace; so
/// more splits than 4 go through the workspace.
inline constexpr int64_t kMaxSplitCluster = 4;
/// Dynamic shared memory an H100 block can opt into (227 KiB).
inline constexpr int64_t kMaxSharedBytes = 232448;
/// The 128-byte swizzle needs 1024-byte-aligned tiles; the dynamic shared
/// memory base is aligned at run time inside this much slack.
inline constexpr int64_t kAlignmentSlack = 1024;
/// Registers of the producer and consumer warpgroups (setmaxnreg): 128 x 40
/// + 256 x 232 fits the 64K register file of one 384-thread block.
inline constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;
/// Named barriers of the consumer warpgroups: 1 (cooperative: both) or
/// 1 + group (ping-pong) around the epilogue's staging; with NVFP4 in the
/// tile, kQuantBarrierBase + group among a warpgroup's 128 threads once
/// they quantized a step (0 is __syncthreads).
inline constexpr int64_t kQuantBarrierBase = 3;

struct SM90KernelPlan {
  int64_t tileM = 0, tileN = 0, stages = 0;
  /// Consumer warpgroups. Cooperative: each owns tileM / consumerGroups
  /// rows of every tile. Ping-pong: two, each owning whole tiles, taking
  /// turns (the ring's order alternates their mainloops; each one's
  /// epilogue overlaps the other's MMAs). A warpgroup computes its rows as
  /// `mmaTilesM` m64 wgmmas per k16.
  int64_t consumerGroups = 1, mmaTilesM = 1;
  bool pingPong = false;
  /// Consumer warps that read each stage (the empty barrier's count).
  int64_t warpsPerTile = 4;
  int64_t threads = 0;

  // K steps: (tap, channel block) pairs, q outermost (so a depth-slice
  // range of steps is contiguous).
  int64_t channelBlocks = 0, taps = 0, stepsPerSlice = 0, totalSteps = 0;
  KOrder kOrder = KOrder::taps_outer;
  int64_t splitK = 1;

  // Shared memory, from the run-time-aligned base (bytes): the A ring, the
  // B ring, the epilogue's f32 staging tile (tileM x tileN / epilogueChunks:
  // wide tiles are written out in column chunks so that the staging fits
  // beside the ring), the full and empty mbarriers (one each per stage),
  // and for ping-pong one order barrier per consumer warpgroup.
  int64_t aStageBytes = 0, bStageBytes = 0, pipelineBytes = 0;
  /// Ping-pong: one staging tile per consumer warpgroup, `stagingBytes`
  /// each.
  int64_t epilogueChunks = 1, stagingStride = 0, stagingBytes = 0;
  int64_t stagingOffset = 0, barrierOffset = 0, sharedBytes = 0;
  /// Bytes one K step's two TMA loads deliver (the full barrier's
  /// transaction count; out-of-bounds fill included).
  int64_t stepBytes = 0;
  /// Output elements per epilogue access.
  int64_t outputVector = 1;
  /// The TMA-store epilogue: the accumulators, epilogue applied in
  /// registers, go to a 16-bit staging tile in boxes of `storeBoxColumns`
  /// (64, 128-byte swizzled; or 32, 64-byte swizzled, for N tiles such as
  /// 96), `epilogueChunks` of them, `stagingBytes` in all, which one thread
  /// stores with TMA while the consumers go on with the next tile.
  /// Otherwise the f32 staging above and the shared staged epilogue.
  bool tmaStore = false;
  int64_t storeBoxColumns = 0;
  /// Blocks per cluster along M (1 or 2). With 2, the blocks of a cluster
  /// take tiles 2p and 2p + 1 of an N tile (the second past the last row
  /// when the count is odd: it loads zeros and stores nothing), each loads
  /// half of every filter tile, multicast into both blocks' stages, and each
  /// stage goes back to the producers only once both blocks' consumers
  /// released it (their empty barriers count both blocks' warps).
  int64_t clusterM = 1;
  /// Split-K reduced in a cluster (split_k blocks a cluster, 2 to
  /// kMaxSplitCluster): the blocks of a cluster compute one tile, block r
  /// taking the K range of split r (its rank in the cluster). Each stages its
  /// f32 partial sums; once every block's are staged (the `ready` mbarrier,
  /// one arrival per block), block r adds the rows it owns
  /// (`splitRowsPerBlock` of them) from every block's staging tile, through
  /// distributed shared memory, in split order, and applies the epilogue to
  /// them; the `free` mbarrier tells each block that the others are done
  /// reading its staging. One kernel and no workspace, and the same sums,
  /// bit for bit, as the workspace slabs conv3d.epilogue adds.
  int64_t splitCluster = 1;
  int64_t splitRowsPerBlock = 0;
  /// The ready and free mbarriers (8 bytes each), after the ring's.
  int64_t splitBarrierOffset = 0;

  /// NVFP4 quantization of the input in the tile, with blocks of
  /// `quantBlockSize` channels (16, 32 or 64: a block lies in one row of a
  /// stage, whole 16-byte chunks). Each consumer warpgroup quantizes in place
  /// the `quantRows` A rows its own wgmmas read, one K step ahead of them, a
  /// block per thread at a time, `quantBlocksPerThread` blocks per thread
  /// (the last round partial where the blocks do not fill it).
  std::optional<int64_t> quantBlockSize;
  int64_t quantRows = 0, quantBlocksPerThread = 0;

  /// The halo mainloop (mainloop = halo). A tile is `haloOutRows` (tileM /
  /// 64) output rows of 64 consecutive output columns at one (n, d); each
  /// m64 wgmma computes one of those rows. Two rings:
  /// - A: per A step (a depth tap q x `haloChannels` channels), one tiled
  ///   TMA load of the input patch the tile reads for that q: `haloRows`
  ///   input rows of `haloColumns` pixels (the window's reach in W rounded
  ///   up to whole 8-pixel swizzle atoms, so that every input row starts on
  ///   one), each pixel one swizzled row of `operandRowBytes`; `aStages`
  ///   stages of `aStageBytes`, from offset 0;
  /// - B: per B step (one (r, s) tap of the A step), the filter rows of the
  ///   tap and channel block; `stages` stages of `bStageBytes`, after the A
  ///   ring.
  /// The consumers read tap (r, s)'s A operand for output row i at patch
  /// row (i + r * dil_h) * haloColumns + s * dil_w: wgmma swizzles by
  /// address bits, so a start on any row of an atom reads what TMA wrote
  /// (checked on the H100: scripts/gpu/wgmma_row_offset.cu).
  bool halo = false;
  int64_t haloOutRows = 0, haloRows = 0, haloColumns = 0;
  int64_t haloChannels = kChannelBlock, operandRowBytes = kRowBytes;
  int64_t aStages = 0, aSteps = 0, tapsPerAStep = 0;
  /// Halo: the A ring's full and empty barriers (8 bytes a stage each),
  /// after the B ring's.
  int64_t aBarrierOffset = 0;

  /// Builds the plan, or returns why the configuration cannot be lowered to
  /// the sm90 kernel for this convolution. `warpsM` (4 per consumer
  /// warpgroup) and `tileK` (64) come from the configuration.
  /// `outputTakesTmaStore`: the output is a dense 16-bit [M][F] matrix with
  /// 16-byte rows that is overwritten without a residual (the lowering
  /// checks); the plan then stores N tiles that are whole 64-column boxes
  /// by TMA. `quantBlockSize`: the input is NVFP4-quantized in the tile
  /// with blocks of that size (the host-side check, tmaIm2colProblem,
  /// has made sure C is a multiple of it). `reduceSplitsInCluster`: the
  /// split-K partial sums are reduced in the kernel (splitCluster) rather
  /// than stored into a workspace.
  static std::optional<std::string>
  build(const ConvGeometry &geometry, int64_t tileM, int64_t tileN,
        int64_t tileK, int64_t stages, int64_t warpsM, int64_t warpsN,
        KOrder kOrder, int64_t splitK, int64_t epilogueAlignment,
        SM90KernelPlan &plan,
        KernelSchedule schedule = KernelSchedule::cooperative,
        bool outputTakesTmaStore = false,
        std::optional<int64_t> quantBlockSize = std::nullopt,
        int64_t clusterM = 1, Mainloop mainloop = Mainloop::im2col,
        bool reduceSplitsInCluster = false);

  /// Why split-K partial sums of this configuration cannot be reduced in a
  /// cluster (splitCluster), or none.
  static std::optional<std::string> splitClusterProblem(int64_t splitK,
                                                        KernelSchedule schedule,
                                                        int64_t clusterM,
                                                        Mainloop mainloop);

  /// The deepest filter ring, at most `maxStages`, for which the halo
  /// mainloop's plan of `tileM` x `tileN` cooperative tiles (two consumer
  /// warpgroups, TMA-stored output) leaves room for two patches; none if
  /// even 2 stages do not fit or the plan refuses the tile.
  static std::optional<int64_t> deepestHaloStages(const ConvGeometry &g,
                                                  int64_t tileM, int64_t tileN,
                                                  int64_t maxStages = 8);

  /// Columns of a TMA-store box for an N tile of `tileN`: 64 (one 128-byte
  /// swizzle span), 32 (64-byte swizzle, for N tiles such as 96), or 0 when
  /// whole boxes cannot cover it.
  static int64_t storeBoxColumnsFor(int64_t tileN) {
    return tileN % kChannelBlock == 0         ? kChannelBlock
           : tileN % (kChannelBlock / 2) == 0 ? kChannelBlock / 2
                                              : 0;
  }

  /// Blocks a warpgroup quantizes per stage (its rows x blocks per row).
  int64_t quantBlocks() const {
    return quantRows * (kChannelBlock / *quantBlockSize);
  }

  /// The byte offset, from the warpgroup's first row of a stage, of 16-byte
  /// chunk `v` of NVFP4 block `id` (0 .. quantBlocks(): row id / blocks per
  /// row, the row's (id % blocks per row)-th block). TMA's 128-byte swizzle
  /// keeps logical chunk j of row r at chunk j ^ (r % 8) (the stage and the
  /// warpgroup's first row, a multiple of 64, are 1024-byte aligned).
  /// A template over the arithmetic (the IR in the kernel, integers in the
  /// unit tests, which check that a wavefront's 8 chunks hit 8 distinct
  /// bank groups).
  template <typename Math>
  typename Math::Value quantChunkOffset(Math &math, typename Math::Value id,
                                        int64_t v) const {
    int64_t blocksPerRow = kChannelBlock / *quantBlockSize;
    int64_t chunksPerBlock = *quantBlockSize / 8;
    auto row = math.div(id, blocksPerRow);
    auto logical = math.add(
        math.mul(math.rem(id, blocksPerRow), chunksPerBlock), math.constant(v));
    auto physical = math.bitXor(logical, math.bitAnd(row, 7));
    return math.add(math.mul(row, kRowBytes), math.mul(physical, 16));
  }

  /// A wgmma shared-memory matrix descriptor for a 128-byte-swizzled
  /// K-major tile at shared address `address` (a multiple of 16):
  /// bits 0-13 address >> 4, 16-29 leading byte offset >> 4 (1: unused
  /// when K fits one swizzle span), 32-45 stride byte offset >> 4 (1024
  /// bytes between 8-row atoms), 62-63 layout (1 = 128-byte swizzle).
  static uint64_t sharedMemoryDescriptor(uint64_t address) {
    return descriptorTemplate() | ((address & 0x3FFFF) >> 4);
  }
  /// The descriptor's address-independent bits for rows of `rowBytes`:
  /// 128 (128-byte swizzle, layout 1) or 64 (64-byte swizzle, layout 2;
  /// 512-byte atoms).
  static uint64_t descriptorTemplate(int64_t rowBytes = kRowBytes) {
    return (uint64_t(1) << 16) | (uint64_t(8 * rowBytes >> 4) << 32) |
           (uint64_t(rowBytes == kRowBytes ? 1 : 2) << 62);
  }
};

} // namespace mlir::conv3d::sm90

#endif // CONV3D_TARGET_SM90_SM90KERNELPLAN_H
