//===- SM100BlockScaledFamily.cpp - real NVFP4 on sm100 -------------------===//
//
// tcgen05.mma kind::mxf4nvf4 block16 on packed E2M1 codes and E4M3 scales
// (SM100BlockScaledPlan.h, SM100BlockScaledTma.h): both operands NVFP4 (the
// input quantized with blocks of 16 along C, fused or by a conv3d.quantize
// feeding it; the filter packed), no history or prologue, static shapes,
// and the plan's and the TMA maps' limits (C a multiple of 256, the im2col
// corners). conv3d-apply-nvfp4-mode asks on tensors and refuses what it
// cannot take (a request for real FP4 never falls back to fake);
// conv3d-lower-block-scaled-to-sm100 asks again on memrefs, where the
// quantization must be fused and the packed filter dense.
//
//===----------------------------------------------------------------------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;
using mlir::conv3d::families::groupsProblem;

/// The default ring depth's upper bound.
static constexpr int64_t kDefaultStageLimit = 6;

const SM100BlockScaledFamily &mlir::conv3d::getSM100BlockScaledFamily() {
  static const SM100BlockScaledFamily family;
  return family;
}

std::optional<std::string>
SM100BlockScaledFamily::canImplement(const ConvProblem &problem) const {
  if (!problem.packedFilter)
    return std::string(
        "the block-scaled MMA multiplies real FP4 only when both operands "
        "are NVFP4, and this convolution's filter is not packed "
        "(filter_quant; Engine::quantizeFilter packs one). Use "
        "nvfp4-mode=fake");
  if (std::optional<std::string> why = groupsProblem(problem))
    return why;
  // On memrefs the lowering packs the original input itself: a quantization
  // not fused into the convolution is a conv3d.quantize it cannot see.
  if (problem.layouts && !problem.quantizesInTile)
    return std::string(
        "the input's NVFP4 quantization must be fused into the "
        "convolution (quantize(...), as conv3d-apply-nvfp4-mode leaves it "
        "in real mode): the kernel packs the input itself");
  if (!problem.quantBlockSize)
    return std::string(
        "the block-scaled MMA multiplies real FP4 only when both operands "
        "are NVFP4, and this convolution's input is not quantized along "
        "its channels (quantize, or a conv3d.quantize with axes = [4])");
  if (*problem.quantBlockSize != kScaleBlock)
    return "the input's NVFP4 block size is " +
           std::to_string(*problem.quantBlockSize) +
           "; the block-scaled MMA (kind::mxf4nvf4 block16) takes 16";
  if (problem.hasHistory)
    return std::string("the block-scaled kernel does not read a history "
                       "operand");
  if (problem.hasPrologue)
    return std::string("the block-scaled kernel does not apply an input "
                       "prologue");
  const ConvGeometry &g = problem.geometry;
  if (!g.hasStaticShape())
    return std::string("the block-scaled kernel needs static shapes");
  // On memrefs the TMA maps view the packed filter's buffers, and the
  // lowering plans the tile it chooses (plan()).
  if (problem.layouts)
    return problem.layouts->packedFilterProblem;
  // The limits that depend on the convolution, not on the tile shape the
  // kernel would choose: a 128 x 128 tile with the fewest stages.
  BlockScaledPlan plan;
  BlockScaledTmaPlan tma;
  std::optional<std::string> why = BlockScaledPlan::build(g, 128, 128, 2, plan);
  if (!why)
    why = BlockScaledTmaPlan::build(g, plan, tma);
  if (why)
    return "the block-scaled sm100 kernel cannot take this convolution: " +
           *why;
  return std::nullopt;
}

int64_t SM100BlockScaledFamily::defaultTileN(const ConvGeometry &geometry) {
  return std::min<int64_t>(256, llvm::alignTo(geometry.filters, 16));
}

int64_t SM100BlockScaledFamily::defaultStages(const ConvGeometry &geometry,
                                              int64_t tileN) {
  return std::max<int64_t>(
      2, BlockScaledPlan::maxStages(geometry, tileN, kDefaultStageLimit));
}

FamilyChoice SM100BlockScaledFamily::select(MLIRContext *context,
                                            const ConvProblem &problem) const {
  const ConvGeometry &g = problem.geometry;
  int64_t tileN = defaultTileN(g);
  int64_t stages = defaultStages(g, tileN);
  FamilyChoice choice;
  choice.config = IGemmConfigAttr::get(
      context, kTmemLanes, tileN, sm100::kChannelBlock, stages, kEpilogueWarps,
      /*warpsN=*/1, KOrder::taps_outer, /*splitK=*/1, Target::sm100,
      KernelSchedule::cooperative, /*clusterM=*/1, Mainloop::im2col);
  return choice;
}

std::optional<std::string>
SM100BlockScaledFamily::configProblem(IGemmConfigAttr config) const {
  auto fail = [&](const llvm::Twine &why) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "tile configuration " << config << ": " << why;
    return text;
  };
  if (config.getKernel() != Target::sm100 && config.getKernel() != Target::cpu)
    return fail(llvm::formatv("names the {0} kernel; a packed NVFP4 filter "
                              "is multiplied by the block-scaled sm100 "
                              "kernel only",
                              stringifyTarget(config.getKernel())));
  if (config.getTileM() != kTmemLanes)
    return fail(llvm::formatv(
        "tile_m must be {0} (cta_group::1; cta_group::2 is not implemented "
        "for the block-scaled kernel)",
        kTmemLanes));
  if (config.getTileK() != sm100::kChannelBlock)
    return fail(llvm::formatv("tile_k must be {0} (the K of one MMA; a K "
                              "step is four of them)",
                              sm100::kChannelBlock));
  if (config.getWarpsM() != kEpilogueWarps || config.getWarpsN() != 1)
    return fail(llvm::formatv("the warp layout must be {0}x1 (the epilogue "
                              "warps)",
                              kEpilogueWarps));
  if (config.getSplitK() != 1)
    return fail("split-K is not implemented for the block-scaled kernel");
  if (config.getKOrder() != KOrder::taps_outer)
    return fail("k_order = qslice_outer is not implemented for the "
                "block-scaled kernel");
  if (config.getSchedule() != KernelSchedule::cooperative ||
      config.getClusterM() != 1 || config.getMainloop() != Mainloop::im2col)
    return fail("schedule, cluster_m and mainloop are sm90 options");
  return std::nullopt;
}

std::optional<std::string>
SM100BlockScaledFamily::plan(const ConvProblem &problem, int64_t tileN,
                             int64_t stages, int64_t epilogueAlignment,
                             BlockScaledPlan &plan,
                             BlockScaledTmaPlan &tma) const {
  if (std::optional<std::string> why = BlockScaledPlan::build(
          problem.geometry, kTmemLanes, tileN, stages, plan, epilogueAlignment))
    return why;
  return BlockScaledTmaPlan::build(problem.geometry, plan, tma);
}
