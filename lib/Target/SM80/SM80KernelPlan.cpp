//===- SM80KernelPlan.cpp - the shape of an sm80 convolution kernel -------===//

#include "conv3d/Target/SM80/SM80KernelPlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

/// The widest cp.async vector (8, 4 or 2 elements) dividing `extent`, or 1.
static int64_t asyncVector(int64_t extent) {
  for (int64_t v : {8, 4, 2})
    if (extent % v == 0)
      return v;
  return 1;
}

static OperandLoad planLoad(int64_t vector, bool quantized,
                            std::optional<int64_t> blockSize,
                            int64_t tileElements, int64_t threads,
                            bool throughRegisters = false) {
  OperandLoad load;
  load.vector = vector;
  load.async = vector >= 2 && !quantized && !throughRegisters;
  load.unit = quantized ? *blockSize : vector;
  load.unitsPerTile = tileElements / load.unit;
  load.unitsPerThread = ceilDiv(load.unitsPerTile, threads);
  return load;
}

std::optional<std::string> SM80KernelPlan::build(
    const ConvGeometry &g, FilterLayout layout, int64_t tileM, int64_t tileN,
    int64_t tileK, int64_t stages, int64_t warpsM, int64_t warpsN,
    KOrder kOrder, int64_t splitK, std::optional<int64_t> quantBlockSize,
    SM80KernelPlan &plan, OperandAlignment alignment, bool inputPrologue) {
  auto fail = [](const llvm::Twine &message) {
    return std::optional<std::string>(message.str());
  };
  if (tileM % (kMmaM * warpsM) != 0)
    return fail(llvm::formatv("sm80 needs tile_m ({0}) to be a multiple of "
                              "16 * warps_m ({1})",
                              tileM, kMmaM * warpsM));
  if (tileN % (kMmaN * warpsN) != 0)
    return fail(llvm::formatv("sm80 needs tile_n ({0}) to be a multiple of "
                              "8 * warps_n ({1})",
                              tileN, kMmaN * warpsN));
  if (tileK % kMmaK != 0)
    return fail(llvm::formatv("sm80 needs tile_k ({0}) to be a multiple of "
                              "16",
                              tileK));
  if (stages < 2)
    return fail(llvm::formatv("sm80 needs at least 2 pipeline stages, got "
                              "{0}",
                              stages));
  if (splitK > 1 && kOrder == KOrder::qslice_outer)
    return fail(
        llvm::formatv("split_k = {0} needs k_order = taps_outer", splitK));
  if (quantBlockSize) {
    // A unit of the quantizing load is one whole block inside one K tile
    // (and one Q slice).
    if (tileK % *quantBlockSize != 0)
      return fail(llvm::formatv("sm80 needs tile_k ({0}) to be a multiple "
                                "of the NVFP4 block size ({1})",
                                tileK, *quantBlockSize));
    if (kOrder == KOrder::qslice_outer &&
        (g.gemmK() / g.window[0]) % *quantBlockSize != 0)
      return fail(llvm::formatv("qslice_outer splits NVFP4 blocks of {0} at "
                                "the slice boundaries (R*S*C = {1})",
                                *quantBlockSize, g.gemmK() / g.window[0]));
  }
  int64_t threads = kWarpSize * warpsM * warpsN;
  if (threads > 1024)
    return fail(llvm::formatv("sm80 blocks hold at most 32 warps, the warp "
                              "layout asks for {0}",
                              warpsM * warpsN));

  plan.tileM = tileM;
  plan.tileN = tileN;
  plan.tileK = tileK;
  plan.stages = stages;
  plan.warpsM = warpsM;
  plan.warpsN = warpsN;
  plan.threads = threads;
  plan.warpTileM = tileM / warpsM;
  plan.warpTileN = tileN / warpsN;
  plan.mmaTilesM = plan.warpTileM / kMmaM;
  plan.mmaTilesN = plan.warpTileN / kMmaN;
  plan.kSteps = tileK / kMmaK;
  plan.kOrder = kOrder;
  plan.splitK = splitK;
  plan.quantBlockSize = quantBlockSize;
  // Accumulators live in registers: 4 f32 per mma tile per thread. Beyond
  // 128 the kernel spills (255 registers per thread in all).
  int64_t accumulators = plan.mmaTilesM * plan.mmaTilesN * 4;
  if (accumulators > 128)
    return fail(llvm::formatv("a {0}x{1} warp tile needs {2} accumulator "
                              "registers per thread (at most 128): use more "
                              "warps or a smaller tile",
                              plan.warpTileM, plan.warpTileN, accumulators));

  // A: 16-byte chunks of channels of one tap when C allows. Quantization
  // works on whole blocks in shared memory after the copies land when the
  // ring is deep enough; else it needs the values in registers.
  bool quantized = quantBlockSize.has_value();
  int64_t aVector = asyncVector(std::gcd(g.channels, alignment.input));
  plan.quantizeInShared = quantized && aVector >= 2 && stages >= 3;
  plan.inputPrologue = inputPrologue;
  plan.prologueInShared = inputPrologue && aVector >= 2 && stages >= 3;
  plan.a =
      planLoad(aVector, quantized && !plan.quantizeInShared, quantBlockSize,
               tileM * tileK, threads, inputPrologue && !plan.prologueInShared);
  // A group's input slice of at most 64 bytes (32 channels) per voxel is
  // copied through L1: the K steps of a tile re-read each voxel's slice
  // once per filter tap, from lines L1 keeps (the tile's input patch of a
  // group is small), where L2-only copies would move every tap's bytes
  // (and whole 32-byte sectors of 16-byte slices) from L2 again. Dense
  // convolutions keep L2-only copies (as measured).
  plan.a.cacheInL1 = alignment.inputChannelSlice && g.channels * 2 <= 64;
  if (plan.quantizeInShared) {
    plan.quantUnitsPerTile = tileM * tileK / *quantBlockSize;
    plan.quantUnitsPerThread = ceilDiv(plan.quantUnitsPerTile, threads);
  }
  // B: chunks along the filter's contiguous axis: F (QRSCF) or K (FQRSC;
  // also a slice's R*S*C, where the qslice_outer K loop stops).
  plan.bKContiguous = layout == FilterLayout::fqrsc;
  int64_t sliceK = g.gemmK() / g.window[0];
  int64_t bExtent = plan.bKContiguous ? std::gcd(g.gemmK(), sliceK) : g.filters;
  plan.b = planLoad(asyncVector(std::gcd(bExtent, alignment.filter)),
                    /*quantized=*/false, std::nullopt, tileK * tileN, threads);

  plan.aTile = {tileM, tileK};
  plan.bTile = plan.bKContiguous ? SwizzledTile{tileN, tileK}
                                 : SwizzledTile{tileK, tileN};
  plan.aStageBytes = plan.aTile.elements() * 2;
  plan.bStageBytes = plan.bTile.elements() * 2;
  plan.pipelineBytes = stages * (plan.aStageBytes + plan.bStageBytes);
  // Padding the staging rows by 4 floats spreads a fragment store's 8 rows
  // over different banks.
  plan.stagingStride = tileN + 4;
  plan.stagingBytes = tileM * plan.stagingStride * 4;
  plan.sharedBytes = std::max(plan.pipelineBytes, plan.stagingBytes);
  if (plan.pipelineBytes > kMaxSharedBytes)
    return fail(llvm::formatv("the kernel needs {0} bytes of shared memory "
                              "({1} stages of {2}x{3} and {3}x{4} tiles), "
                              "more than an sm_80 block has ({5})",
                              plan.pipelineBytes, stages, tileM, tileK, tileN,
                              kMaxSharedBytes));
  if (plan.stagingBytes > kMaxSharedBytes)
    return fail(llvm::formatv("the epilogue's f32 staging tile of {0}x{1} "
                              "(padded rows) needs {2} bytes of shared "
                              "memory, more than an sm_80 block has ({3})",
                              tileM, plan.stagingStride, plan.stagingBytes,
                              kMaxSharedBytes));
  plan.outputVector = g.filters % 8 == 0 && alignment.epilogue % 8 == 0 ? 8 : 1;
  return std::nullopt;
}
