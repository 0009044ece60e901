//===- SM80KernelPlan.h - the shape of an sm80 convolution kernel -*- C++
//-*-===//
//
// Everything the sm80 lowering decides before emitting IR, computed from the
// tile configuration and the convolution in one place: thread and warp
// tiling, how each operand is loaded (16/8/4-byte cp.async with zero-fill,
// or a register-staged path for NVFP4 quantization, the input prologue and
// channel counts that are not a multiple of 2), the shared-memory layout and
// its XOR swizzle, and the ldmatrix/mma.sync fragment addressing.
//
// The layout formulas are templates over an integer arithmetic: the kernel
// emitter instantiates them with IR builders, the unit tests with plain
// integers (checking bank-conflict freedom and fragment coverage on a
// machine without a GPU).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM80_SM80KERNELPLAN_H
#define CONV3D_TARGET_SM80_SM80KERNELPLAN_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace mlir::conv3d::sm80 {

/// mma.sync.m16n8k16 and ldmatrix constants.
inline constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;
inline constexpr int64_t kWarpSize = 32;
/// Shared memory an sm_80 block can opt into (A100: 163 KiB).
inline constexpr int64_t kMaxSharedBytes = 166912;

/// Integer arithmetic with the bit operations the layouts need, on plain
/// integers (tests) or IR (see KernelMath in the lowering).
struct ScalarLayoutMath : ScalarIndexMath {
  Value bitXor(Value a, Value b) const { return a ^ b; }
  Value bitAnd(Value a, int64_t c) const { return a & c; }
};

/// A row-major tile of `rows` x `cols` 16-bit elements in shared memory whose
/// 16-byte chunks are XOR-swizzled so that any 8 consecutive rows at the
/// same logical chunk (what one ldmatrix phase reads) hit 8 distinct
/// 16-byte bank slots of a 128-byte line.
///
/// With R chunks per row, row r starts at slot r*R mod 8. Let g be the
/// largest power of two dividing R, capped at 8: those starting slots repeat
/// every 8/g rows, g times within 8 rows. XOR-ing the low log2(g) bits of
/// the chunk index with (r / (8/g)) mod g separates the repeats, and keeps
/// every chunk inside its aligned group of g chunks, i.e. inside its row.
struct SwizzledTile {
  int64_t rows = 0, cols = 0;

  int64_t chunksPerRow() const { return cols / 8; }
  /// The swizzle group g (a power of two, at most 8).
  int64_t group() const {
    int64_t r = chunksPerRow();
    return std::min<int64_t>(8, r & -r);
  }
  /// Rows after which the starting bank slots repeat.
  int64_t rowsPerLine() const { return 8 / group(); }
  int64_t mask() const { return group() - 1; }
  int64_t elements() const { return rows * cols; }

  /// Element offset of (row, col); `col` may be any element of its chunk.
  template <typename Math>
  typename Math::Value offset(Math &math, typename Math::Value row,
                              typename Math::Value col) const {
    auto chunk = math.div(col, 8);
    auto within = math.rem(col, 8);
    auto phase = math.bitAnd(math.div(row, rowsPerLine()), mask());
    auto physical = math.bitXor(chunk, phase);
    return math.add(math.add(math.mul(row, cols), math.mul(physical, 8)),
                    within);
  }
};

/// How an operand tile travels from global to shared memory.
struct OperandLoad {
  /// Elements per global access: 8, 4 or 2 with cp.async (16, 8, 4 bytes),
  /// or any with the register-staged path.
  int64_t vector = 8;
  /// cp.async into the ring (true) or loads into registers, optional
  /// quantization, stores to shared memory (false).
  bool async = true;
  /// Elements one thread handles as a unit per access group: `vector`, or
  /// the NVFP4 block size on the quantizing path (a thread owns whole
  /// blocks so it can take their maximum).
  int64_t unit = 8;
  /// Units per tile and per thread.
  int64_t unitsPerTile = 0;
  int64_t unitsPerThread = 0;
  /// 16-byte cp.async copies through L1 (.ca) rather than L2 only (.cg).
  bool cacheInL1 = false;
};

/// What the operands' memory layouts allow vector accesses to assume: for
/// each, the largest power of two up to 8 dividing its offset and every
/// stride but the unit innermost one, in elements. Identity layouts allow 8.
struct OperandAlignment {
  int64_t input = 8;
  int64_t filter = 8;
  /// Output, residual and bias together (the epilogue's vectors).
  int64_t epilogue = 8;
  /// The input is a slice of wider voxels (a group's channels of a grouped
  /// convolution): its rows are pieces of longer voxel rows.
  bool inputChannelSlice = false;
};

struct SM80KernelPlan {
  // Block tile and pipeline.
  int64_t tileM = 0, tileN = 0, tileK = 0, stages = 2;
  int64_t warpsM = 1, warpsN = 1, threads = 32;
  int64_t warpTileM = 0, warpTileN = 0;
  int64_t mmaTilesM = 0, mmaTilesN = 0, kSteps = 0;
  KOrder kOrder = KOrder::taps_outer;
  int64_t splitK = 1;

  // Operands. A is [tileM][tileK]; B is [tileK][tileN] for QRSCF filters
  // (F contiguous, read with ldmatrix.trans) or [tileN][tileK] for FQRSC
  // (K contiguous).
  OperandLoad a, b;
  bool bKContiguous = false;
  SwizzledTile aTile, bTile;
  std::optional<int64_t> quantBlockSize;
  /// NVFP4 on a cp.async A tile: the copies land in the ring as usual and
  /// the threads then quantize whole blocks in place, one stage ahead of
  /// the MMAs (needs 3+ stages: step t+1 must have landed while step t is
  /// computed). Otherwise quantization runs on the register-staged path.
  bool quantizeInShared = false;
  /// Blocks per tile and per thread of that in-place pass.
  int64_t quantUnitsPerTile = 0, quantUnitsPerThread = 0;
  /// An input prologue (RMS norm from the prepass's per-voxel statistic,
  /// activation). With prologueInShared, the A tile keeps its cp.async ring
  /// and each thread transforms the chunks it copied in place once they
  /// landed, one stage ahead of the MMAs (3+ stages, as for in-place
  /// NVFP4); otherwise A takes the register-staged path, each access
  /// transformed between its global load (issued before the step's MMAs)
  /// and its store to shared memory (after them).
  bool inputPrologue = false;
  bool prologueInShared = false;

  // Shared memory (bytes): the operand ring, then reused by the epilogue
  // as an f32 staging tile with a padded row stride.
  int64_t aStageBytes = 0, bStageBytes = 0, pipelineBytes = 0;
  int64_t stagingStride = 0, stagingBytes = 0, sharedBytes = 0;
  /// Output elements per epilogue access (8 when F allows 16-byte stores).
  int64_t outputVector = 1;

  /// Builds the plan, or returns a message naming why the configuration
  /// cannot be lowered to sm80 for this convolution. Operands are 16-bit
  /// (bf16/f16, the only mma.sync operand types used here).
  static std::optional<std::string>
  build(const ConvGeometry &geometry, FilterLayout layout, int64_t tileM,
        int64_t tileN, int64_t tileK, int64_t stages, int64_t warpsM,
        int64_t warpsN, KOrder kOrder, int64_t splitK,
        std::optional<int64_t> quantBlockSize, SM80KernelPlan &plan,
        OperandAlignment alignment = {}, bool inputPrologue = false);

  //===--- Fragment addressing (per lane) --------------------------------===//

  /// Row and column in the A tile of the address lane `lane` gives
  /// ldmatrix.x4 for the 16x16 A fragment at (row0, col0): matrices 0..3
  /// are (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
  /// (rows 8-15, k 8-15), the a0..a3 order of mma.m16n8k16.
  template <typename Math>
  static std::array<typename Math::Value, 2>
  aFragmentAddress(Math &math, typename Math::Value lane,
                   typename Math::Value row0, typename Math::Value col0) {
    return {math.add(row0, math.rem(lane, 16)),
            math.add(col0, math.mul(math.div(lane, 16), 8))};
  }

  /// (k, n) of the address lane `lane` gives ldmatrix.x4 for two adjacent
  /// n8 fragments of B at (k0, n0): matrices 0..3 are (k 0-7, n 0-7),
  /// (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15), i.e. b0, b1 of the
  /// first n8 tile, then of the second. (With x2, lanes 0-15 matter.)
  template <typename Math>
  static std::array<typename Math::Value, 2>
  bFragmentAddress(Math &math, typename Math::Value lane,
                   typename Math::Value k0, typename Math::Value n0) {
    auto matrix = math.div(lane, 8);
    auto inner = math.rem(lane, 8);
    return {math.add(math.add(k0, inner), math.mul(math.rem(matrix, 2), 8)),
            math.add(n0, math.mul(math.div(matrix, 2), 8))};
  }

  /// (n, k) of the address lane `lane` gives a non-transposed ldmatrix.x4
  /// for the same two n8 fragments when B is stored [n][k] (K contiguous).
  template <typename Math>
  static std::array<typename Math::Value, 2>
  bFragmentAddressKContiguous(Math &math, typename Math::Value lane,
                              typename Math::Value k0,
                              typename Math::Value n0) {
    auto matrix = math.div(lane, 8);
    auto inner = math.rem(lane, 8);
    return {math.add(math.add(n0, inner), math.mul(math.div(matrix, 2), 8)),
            math.add(k0, math.mul(math.rem(matrix, 2), 8))};
  }

  /// (row, col) of accumulator element `e` (0..3) of lane `lane` in a 16x8
  /// mma tile: c0, c1 at (lane/4, 2*(lane%4) + {0,1}), c2, c3 eight rows
  /// below.
  template <typename Math>
  static std::array<typename Math::Value, 2>
  accumulatorPosition(Math &math, typename Math::Value lane, int64_t e) {
    return {math.add(math.div(lane, 4), math.constant(e >= 2 ? 8 : 0)),
            math.add(math.mul(math.rem(lane, 4), 2), math.constant(e % 2))};
  }
};

} // namespace mlir::conv3d::sm80

#endif // CONV3D_TARGET_SM80_SM80KERNELPLAN_H
