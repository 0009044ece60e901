//===- Tcgen05Descriptors.h - tcgen05 descriptor encoders -------*- C++ -*-===//
//
// The two descriptors a tcgen05.mma reads, encoded on the host (the kernel
// ORs a stage's address into a constant template):
// - the shared-memory matrix descriptor (64 bits, PTX ISA "Shared memory
//   descriptor" of the tcgen05 family). It differs from wgmma's: bits 46-48
//   hold the fixed value 0b001 and the swizzle mode is three bits at 61-63
//   (128-byte swizzle = 2), where wgmma has two bits at 62-63 (128-byte = 1);
// - the instruction descriptor (32 bits, PTX ISA "Instruction descriptor",
//   the layout of .kind::f16 / tf32 / f8f6f4 / i8).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM100_TCGEN05DESCRIPTORS_H
#define CONV3D_TARGET_SM100_TCGEN05DESCRIPTORS_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::conv3d::sm100 {

/// Swizzle modes of the tcgen05 shared-memory descriptor (bits 61-63).
enum class Tcgen05Swizzle : uint8_t {
  None = 0,
  Swizzle128BAtom32B = 1,
  Swizzle128B = 2,
  Swizzle64B = 4,
  Swizzle32B = 6,
};

struct Tcgen05SmemDescriptor {
  /// Shared address of the matrix (a multiple of 16; bits 0-13 hold it >> 4).
  uint32_t address = 0;
  /// Leading dimension byte offset (bits 16-29, >> 4). Unused by swizzled
  /// K-major layouts, where the PTX ISA assumes 1 (16 bytes).
  uint32_t leadingByteOffset = 16;
  /// Stride dimension byte offset (bits 32-45, >> 4): between 8-row groups.
  uint32_t strideByteOffset = 1024;
  /// Matrix base offset (bits 49-51): 0 for swizzle-atom-aligned matrices.
  uint8_t baseOffset = 0;
  /// Bit 52: the leading dimension stride is an absolute address.
  bool absoluteLeading = false;
  Tcgen05Swizzle swizzle = Tcgen05Swizzle::Swizzle128B;

  uint64_t encode() const {
    return uint64_t((address & 0x3FFFF) >> 4) |
           uint64_t((leadingByteOffset & 0x3FFFF) >> 4) << 16 |
           uint64_t((strideByteOffset & 0x3FFFF) >> 4) << 32 |
           uint64_t(1) << 46 | uint64_t(baseOffset & 0x7) << 49 |
           uint64_t(absoluteLeading) << 52 |
           uint64_t(static_cast<uint8_t>(swizzle) & 0x7) << 61;
  }
};

/// Operand formats of .kind::f16 (A and B: bits 7-9 and 10-12) and the
/// accumulator's (D: bits 4-5).
enum class Tcgen05Format : uint8_t { F16 = 0, BF16 = 1 };
enum class Tcgen05AccFormat : uint8_t { F16 = 0, F32 = 1 };

/// The dense .kind::f16 instruction descriptor.
struct Tcgen05InstrDescriptor {
  Tcgen05AccFormat d = Tcgen05AccFormat::F32;
  Tcgen05Format a = Tcgen05Format::BF16, b = Tcgen05Format::BF16;
  bool negateA = false, negateB = false;
  /// Bits 15/16: the operand is MN-major ("transposed"); 0 is K-major.
  bool aMajorMN = false, bMajorMN = false;
  /// The MMA's shape: M in bits 24-28 (>> 4), N in bits 17-22 (>> 3).
  int64_t m = 128, n = 256;

  uint32_t encode() const {
    return uint32_t(static_cast<uint8_t>(d)) << 4 |
           uint32_t(static_cast<uint8_t>(a)) << 7 |
           uint32_t(static_cast<uint8_t>(b)) << 10 | uint32_t(negateA) << 13 |
           uint32_t(negateB) << 14 | uint32_t(aMajorMN) << 15 |
           uint32_t(bMajorMN) << 16 | uint32_t((n >> 3) & 0x3F) << 17 |
           uint32_t((m >> 4) & 0x1F) << 24;
  }

  /// Why (m, n) is not a dense .kind::f16 shape for `ctaGroup` CTAs, or
  /// none: M = 64 or 128 (cta_group::1), 128 or 256 (cta_group::2); N a
  /// multiple of 8 (M = 64) or 16 from 16 to 256.
  static std::optional<std::string> shapeProblem(int64_t m, int64_t n,
                                                 int64_t ctaGroup);
};

/// Scale-factor formats of the block-scaled kinds (bit 23).
enum class Tcgen05ScaleFormat : uint8_t { UE4M3 = 0, UE8M0 = 1 };

/// The block-scaled instruction descriptor (PTX ISA, "Instruction descriptor
/// format for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4"), as
/// .kind::mxf4nvf4 uses it: no D format (block-scaled MMAs accumulate in
/// f32), B's scale-factor ID at bits 4-5 and A's at 29-30 (the byte of the
/// TMEM word a scale starts at; 0 for block16, whose 4 scales of a K = 64
/// MMA fill the word), A and B formats at 7-9 and 10-11 (E2M1 = 1 for
/// .kind::mxf4 and .kind::mxf4nvf4; both operands K-major, bits 15/16 = 0),
/// N >> 3 at 17-22, the scale format at 23 (UE4M3 = 0 for NVFP4) and
/// M >> 4 at 24-28.
struct Tcgen05BlockScaledInstrDescriptor {
  static constexpr uint8_t kE2M1 = 1;
  uint8_t a = kE2M1, b = kE2M1;
  Tcgen05ScaleFormat scaleFormat = Tcgen05ScaleFormat::UE4M3;
  uint8_t aScaleId = 0, bScaleId = 0;
  bool negateA = false, negateB = false;
  int64_t m = 128, n = 256;

  uint32_t encode() const {
    return uint32_t(bScaleId & 0x3) << 4 | uint32_t(a & 0x7) << 7 |
           uint32_t(b & 0x3) << 10 | uint32_t(negateA) << 13 |
           uint32_t(negateB) << 14 | uint32_t((n >> 3) & 0x3F) << 17 |
           uint32_t(static_cast<uint8_t>(scaleFormat) & 1) << 23 |
           uint32_t((m >> 4) & 0x1F) << 24 | uint32_t(aScaleId & 0x3) << 29;
  }
};

} // namespace mlir::conv3d::sm100

#endif // CONV3D_TARGET_SM100_TCGEN05DESCRIPTORS_H
