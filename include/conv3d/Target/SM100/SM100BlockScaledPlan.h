//===- SM100BlockScaledPlan.h - real NVFP4 on sm100: the layouts -*- C++
//-*-===//
//
// The data layouts of the block-scaled sm100 mainloop (real NVFP4:
// tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16), decided on
// the host and unit-tested by the schedule model without a GPU. The kernel
// is emitted from it (BlockScaledKernel.cpp, LowerBlockScaledToSM100.cpp)
// and assembled by ptxas; no sm_100 GPU has run it:
//
// - Operands (conv3d.pack_nvfp4): the activation as NDHWC E2M1 codes, two
//   per byte (C / 2 bytes a voxel), with one E4M3 scale byte per 16
//   channels ([voxel][C / 16]); the filter likewise, FQRSC (K-major: FP4
//   operands of kind::mxf4nvf4 must be K-major), codes [F][QRS][C / 2] and
//   scales [F][QRS][C / 16].
// - A K step is one filter tap x 256 channels: one 128-byte row of packed
//   codes per GEMM row, loaded by TMA (im2col for the activation, tiled for
//   the filter) with the 128-byte swizzle, exactly the bf16 ring's boxes
//   (16-byte chunk j of row i at chunk j ^ (i % 8); 8-row atoms of 1024
//   bytes). Each of its 4 MMAs (K = 64) reads the 32 bytes at +32 kk of
//   the rows through the same tcgen05 shared-memory descriptor template.
// - Scale factors: each MMA needs 4 scales per row (one 32-bit TMEM word).
//   In shared memory they are 512-byte atoms of 128 rows, the source of
//   tcgen05.cp.32x128b.warpx4: atom row r (16 bytes) holds the 4 scales of
//   GEMM rows r, r + 32, r + 64 and r + 96. The copy writes atom row r to
//   lane r of each 32-lane quarter of TMEM (the duplication the PTX ISA
//   asks for), 4 columns; GEMM row m's 4 scales are then lane m, column
//   + m / 32, as the MMA reads them (scale-factor ID 0). B's rows past 128
//   (tile_n up to 256) take a second atom, 4 columns further.
// - TMEM: the accumulators first (f32, tileN columns each), then per MMA of
//   a step the A scales (4 columns) and the B scales (4 per 128 rows).
// - Epilogue: the accumulator holds sum(qA sA qB sB); the f32 global
//   scales gsA = amaxA / 2688 and gsB = amaxB / 2688 multiply it once.
// - Scales into shared memory: a step needs 16
//   scale bytes per GEMM row (256 channels / 16), the natural rows of the
//   model (SM100ScheduleModelTest.cpp), rearranged into the atoms by the
//   kernel.
//   The TMA maps that load those rows (an im2col box of 16 bytes a pixel
//   over conv3d.pack_nvfp4's scales, a tiled box over the filter's) are
//   SM100BlockScaledTma.h; TMA global strides are multiples of 16 bytes,
//   so for C not a multiple of 256 the scales are read from rows padded to
//   16 bytes a channel block (scaleRowStride). The boxes land in the stage's
//   scale areas, which the natural rows fit, and are permuted into the
//   atoms in place (scaleWordAtomOffset): one word a row and MMA.
//
// The instruction forms (tcgen05.cp.cta_group::1.32x128b.warpx4 and
// tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 from MLIR 22's
// NVVM ops) assemble for sm_100a (test/GPU/sm100-block-scaled-ops.mlir) with
// PTX ISA 8.8: LLVM 22 cannot select the block16 MMA under +ptx86, the
// features the pipeline gives sm_100a today, so the kernel needs +ptx88.
//
// Unverified (no sm_100 GPU, and the PTX ISA's figures were read, not
// executed): the scale-factor atom's row interleave and the lane
// duplication of tcgen05.cp.32x128b.warpx4, and the E2M1 format code 1 of
// the block-scaled descriptor (CUTLASS's MXF4Format). The model encodes
// these readings; it cannot confirm them.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM100_SM100BLOCKSCALEDPLAN_H
#define CONV3D_TARGET_SM100_SM100BLOCKSCALEDPLAN_H

#include "conv3d/Target/SM100/SM100KernelPlan.h"

namespace mlir::conv3d::sm100::nvfp4 {

/// FP4 channels of one 128-byte row of packed codes: one K step.
inline constexpr int64_t kChannelBlock = 256;
/// K of one kind::mxf4nvf4 MMA, and the bytes its slice of a row spans.
inline constexpr int64_t kMmaK = 64, kMmaBytes = kMmaK / 2;
inline constexpr int64_t kMmasPerStep = kChannelBlock / kMmaK;
/// Elements per E4M3 scale (block16) and scales per row of one MMA.
inline constexpr int64_t kScaleBlock = 16, kScalesPerMma = kMmaK / kScaleBlock;
/// A scale-factor atom: 128 GEMM rows x 4 scales, 32 rows of 16 bytes.
inline constexpr int64_t kAtomRows = 128, kAtomBytes = 512;
inline constexpr int64_t kAtomLanes = 32, kAtomRowBytes = 16;

/// The byte of GEMM row `row`'s scale for K block `block` (0..3) of one MMA
/// inside its atom (row % 128 selects the atom's rows).
inline int64_t scaleAtomOffset(int64_t row, int64_t block) {
  int64_t r = row % kAtomRows;
  return (r % kAtomLanes) * kAtomRowBytes + (r / kAtomLanes) * 4 + block;
}

/// TMEM of the scale atoms of one MMA copied from column `column` on (atom
/// a, for rows [128 a, 128 a + 128), at column + 4 a) by
/// tcgen05.cp.32x128b.warpx4: the (lane, column) of the word holding GEMM
/// row `row`'s 4 scales (byte b is K block b).
inline std::pair<int64_t, int64_t> scaleTmemWord(int64_t column, int64_t row) {
  int64_t r = row % kAtomRows;
  return {r, column + 4 * (row / kAtomRows) + r / kAtomLanes};
}

struct BlockScaledPlan {
  int64_t tileM = 128, tileN = 0, stages = 0;
  int64_t channelBlocks = 0, taps = 0, totalSteps = 0;
  /// Shared memory per stage: codes (128-byte rows, swizzled) and scale
  /// atoms (kMmasPerStep atoms per 128 rows).
  int64_t aStageBytes = 0, bStageBytes = 0;
  int64_t aScaleStageBytes = 0, bScaleStageBytes = 0;
  int64_t pipelineBytes = 0;
  /// TMEM: `accumulatorBuffers` accumulators of tileN columns from column
  /// 0, then the scales of the step's MMAs.
  int64_t accumulatorBuffers = 1, scaleColumn = 0, tmemColumns = 0;
  /// TMEM columns of one MMA's A and B scales (4 per 128-row atom).
  int64_t aScaleColumns = 4, bScaleColumns = 0;

  /// The plan, or why it cannot be built: tile_m 128 (kind::mxf4nvf4 has
  /// no M = 64, and cta_group::2 is not planned), tile_n a multiple of 16
  /// up to 256, C a multiple of 32 (rows of packed codes are multiples of
  /// 16 bytes, as TMA requires), and the stages, the scale atoms and the
  /// epilogue's staging within a block's shared memory. `epilogueAlignment`
  /// (elements) of the output, bias and residual decides the epilogue's
  /// vector width, as for kind::f16.
  static std::optional<std::string> build(const ConvGeometry &g, int64_t tileM,
                                          int64_t tileN, int64_t stages,
                                          BlockScaledPlan &plan,
                                          int64_t epilogueAlignment = 1);

  /// The most stages (from 2 up to `limit`) of a tile_n configuration that
  /// fit with a staging tile of chunks of at least 32 columns (or the
  /// whole tile), or 0 if not even two do.
  static int64_t maxStages(const ConvGeometry &g, int64_t tileN, int64_t limit);

  /// The kernel's view (Tcgen05Kernel.cpp's shared roles): tiles, stages,
  /// the K steps, the shared memory (the code rings as the bf16 kernel's,
  /// then the scale rings: scaleStageBytes), the staging tile, barriers,
  /// TMEM (accumulatorBuffers, tmemColumns) and stepBytes, the bytes of a
  /// step's four TMA boxes.
  SM100KernelPlan kernel;

  /// Shared offsets (from the aligned base) of stage `stage`'s areas: the A
  /// codes ring, the B codes ring, then the A scale ring and the B scale
  /// ring. Code tiles stay on 1024-byte swizzle atoms (aStageBytes and
  /// bStageBytes are multiples of 2048); scale atoms on 512 bytes.
  int64_t aCodesOffset(int64_t stage) const { return stage * aStageBytes; }
  int64_t bCodesOffset(int64_t stage) const {
    return stages * aStageBytes + stage * bStageBytes;
  }
  int64_t aScalesOffset(int64_t stage) const {
    return stages * (aStageBytes + bStageBytes) + stage * aScaleStageBytes;
  }
  int64_t bScalesOffset(int64_t stage) const {
    return stages * (aStageBytes + bStageBytes + aScaleStageBytes) +
           stage * bScaleStageBytes;
  }

  /// The bytes of one K step's four TMA boxes: 128-byte code rows and
  /// 16-byte scale rows of tileM activation and tileN filter rows.
  int64_t stepBytes() const {
    return (tileM + tileN) * (kRowBytes + kChannelBlock / kScaleBlock);
  }

  /// TMEM column of MMA `mma`'s A scales and B scales within a step.
  int64_t aScaleTmemColumn(int64_t mma) const {
    return scaleColumn + mma * (aScaleColumns + bScaleColumns);
  }
  int64_t bScaleTmemColumn(int64_t mma) const {
    return aScaleTmemColumn(mma) + aScaleColumns;
  }
  /// Byte offset, in a stage's A (or B) scale area, of MMA `mma`'s atom for
  /// rows [128 a, 128 a + 128).
  static int64_t scaleAtomBase(int64_t mma, int64_t rowAtom, int64_t atoms) {
    return (mma * atoms + rowAtom) * kAtomBytes;
  }
  /// Where the scale word of GEMM row `row` for MMA `mma` (bytes 4 mma ..
  /// 4 mma + 3 of the row's 16 natural scale bytes, as a TMA box delivers
  /// them at byte 16 row of a stage's scale area) belongs in that area's
  /// atoms, for a tile of `rows` rows. The natural rows (16 rows bytes) fit
  /// the atoms (4 x ceil(rows / 128) x 512 bytes), so the kernel can land
  /// the box in the scale area and permute the words in place: every word
  /// read before any is written.
  static int64_t scaleWordAtomOffset(int64_t row, int64_t mma, int64_t rows) {
    int64_t atoms = (rows + kAtomRows - 1) / kAtomRows;
    return scaleAtomBase(mma, row / kAtomRows, atoms) + scaleAtomOffset(row, 0);
  }

  /// The kind::mxf4nvf4 instruction descriptor: E2M1 x E2M1, UE4M3
  /// scales, K-major, M = tileM, N = tileN, scale-factor IDs 0.
  uint32_t instructionDescriptor() const {
    Tcgen05BlockScaledInstrDescriptor d;
    d.m = tileM;
    d.n = tileN;
    return d.encode();
  }
  /// The shared-memory descriptor tcgen05.cp reads a scale atom through:
  /// no swizzle, 8-row core matrices of 16-byte rows 128 bytes apart.
  static uint64_t scaleAtomDescriptor(uint32_t address) {
    Tcgen05SmemDescriptor d;
    d.address = address;
    d.swizzle = Tcgen05Swizzle::None;
    d.leadingByteOffset = kAtomBytes;
    d.strideByteOffset = 8 * kAtomRowBytes;
    return d.encode();
  }
};

} // namespace mlir::conv3d::sm100::nvfp4

#endif // CONV3D_TARGET_SM100_SM100BLOCKSCALEDPLAN_H
