//===- NVFP4Reference.h - scalar NVFP4 fake quantization --------*- C++ -*-===//
//
// The literal, scalar form of the NVFP4 quantize -> dequantize round trip of
// spec/nvfp4.md, in f32. The compiler's whole-tensor op and its fused
// convolution path are checked bit for bit against these functions, so they
// follow the spec statement by statement and share no code with the
// compiler.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_QUANT_NVFP4REFERENCE_H
#define CONV3D_QUANT_NVFP4REFERENCE_H

#include "conv3d/Support/HostTensor.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::conv3d {

/// Largest finite E4M3 (FN) value and E2M1 magnitude.
constexpr float kNVFP4E4M3Max = 448.0f;
constexpr float kNVFP4E2M1Max = 6.0f;

/// Rounds s in [0, 448] to FP8 E4M3, nearest even: normals have 3 fraction
/// bits over exponents -6 .. 8, subnormals are multiples of 2^-9, and values
/// up to half of 2^-9 (inclusive: that tie goes to the even code 0) become
/// 0. Values above 448 saturate to 448; NaN stays NaN.
float nvfp4RoundE4M3(float s);

/// Rounds a >= 0 to the nearest E2M1 magnitude {0, .5, 1, 1.5, 2, 3, 4, 6},
/// ties to the even code (0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2,
/// 3.5->4, 5->4); anything from 6 up (infinity included) gives 6 and NaN
/// gives NaN. A negative a gives -E2M1(-a).
float nvfp4RoundE2M1(float a);

/// Fake-quantizes one block of `count` values (count <= block size; the
/// elements past `count` are zeros, which never change the block maximum)
/// into `out`, in f32, exactly as the spec's per-block formula. `out` is not
/// rounded to any narrower compute type.
void nvfp4QuantizeBlock(const float *values, float *out, size_t count,
                        float amax);

/// Fake-quantizes `x` with blocks of `blockSize` consecutive elements of the
/// row-major flattening of axes [firstAxis, lastAxis] (inclusive), separately
/// for every index of the other axes; the last block of each row is
/// zero-filled. Every f32 result is rounded (nearest even) to x's type.
HostTensor referenceQuantize(const HostTensor &x, int64_t blockSize, float amax,
                             unsigned firstAxis, unsigned lastAxis);

//===----------------------------------------------------------------------===//
// Real NVFP4: the codes and scale bytes of the quantization
//===----------------------------------------------------------------------===//
//
// The same per-block computation as nvfp4QuantizeBlock, kept as codes
// instead of dequantized values: what the block-scaled tcgen05.mma
// (kind::mxf4nvf4, block16) consumes. For a block whose value in the fake
// path is `sign(v) * q * scale` with `scale = s8 * gs`,
//   code  = sign(v) << 3 | E2M1 index of q        (4 bits)
//   scale = the E4M3 (FN) bits of s8              (8 bits, sign 0)
// so that  nvfp4DecodeE2M1(code) * (nvfp4DecodeE4M3(scale) * gs)  equals the
// fake-quantized f32 value of every finite input. FP4 has no NaN: a NaN
// input encodes as +0 (its block's maximum ignores it, as in the fake path).
// A zero block (amax == 0 or s8 == 0) is all-zero codes with scale byte 0.

/// The E4M3 (FN) bits of `s8`, a value nvfp4RoundE4M3 returned for an
/// s in [0, 448] (normals: exponent bias 7, 3 fraction bits; subnormals:
/// multiples of 2^-9).
uint8_t nvfp4EncodeE4M3(float s8);
/// The value of E4M3 (FN) bits (0x7F and 0xFF are NaN).
float nvfp4DecodeE4M3(uint8_t bits);
/// The 4-bit code of `q`, a value nvfp4RoundE2M1 returned (sign in bit 3,
/// magnitude index 0..7 for 0, .5, 1, 1.5, 2, 3, 4, 6). NaN gives 0.
uint8_t nvfp4EncodeE2M1(float q);
/// The value of a 4-bit E2M1 code (the low 4 bits of `code`).
float nvfp4DecodeE2M1(uint8_t code);

/// Encodes one block of `count` values (count <= block size; the rest are
/// zeros): `codes[i]` receives the 4-bit code of element i and `scaleBits`
/// the block's E4M3 scale byte.
void nvfp4EncodeBlock(const float *values, uint8_t *codes, size_t count,
                      float amax, uint8_t &scaleBits);

/// The packed NVFP4 form of a tensor whose last dimension C is a multiple
/// of `blockSize`, blocks of `blockSize` consecutive elements along it:
/// `codes` holds two codes per byte (element 2i in the low nibble, 2i + 1
/// in the high one), numElements / 2 bytes in the tensor's row-major order;
/// `scales` one E4M3 byte per block, numElements / blockSize bytes.
struct NVFP4Packed {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;
};
NVFP4Packed referencePackNVFP4(const HostTensor &x, int64_t blockSize,
                               float amax);

} // namespace mlir::conv3d

#endif // CONV3D_QUANT_NVFP4REFERENCE_H
