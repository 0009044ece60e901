//===- EmulatedTensorMaps.cpp - TMA descriptors of the emulated driver ----===//
//
// The real CUtensorMap encoding is the driver's own. Here the 128 bytes
// carry the encode call's parameters, in the layout the PTX emulator reads
// (tools/ptx-emulator/ptxemu/tma.py documents it), after the checks the
// driver documents in cuda.h (the runtime's verifyTensorMapParams makes
// them too, with messages; these keep the emulated driver honest when
// called otherwise).
//
//===----------------------------------------------------------------------===//

#include "EmulatedDevice.h"

#include <cstring>

using namespace conv3d_emulator;

namespace {

constexpr uint32_t kMagic = 0x4D543343; // "C3TM"

struct Encoded {
  uint32_t magic;
  uint8_t kind, rank, dataType, interleave, swizzle, l2, oobFill, pad0;
  uint32_t channelsPerPixel;
  uint64_t globalAddress;
  uint32_t dimMinusOne[5];
  uint8_t elementStrides[5];
  uint8_t boxMinusOne[5];
  uint16_t pixelsPerColumn;
  int16_t lower[3], upper[3];
  uint8_t pad1[4];
  uint64_t globalStrides[4];
  uint8_t pad2[24];
};
static_assert(sizeof(Encoded) == 128, "a CUtensorMap is 128 bytes");
static_assert(offsetof(Encoded, globalAddress) == 16, "layout");
static_assert(offsetof(Encoded, dimMinusOne) == 24, "layout");
static_assert(offsetof(Encoded, elementStrides) == 44, "layout");
static_assert(offsetof(Encoded, boxMinusOne) == 49, "layout");
static_assert(offsetof(Encoded, pixelsPerColumn) == 54, "layout");
static_assert(offsetof(Encoded, lower) == 56, "layout");
static_assert(offsetof(Encoded, upper) == 62, "layout");
static_assert(offsetof(Encoded, globalStrides) == 72, "layout");

CUresult common(Encoded &e, CUtensorMapDataType type, cuuint32_t rank,
                void *address, const cuuint64_t *dims,
                const cuuint64_t *strides, const cuuint32_t *elementStrides,
                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  std::memset(&e, 0, sizeof(e));
  if (rank < 1 || rank > 5)
    return fail(CUDA_ERROR_INVALID_VALUE, "tensor map rank not in [1, 5]");
  if (!address || reinterpret_cast<uintptr_t>(address) % 16)
    return fail(CUDA_ERROR_INVALID_VALUE,
                "tensor map address null or not 16-byte aligned");
  e.magic = kMagic;
  e.rank = uint8_t(rank);
  e.dataType = uint8_t(type);
  e.interleave = uint8_t(interleave);
  e.swizzle = uint8_t(swizzle);
  e.l2 = uint8_t(l2);
  e.oobFill = uint8_t(oob);
  e.globalAddress = reinterpret_cast<uint64_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (uint64_t(1) << 32))
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "tensor map dimension out of range");
    e.dimMinusOne[i] = uint32_t(dims[i] - 1);
    uint32_t es = elementStrides ? elementStrides[i] : 1;
    if (es == 0 || es > 8)
      return fail(CUDA_ERROR_INVALID_VALUE, "element stride not in [1, 8]");
    e.elementStrides[i] = uint8_t(es);
  }
  for (cuuint32_t i = 0; i + 1 < rank; ++i) {
    if (strides[i] % 16 || strides[i] >= (uint64_t(1) << 40))
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "tensor map stride not a multiple of 16 below 2^40");
    e.globalStrides[i] = strides[i];
  }
  return CUDA_SUCCESS;
}

} // namespace

extern "C" {

CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  Encoded e;
  if (CUresult r = common(e, type, rank, address, dims, strides, elementStrides,
                          interleave, swizzle, l2, oob))
    return r;
  e.kind = 1;
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (box[i] == 0 || box[i] > 256)
      return fail(CUDA_ERROR_INVALID_VALUE, "box dimension not in [1, 256]");
    e.boxMinusOne[i] = uint8_t(box[i] - 1);
  }
  std::memcpy(map, &e, sizeof(e));
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeIm2col(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const int *lower,
    const int *upper, cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  Encoded e;
  if (rank < 3)
    return fail(CUDA_ERROR_INVALID_VALUE, "im2col tensor map rank below 3");
  if (CUresult r = common(e, type, rank, address, dims, strides, elementStrides,
                          interleave, swizzle, l2, oob))
    return r;
  e.kind = 2;
  int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (cuuint32_t i = 0; i + 2 < rank; ++i) {
    if (lower[i] < -limit || lower[i] >= limit || upper[i] < -limit ||
        upper[i] >= limit)
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "pixel box corner outside the rank's range");
    e.lower[i] = int16_t(lower[i]);
    e.upper[i] = int16_t(upper[i]);
  }
  if (channelsPerPixel == 0 || channelsPerPixel > 256 || pixelsPerColumn == 0 ||
      pixelsPerColumn > 1024)
    return fail(CUDA_ERROR_INVALID_VALUE,
                "channelsPerPixel or pixelsPerColumn out of range");
  e.channelsPerPixel = channelsPerPixel;
  e.pixelsPerColumn = uint16_t(pixelsPerColumn);
  std::memcpy(map, &e, sizeof(e));
  return CUDA_SUCCESS;
}

} // extern "C"
