//===- TensorMapParams.cpp - the driver's rules for TMA descriptors -------===//
//
// cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col document their limits
// (ranks, ranges, 16-byte alignment, swizzle spans) in cuda.h; checking them
// here, without a driver, turns a bare CUDA_ERROR_INVALID_VALUE into a
// message naming the parameter, and lets the checks be tested anywhere.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir::conv3d;
using llvm::Error;

namespace {
Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

unsigned mlir::conv3d::getTensorMapElementBits(TensorMapDataType type) {
  switch (type) {
  case TensorMapDataType::UInt8:
    return 8;
  case TensorMapDataType::UInt16:
  case TensorMapDataType::Float16:
  case TensorMapDataType::BFloat16:
    return 16;
  case TensorMapDataType::UInt32:
  case TensorMapDataType::Int32:
  case TensorMapDataType::Float32:
  case TensorMapDataType::Float32Ftz:
  case TensorMapDataType::TFloat32:
  case TensorMapDataType::TFloat32Ftz:
    return 32;
  case TensorMapDataType::UInt64:
  case TensorMapDataType::Int64:
  case TensorMapDataType::Float64:
    return 64;
  case TensorMapDataType::U4x16Align8B:
    return 4;
  case TensorMapDataType::U4x16Align16B: // 8-byte gaps: a byte per value
  case TensorMapDataType::U6x16Align16B: // 4-byte gaps: a byte per value
    return 8;
  }
  return 0;
}

namespace {

/// The bytes a swizzle mode permutes within; 0 for none.
unsigned swizzleSpan(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return 0;
  case TensorMapSwizzle::B32:
    return 32;
  case TensorMapSwizzle::B64:
    return 64;
  default:
    return 128;
  }
}

/// The checks both kinds share: the element type and enums, the address,
/// the dimensions, the strides, the element strides and the swizzle of an
/// inner box of `innerBoxElements`.
Error verifyCommon(llvm::StringRef kind, TensorMapDataType dataType,
                   const void *globalAddress,
                   llvm::ArrayRef<uint64_t> globalDim,
                   llvm::ArrayRef<uint64_t> globalStrides,
                   llvm::ArrayRef<uint32_t> elementStrides,
                   uint64_t innerBoxElements, TensorMapInterleave interleave,
                   TensorMapSwizzle swizzle, TensorMapL2Promotion l2Promotion,
                   TensorMapOobFill oobFill) {
  auto fail = [&](const llvm::Twine &message) {
    return makeError(kind + " TMA descriptor: " + message);
  };
  if (uint32_t(dataType) > uint32_t(TensorMapDataType::U6x16Align16B))
    return fail("unknown data type " + llvm::Twine(uint32_t(dataType)));
  if (uint32_t(interleave) > uint32_t(TensorMapInterleave::B32) ||
      uint32_t(swizzle) > uint32_t(TensorMapSwizzle::B128Atom64B) ||
      uint32_t(l2Promotion) > uint32_t(TensorMapL2Promotion::B256) ||
      uint32_t(oobFill) > uint32_t(TensorMapOobFill::NanRequestZeroFma))
    return fail("unknown interleave, swizzle, L2 promotion or OOB fill");
  size_t rank = globalDim.size();
  bool align32 = interleave == TensorMapInterleave::B32 ||
                 dataType == TensorMapDataType::U4x16Align16B ||
                 dataType == TensorMapDataType::U6x16Align16B;
  uint64_t alignment = align32 ? 32 : 16;

  if (!globalAddress)
    return fail("no global address");
  if (reinterpret_cast<uintptr_t>(globalAddress) % alignment != 0)
    return fail("global address " +
                llvm::Twine(llvm::utohexstr(
                    reinterpret_cast<uintptr_t>(globalAddress))) +
                " is not " + llvm::Twine(alignment) + "-byte aligned");
  for (size_t i = 0; i < rank; ++i)
    if (globalDim[i] == 0 || globalDim[i] > (uint64_t(1) << 32))
      return fail("global dimension " + llvm::Twine(i) + " is " +
                  llvm::Twine(globalDim[i]) + "; it must be in [1, 2^32]");
  if (globalStrides.size() != rank - 1)
    return fail("rank " + llvm::Twine(rank) + " needs " +
                llvm::Twine(rank - 1) + " global strides, got " +
                llvm::Twine(globalStrides.size()));
  for (size_t i = 0; i < globalStrides.size(); ++i) {
    if (globalStrides[i] % alignment != 0)
      return fail("global stride " + llvm::Twine(i) + " (of dimension " +
                  llvm::Twine(i + 1) + ") is " + llvm::Twine(globalStrides[i]) +
                  " bytes, not a multiple of " + llvm::Twine(alignment));
    if (globalStrides[i] >= (uint64_t(1) << 40))
      return fail("global stride " + llvm::Twine(i) + " is " +
                  llvm::Twine(globalStrides[i]) + " bytes; it must be < 2^40");
  }
  if (!elementStrides.empty() && elementStrides.size() != rank)
    return fail("rank " + llvm::Twine(rank) + " needs " + llvm::Twine(rank) +
                " element strides, got " + llvm::Twine(elementStrides.size()));
  for (size_t i = 0; i < elementStrides.size(); ++i)
    if (elementStrides[i] == 0 || elementStrides[i] > 8)
      return fail("element stride " + llvm::Twine(i) + " is " +
                  llvm::Twine(elementStrides[i]) + "; it must be in [1, 8]");
  if (interleave == TensorMapInterleave::B32 &&
      swizzle != TensorMapSwizzle::B32)
    return fail("32-byte interleave needs the 32-byte swizzle");
  uint64_t innerBytes =
      innerBoxElements * getTensorMapElementBits(dataType) / 8;
  if (interleave == TensorMapInterleave::None && swizzleSpan(swizzle) != 0 &&
      innerBytes > swizzleSpan(swizzle))
    return fail("the inner box dimension is " + llvm::Twine(innerBytes) +
                " bytes, more than the " + llvm::Twine(swizzleSpan(swizzle)) +
                "-byte swizzle span");
  return Error::success();
}

} // namespace

Error mlir::conv3d::verifyTensorMapParams(const TiledTensorMapParams &params) {
  auto fail = [](const llvm::Twine &message) {
    return makeError("tiled TMA descriptor: " + message);
  };
  size_t rank = params.globalDim.size();
  if (rank < 1 || rank > 5)
    return fail("rank " + llvm::Twine(rank) + " is not in [1, 5]");
  if (params.interleave != TensorMapInterleave::None && rank < 3)
    return fail("an interleaved layout needs rank 3 or more, got " +
                llvm::Twine(rank));
  if (params.boxDim.size() != rank)
    return fail("rank " + llvm::Twine(rank) + " needs " + llvm::Twine(rank) +
                " box dimensions, got " + llvm::Twine(params.boxDim.size()));
  for (size_t i = 0; i < rank; ++i)
    if (params.boxDim[i] == 0 || params.boxDim[i] > 256)
      return fail("box dimension " + llvm::Twine(i) + " is " +
                  llvm::Twine(params.boxDim[i]) + "; it must be in [1, 256]");
  uint64_t innerBits =
      uint64_t(params.boxDim[0]) * getTensorMapElementBits(params.dataType);
  if (params.interleave == TensorMapInterleave::None && innerBits % 128 != 0)
    return fail("the inner box dimension (" + llvm::Twine(params.boxDim[0]) +
                " elements) is not a multiple of 16 bytes");
  return verifyCommon(
      "tiled", params.dataType, params.globalAddress, params.globalDim,
      params.globalStrides, params.elementStrides, params.boxDim[0],
      params.interleave, params.swizzle, params.l2Promotion, params.oobFill);
}

Error mlir::conv3d::verifyTensorMapParams(const Im2colTensorMapParams &params) {
  auto fail = [](const llvm::Twine &message) {
    return makeError("im2col TMA descriptor: " + message);
  };
  size_t rank = params.globalDim.size();
  if (rank < 3 || rank > 5)
    return fail("rank " + llvm::Twine(rank) + " is not in [3, 5]");
  size_t spatial = rank - 2;
  if (params.pixelBoxLowerCorner.size() != spatial ||
      params.pixelBoxUpperCorner.size() != spatial)
    return fail("rank " + llvm::Twine(rank) + " needs " + llvm::Twine(spatial) +
                " offsets per pixel box corner, got " +
                llvm::Twine(params.pixelBoxLowerCorner.size()) + " and " +
                llvm::Twine(params.pixelBoxUpperCorner.size()));
  // The corners' precision shrinks with the rank (cuda.h).
  int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (size_t i = 0; i < spatial; ++i)
    for (auto [which, corner] :
         {std::make_pair("lower", params.pixelBoxLowerCorner[i]),
          std::make_pair("upper", params.pixelBoxUpperCorner[i])})
      if (corner < -limit || corner >= limit)
        return fail(llvm::Twine(which) + " pixel box corner " + llvm::Twine(i) +
                    " is " + llvm::Twine(corner) + "; rank " +
                    llvm::Twine(rank) + " allows [" + llvm::Twine(-limit) +
                    ", " + llvm::Twine(limit - 1) + "]");
  if (params.channelsPerPixel == 0 || params.channelsPerPixel > 256)
    return fail("channelsPerPixel is " + llvm::Twine(params.channelsPerPixel) +
                "; it must be in [1, 256]");
  if (params.pixelsPerColumn == 0 || params.pixelsPerColumn > 1024)
    return fail("pixelsPerColumn is " + llvm::Twine(params.pixelsPerColumn) +
                "; it must be in [1, 1024]");
  return verifyCommon(
      "im2col", params.dataType, params.globalAddress, params.globalDim,
      params.globalStrides, params.elementStrides, params.channelsPerPixel,
      params.interleave, params.swizzle, params.l2Promotion, params.oobFill);
}
