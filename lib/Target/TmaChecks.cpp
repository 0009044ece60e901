//===- TmaChecks.cpp - what the TMA-fed kernels can load ------------------===//

#include "conv3d/Target/TmaChecks.h"

#include "FamilyUtils.h"

#include "conv3d/Target/Families.h"
#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::conv3d;

std::optional<std::string> mlir::conv3d::tmaIm2colProblem(
    const ConvGeometry &geometry, FilterLayout layout, Type elementType,
    std::optional<int64_t> tileQuantBlockSize, Target kernel) {
  if (!elementType.isBF16() && !elementType.isF16())
    return kernel == Target::sm100
               ? "tcgen05.mma kind::f16 takes bf16 or f16 operands here"
               : "wgmma takes bf16 or f16 operands here";
  if (layout != FilterLayout::fqrsc)
    return std::string("the filter is QRSCF; the TMA filter tiles are "
                       "K-major (FQRSC)");
  if (tileQuantBlockSize) {
    if (kernel != Target::sm90)
      return ("NVFP4 quantization in the tile load runs in the sm80 kernel "
              "(the prepass placement feeds " +
              stringifyTarget(kernel) + ")")
          .str();
    // The sm90 consumers quantize each landed K step (one tap x 64
    // channels) in place: a block must lie inside one step.
    int64_t blockSize = *tileQuantBlockSize;
    if (sm90::kChannelBlock % blockSize != 0)
      return llvm::formatv("NVFP4 blocks of {0} span several 64-channel K "
                           "steps; the sm90 kernel quantizes blocks of 16, "
                           "32 or 64 in the tile",
                           blockSize)
          .str();
    if (geometry.channels % blockSize != 0)
      return llvm::formatv("C = {0} is not a multiple of the NVFP4 block "
                           "size {1}: blocks straddle filter taps, which the "
                           "sm90 kernel's K steps (one tap x 64 channels) "
                           "keep apart",
                           geometry.channels, blockSize)
          .str();
  }
  // A K step is one tap x a 64-channel TMA box; channels past C load as
  // zeros. On the H100 and H200 (bench/RESULTS.md, issue 21) the wgmma
  // kernel still beat the sm80 kernel on C = 45-48 (padded to 48: three
  // quarters of a box) with windows of several taps in H x W (0.40-0.89x
  // cuDNN on sm80, 0.90-1.54x here), not with one tap there (1x1x1, 3x1x1:
  // the sm80 kernel 1.1-4.0x) nor with C = 40 (sm80 0.8-1.3x, here
  // 0.5-0.8x).
  bool narrow = geometry.channels < sm90::kChannelBlock;
  if (narrow && (geometry.channels * 4 < sm90::kChannelBlock * 3 ||
                 geometry.window[1] * geometry.window[2] == 1))
    return "C = " + std::to_string(geometry.channels) +
           " is under one 64-channel TMA box; the sm80 kernel reads "
           "narrow channels without padding them";
  std::string why;
  std::optional<TmaIm2colForm> form = geometry.chooseTmaIm2colForm(2, why);
  if (!form)
    return why;
  // Per-depth-slice descriptors need tiles that stay in one output depth
  // slice, which only the sm90 kernel's scheduler makes.
  if (*form == TmaIm2colForm::depthSlices && kernel != Target::sm90)
    return why + " (per-depth-slice descriptors are implemented for the "
                 "sm90 kernel only)";
  return std::nullopt;
}

std::optional<std::string>
families::tmaOperandProblem(const ConvProblem &problem) {
  if (std::optional<std::string> why = packedFilterProblem(problem))
    return why;
  if (std::optional<std::string> why = groupsProblem(problem))
    return why;
  if (problem.hasPrologue)
    return std::string("the TMA kernels do not apply an input prologue");
  return std::nullopt;
}

std::optional<std::string>
families::tmaIm2colFamilyProblem(const ConvProblem &problem, Target kernel) {
  if (std::optional<std::string> why = tmaOperandProblem(problem))
    return why;
  if (std::optional<std::string> why = tmaIm2colProblem(
          problem.geometry, problem.filterLayout, problem.inputType,
          problem.tileQuantBlockSize(), kernel))
    return why;
  if (problem.layouts)
    return tmaLayoutProblem(problem, *problem.layouts);
  return std::nullopt;
}

std::optional<std::string>
mlir::conv3d::haloProblem(const ConvGeometry &geometry, FilterLayout layout,
                          Type elementType, bool quantizesInTile) {
  if (!elementType.isBF16() && !elementType.isF16())
    return std::string("wgmma takes bf16 or f16 operands here");
  if (layout != FilterLayout::fqrsc)
    return std::string("the filter is QRSCF; the TMA filter tiles are "
                       "K-major (FQRSC)");
  if (quantizesInTile)
    return std::string("the halo mainloop does not quantize in the tile");
  if (geometry.historyDepth != 0)
    return std::string("the halo mainloop does not read a history operand");
  if (geometry.strides[1] != 1 || geometry.strides[2] != 1)
    return std::string("the halo mainloop needs unit strides in H and W");
  // TMA's global strides are multiples of 16 bytes; a channel block is 32
  // or 64 channels (64- or 128-byte rows).
  if (geometry.channels < 32 || geometry.channels % 8 != 0)
    return "C = " + std::to_string(geometry.channels) +
           " is not a multiple of 8 from 32 up (the halo mainloop's channel "
           "blocks)";
  return std::nullopt;
}

std::optional<std::string>
mlir::conv3d::tmaLayoutProblem(const ConvProblem &problem,
                               const OperandLayouts &layouts) {
  if (layouts.inputAlignment < 8 || layouts.filterAlignment < 8)
    return std::string("TMA needs the input's and the filter's offsets and "
                       "strides in multiples of 16 bytes");
  const ConvGeometry &g = problem.geometry;
  bool history = problem.hasHistory && g.historyDepth != 0;
  if (history && (!layouts.historyStaticDepth || layouts.historyAlignment < 8))
    return std::string("TMA needs a history of static depth whose offset and "
                       "strides are multiples of 16 bytes");
  // Per-depth-slice descriptors view the input's depth slices as the images
  // of a rank-4 tensor: image n's slices must start a whole number of depth
  // strides apart, after the previous image's last one.
  std::string why;
  if (g.batch != 1 &&
      g.chooseTmaIm2colForm(2, why) == TmaIm2colForm::depthSlices &&
      (!layouts.inputSlicesPerImage ||
       (history && !layouts.historySlicesPerImage)))
    return std::string("per-depth-slice TMA descriptors need an input (and "
                       "a history) whose batch stride is a multiple of its "
                       "depth stride, at least its depth times it");
  return std::nullopt;
}

std::optional<std::string> mlir::conv3d::tileIndexProblem(const ConvGeometry &g,
                                                          int64_t tileM,
                                                          int64_t numTiles) {
  if (numTiles < (int64_t(1) << 31) && g.gemmM() + tileM < (int64_t(1) << 31))
    return std::nullopt;
  return std::to_string(numTiles) +
         " tiles or M = " + std::to_string(g.gemmM()) + " do not fit 31 bits";
}

std::optional<int64_t>
mlir::conv3d::tmaPaddedChannels(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  if (g.channels % 8 == 0 || !g.hasStaticShape() || problem.hasHistory ||
      problem.hasPrologue || problem.quantBlockSize || problem.packedFilter)
    return std::nullopt;
  return llvm::alignTo(g.channels, 8);
}

bool mlir::conv3d::sm90ReadsRelaidOut(MLIRContext *context,
                                      const ConvProblem &relaidOut,
                                      IGemmConfigAttr config) {
  if (!getSM90Im2colFamily().canImplement(relaidOut))
    return true;
  const SM90HaloFamily &halo = getSM90HaloFamily();
  if (halo.canImplement(relaidOut))
    return false;
  if (config)
    return config.getMainloop() == Mainloop::halo;
  return static_cast<bool>(halo.select(context, relaidOut).config);
}
