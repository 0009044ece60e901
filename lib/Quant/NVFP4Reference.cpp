//===- NVFP4Reference.cpp - scalar NVFP4 fake quantization ----------------===//
//
// Every operation below is one f32 operation of the spec, each in its own
// statement. The file is compiled with -ffp-contract=off (see
// lib/Quant/CMakeLists.txt) so that no multiply-add pair can be fused into
// an FMA with a single rounding, which would change results bit-wise (the
// baseline x86-64 target has no FMA instructions either; the flag keeps it
// that way under -march=native). Nothing here enables flush-to-zero, so f32
// subnormals (tiny global scales) are preserved.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Quant/NVFP4Reference.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir::conv3d;

/// Rounds y >= 0 (an f32 integer-scaled value, so y < 2^24 here) to the
/// nearest integer, ties to even, without depending on the FP rounding mode.
static float roundHalfToEven(float y) {
  float whole = std::floor(y);
  float fraction = y - whole; // exact
  if (fraction > 0.5f)
    return whole + 1.0f;
  if (fraction == 0.5f && std::fmod(whole, 2.0f) != 0.0f)
    return whole + 1.0f;
  return whole;
}

float mlir::conv3d::nvfp4RoundE4M3(float s) {
  if (std::isnan(s))
    return s;
  float magnitude = std::fabs(s);
  float rounded;
  if (magnitude >= kNVFP4E4M3Max) {
    rounded = kNVFP4E4M3Max; // saturate; the spec clamps s to 448 first
  } else if (magnitude == 0.0f) {
    rounded = 0.0f;
  } else {
    // E4M3 has 3 fraction bits; below 2^-6 (the smallest normal) the
    // spacing stays 2^-9, which makes the subnormals and the flush of
    // everything up to 2^-10 to 0 (the tie goes to the even code 0) fall
    // out of the same rounding.
    int exponent = std::max(std::ilogb(magnitude), -6);
    float quantum = std::ldexp(1.0f, exponent - 3);
    float units = magnitude / quantum; // exact: division by a power of two
    rounded = roundHalfToEven(units) * quantum; // exact
  }
  return std::copysign(rounded, s);
}

float mlir::conv3d::nvfp4RoundE2M1(float a) {
  if (std::isnan(a))
    return a;
  float m = std::fabs(a);
  float q;
  // Decision points are the midpoints between neighbouring magnitudes; `<=`
  // sends a tie down and `<` sends it up, whichever neighbour has the even
  // code (codes 0..7 are 0, .5, 1, 1.5, 2, 3, 4, 6).
  if (m <= 0.25f)
    q = 0.0f; // tie 0.25 -> code 0
  else if (m < 0.75f)
    q = 0.5f; // tie 0.75 -> code 2 (1.0)
  else if (m <= 1.25f)
    q = 1.0f; // tie 1.25 -> code 2 (1.0)
  else if (m < 1.75f)
    q = 1.5f; // tie 1.75 -> code 4 (2.0)
  else if (m <= 2.5f)
    q = 2.0f; // tie 2.5 -> code 4 (2.0)
  else if (m < 3.5f)
    q = 3.0f; // tie 3.5 -> code 6 (4.0)
  else if (m <= 5.0f)
    q = 4.0f; // tie 5 -> code 6 (4.0)
  else
    q = kNVFP4E2M1Max; // saturate (infinity included)
  return std::copysign(q, a);
}

namespace {
/// The block's E4M3 scale s8 and the global scale gs of `spec/nvfp4.md`,
/// shared by the quantizer and the packer so that both take one path.
struct NVFP4BlockScale {
  float gs, s8;
};
NVFP4BlockScale nvfp4BlockScale(const float *values, size_t count, float amax) {
  // gs = amax / 2688, 2688 = 6 * 448.
  float gs = amax / 2688.0f;

  // bmax = max |v| with maxNum semantics: fmax ignores a NaN operand, so a
  // NaN does not spread to its block. Padding zeros never raise bmax.
  float bmax = 0.0f;
  for (size_t i = 0; i < count; ++i)
    bmax = std::fmax(bmax, std::fabs(values[i]));

  // s = min(bmax / (6 * gs), 448). An infinite bmax gives 448, as the spec
  // requires. The minimum has minNum semantics like the maximum; that only
  // matters for the ratios 0/0 and inf/inf (gs underflowed to 0, or an
  // infinite input with an infinite amax), which the spec leaves open and
  // which this sends to 448.
  float sixGs = 6.0f * gs;
  float ratio = bmax / sixGs;
  float s = std::fmin(ratio, kNVFP4E4M3Max);
  float s8 = nvfp4RoundE4M3(s);

  return {gs, s8};
}
} // namespace

void mlir::conv3d::nvfp4QuantizeBlock(const float *values, float *out,
                                      size_t count, float amax) {
  auto [gs, s8] = nvfp4BlockScale(values, count, amax);
  if (amax == 0.0f || s8 == 0.0f) {
    std::fill(out, out + count, 0.0f); // NaN inputs included
    return;
  }

  float scale = s8 * gs;
  float inv = 1.0f / scale; // correctly rounded reciprocal
  for (size_t i = 0; i < count; ++i) {
    float v = values[i];
    float a = std::fabs(v) * inv;
    float q = nvfp4RoundE2M1(a);
    float magnitude = q * scale;
    out[i] = std::copysign(magnitude, v); // sign(v) * q * scale
  }
}

HostTensor mlir::conv3d::referenceQuantize(const HostTensor &x,
                                           int64_t blockSize, float amax,
                                           unsigned firstAxis,
                                           unsigned lastAxis) {
  const size_t rank = x.shape.size();
  if (blockSize <= 0)
    llvm::report_fatal_error("referenceQuantize: block size must be positive");
  if (firstAxis > lastAxis || lastAxis >= rank)
    llvm::report_fatal_error("referenceQuantize: bad block axes");

  // View x as [outer, rowLength, inner]: a row is one index of the axes
  // before and after the block axes.
  int64_t outer = 1, rowLength = 1, inner = 1;
  for (unsigned axis = 0; axis < rank; ++axis) {
    if (axis < firstAxis)
      outer *= x.shape[axis];
    else if (axis <= lastAxis)
      rowLength *= x.shape[axis];
    else
      inner *= x.shape[axis];
  }

  HostTensor result = HostTensor::zeros(x.type, x.shape);
  std::vector<float> block(static_cast<size_t>(blockSize));
  std::vector<float> quantized(static_cast<size_t>(blockSize));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto linear = [&](int64_t j) { return (o * rowLength + j) * inner + i; };
      for (int64_t start = 0; start < rowLength; start += blockSize) {
        int64_t count = std::min(blockSize, rowLength - start);
        for (int64_t j = 0; j < count; ++j)
          block[j] = static_cast<float>(x.get(linear(start + j))); // exact
        nvfp4QuantizeBlock(block.data(), quantized.data(), size_t(count), amax);
        for (int64_t j = 0; j < count; ++j)
          result.set(linear(start + j), quantized[j]);
      }
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Codes and scale bytes
//===----------------------------------------------------------------------===//

uint8_t mlir::conv3d::nvfp4EncodeE4M3(float s8) {
  if (!(s8 > 0.0f))
    return 0; // +0 (and the NaN the spec's clamp never produces)
  int exponent = std::ilogb(s8);
  if (exponent < -6) // subnormal: s8 = m * 2^-9, m in 1..7
    return static_cast<uint8_t>(std::ldexp(s8, 9));
  // s8 = (1 + f / 8) * 2^exponent, biased exponent = exponent + 7.
  float fraction = std::ldexp(s8, -exponent) - 1.0f; // exact
  return static_cast<uint8_t>((exponent + 7) << 3 |
                              static_cast<int>(fraction * 8.0f));
}

float mlir::conv3d::nvfp4DecodeE4M3(uint8_t bits) {
  int biased = (bits >> 3) & 0xF, mantissa = bits & 7;
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  if (biased == 0xF && mantissa == 7)
    return std::nanf("");
  if (biased == 0)
    return sign * std::ldexp(float(mantissa), -9);
  return sign * std::ldexp(1.0f + float(mantissa) / 8.0f, biased - 7);
}

static constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                             2.0f, 3.0f, 4.0f, 6.0f};

uint8_t mlir::conv3d::nvfp4EncodeE2M1(float q) {
  if (std::isnan(q))
    return 0;
  float magnitude = std::fabs(q);
  uint8_t index = 0;
  while (index < 7 && kE2M1Magnitudes[index] != magnitude)
    ++index;
  if (kE2M1Magnitudes[index] != magnitude)
    llvm::report_fatal_error("nvfp4EncodeE2M1: not an E2M1 value");
  return static_cast<uint8_t>((std::signbit(q) ? 8 : 0) | index);
}

float mlir::conv3d::nvfp4DecodeE2M1(uint8_t code) {
  float magnitude = kE2M1Magnitudes[code & 7];
  return (code & 8) ? -magnitude : magnitude;
}

void mlir::conv3d::nvfp4EncodeBlock(const float *values, uint8_t *codes,
                                    size_t count, float amax,
                                    uint8_t &scaleBits) {
  // The scales of nvfp4QuantizeBlock, then its E2M1 rounding as codes.
  auto [gs, s8] = nvfp4BlockScale(values, count, amax);
  if (amax == 0.0f || s8 == 0.0f) {
    std::fill(codes, codes + count, 0);
    scaleBits = 0;
    return;
  }
  scaleBits = nvfp4EncodeE4M3(s8);
  float scale = s8 * gs;
  float inv = 1.0f / scale;
  for (size_t i = 0; i < count; ++i) {
    float v = values[i];
    float a = std::fabs(v) * inv;
    float q = nvfp4RoundE2M1(a);
    codes[i] = std::isnan(v) ? 0 : nvfp4EncodeE2M1(std::copysign(q, v));
  }
}

NVFP4Packed mlir::conv3d::referencePackNVFP4(const HostTensor &x,
                                             int64_t blockSize, float amax) {
  if (blockSize <= 0 || blockSize % 2 != 0 || x.shape.empty() ||
      x.shape.back() % blockSize != 0)
    llvm::report_fatal_error("referencePackNVFP4: the last dimension must be "
                             "a multiple of an even block size");
  int64_t numElements = x.numElements();
  NVFP4Packed packed;
  packed.codes.assign(static_cast<size_t>(numElements / 2), 0);
  packed.scales.assign(static_cast<size_t>(numElements / blockSize), 0);
  std::vector<float> block(static_cast<size_t>(blockSize));
  std::vector<uint8_t> codes(static_cast<size_t>(blockSize));
  for (int64_t b = 0; b < numElements / blockSize; ++b) {
    for (int64_t j = 0; j < blockSize; ++j)
      block[j] = static_cast<float>(x.get(b * blockSize + j)); // exact
    nvfp4EncodeBlock(block.data(), codes.data(), size_t(blockSize), amax,
                     packed.scales[b]);
    for (int64_t j = 0; j < blockSize; j += 2)
      packed.codes[(b * blockSize + j) / 2] =
          static_cast<uint8_t>(codes[j] | codes[j + 1] << 4);
  }
  return packed;
}
