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

} // namespace mlir::conv3d

#endif // CONV3D_QUANT_NVFP4REFERENCE_H
