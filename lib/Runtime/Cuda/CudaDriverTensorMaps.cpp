//===- CudaDriverTensorMaps.cpp - TMA descriptors -------------------------===//
//
// Encoding TMA descriptors (tiled and im2col) and keeping device copies of
// them. The parameters are checked by verifyTensorMapParams first
// (TensorMapParams.cpp) because the driver answers a bad one with a bare
// CUDA_ERROR_INVALID_VALUE. The public enums and TensorMap mirror cuda.h's
// without including it, so the static_asserts below hold them to it.
//
//===----------------------------------------------------------------------===//

#include "CudaDriverImpl.h"

#include <cstring>

using namespace mlir::conv3d;
using namespace mlir::conv3d::cuda;
using llvm::Error;
using llvm::Expected;

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) &&
                  alignof(TensorMap) >= alignof(CUtensorMap),
              "TensorMap must match CUtensorMap");
static_assert(unsigned(TensorMapDataType::U6x16Align16B) ==
                      CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
                  unsigned(TensorMapDataType::BFloat16) ==
                      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 &&
                  unsigned(TensorMapInterleave::B32) ==
                      CU_TENSOR_MAP_INTERLEAVE_32B &&
                  unsigned(TensorMapSwizzle::B128Atom64B) ==
                      CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B &&
                  unsigned(TensorMapSwizzle::B128) ==
                      CU_TENSOR_MAP_SWIZZLE_128B &&
                  unsigned(TensorMapL2Promotion::B256) ==
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
                  unsigned(TensorMapOobFill::NanRequestZeroFma) ==
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
              "TMA enums must match cuda.h");

namespace {

llvm::SmallVector<uint32_t, 5>
elementStridesOrOnes(llvm::ArrayRef<uint32_t> elementStrides, size_t rank) {
  if (elementStrides.empty())
    return llvm::SmallVector<uint32_t, 5>(rank, 1);
  return llvm::SmallVector<uint32_t, 5>(elementStrides);
}

} // namespace

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

Error CudaDriver::encodeTiled(const TiledTensorMapParams &params,
                              TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  return withContext(*impl, [&](const DriverApi &api) -> Error {
    llvm::SmallVector<uint32_t, 5> elementStrides =
        elementStridesOrOnes(params.elementStrides, params.globalDim.size());
    CUtensorMap map;
    if (Error err =
            CONV3D_CU(cuTensorMapEncodeTiled, &map,
                      static_cast<CUtensorMapDataType>(params.dataType),
                      cuuint32_t(params.globalDim.size()), params.globalAddress,
                      params.globalDim.data(), params.globalStrides.data(),
                      params.boxDim.data(), elementStrides.data(),
                      static_cast<CUtensorMapInterleave>(params.interleave),
                      static_cast<CUtensorMapSwizzle>(params.swizzle),
                      static_cast<CUtensorMapL2promotion>(params.l2Promotion),
                      static_cast<CUtensorMapFloatOOBfill>(params.oobFill)))
      return err;
    std::memcpy(out.opaque.data(), &map, sizeof(map));
    return Error::success();
  });
}

Error CudaDriver::encodeIm2col(const Im2colTensorMapParams &params,
                               TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  return withContext(*impl, [&](const DriverApi &api) -> Error {
    llvm::SmallVector<uint32_t, 5> elementStrides =
        elementStridesOrOnes(params.elementStrides, params.globalDim.size());
    CUtensorMap map;
    if (Error err =
            CONV3D_CU(cuTensorMapEncodeIm2col, &map,
                      static_cast<CUtensorMapDataType>(params.dataType),
                      cuuint32_t(params.globalDim.size()), params.globalAddress,
                      params.globalDim.data(), params.globalStrides.data(),
                      params.pixelBoxLowerCorner.data(),
                      params.pixelBoxUpperCorner.data(),
                      cuuint32_t(params.channelsPerPixel),
                      cuuint32_t(params.pixelsPerColumn), elementStrides.data(),
                      static_cast<CUtensorMapInterleave>(params.interleave),
                      static_cast<CUtensorMapSwizzle>(params.swizzle),
                      static_cast<CUtensorMapL2promotion>(params.l2Promotion),
                      static_cast<CUtensorMapFloatOOBfill>(params.oobFill)))
      return err;
    std::memcpy(out.opaque.data(), &map, sizeof(map));
    return Error::success();
  });
}

Expected<TensorMap>
CudaDriver::encodeTiled(const TiledTensorMapParams &params) {
  TensorMap map;
  if (Error err = encodeTiled(params, map))
    return std::move(err);
  return map;
}

Expected<TensorMap>
CudaDriver::encodeIm2col(const Im2colTensorMapParams &params) {
  TensorMap map;
  if (Error err = encodeIm2col(params, map))
    return std::move(err);
  return map;
}

//===----------------------------------------------------------------------===//
// Device copies
//===----------------------------------------------------------------------===//

Expected<void *> CudaDriver::uploadTensorMap(const TensorMap &map) {
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto it = impl->tensorMaps.find(map.opaque);
    if (it != impl->tensorMaps.end())
      return reinterpret_cast<void *>(it->second);

    // A map is 128 bytes, far less than one cuMemAlloc costs in alignment
    // and time, so maps share slabs.
    constexpr size_t kSlabBytes = 64 * 1024; // 512 maps
    if (!impl->slab || impl->slabUsed + sizeof(TensorMap) > kSlabBytes) {
      CUdeviceptr slab = 0;
      if (Error err = CONV3D_CU(cuMemAlloc, &slab, kSlabBytes))
        return std::move(err);
      impl->slab = slab;
      impl->slabUsed = 0;
    }
    CUdeviceptr copy = impl->slab + impl->slabUsed;
    // A copy from pageable memory may return before it lands; synchronizing
    // the null stream makes the map visible to kernels on any stream.
    if (Error err =
            CONV3D_CU(cuMemcpyHtoD, copy, map.opaque.data(), sizeof(TensorMap)))
      return std::move(err);
    if (Error err =
            CONV3D_CU(cuStreamSynchronize, static_cast<CUstream>(nullptr)))
      return std::move(err);
    impl->slabUsed += sizeof(TensorMap);
    impl->tensorMaps.emplace(map.opaque, copy);
    return reinterpret_cast<void *>(copy);
  });
}
