//===- SelectConfig.cpp - conv3d-select-config and its heuristics ---------===//
//
// The per-target heuristics. They encode a few facts rather than a search
// (the runtime's tuner can override them through the same attribute):
//
// - N tile matched to F. The filters of video VAEs come in 96, 192 and 384:
//   a power-of-two N tile wastes a third of a 128-wide tile on F = 96 and
//   needs two tiles (one half empty) for 192. When F fits in one tile we use
//   F itself (rounded up to the MMA's N granularity of 8); otherwise the
//   largest tile that divides F (96, 128, 192...) to avoid a ragged last
//   tile.
// - Smaller M tiles when M is small: a GPU needs at least about one block
//   per multiprocessor (132 on an H100) or it idles. On sm80 a cost model
//   of the last wave's imbalance halves tile_m (down to 64); sm90 keeps
//   128-row tiles (see below).
// - K tile on sm80: 64 bf16 elements (128 bytes) per row with 3 stages for
//   128-wide N tiles over at least 64 channels (96 KB: two blocks per
//   multiprocessor); otherwise 32 with 4 stages (3 for 256-row M tiles), and
//   16 for odd channel counts, whose element-wise loads are staged in
//   registers. 64 (128-byte rows, the TMA swizzle width) on sm90/sm100.
// - Warp layout: each warp owns at most 64 x 64 accumulators on sm80 (128
//   f32 registers per thread), so wide N tiles get more warps.
// - CPU: tiles sized for the L1/L2 caches; stages and warps are unused.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "conv3d/Conversion/SM100/SM100KernelPlan.h"
#include "conv3d/Conversion/SM90/SM90KernelPlan.h"
#include "conv3d/IR/Conv3dOps.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DSELECTCONFIG
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

static int64_t roundUp(int64_t value, int64_t multiple) {
  return ceilDiv(value, multiple) * multiple;
}

/// N tile for a GPU target: F itself when it fits, else the largest
/// multiple of 32 up to `maxTile` that divides F, else `maxTile`.
static int64_t pickTileN(int64_t filters, int64_t maxTile) {
  if (filters <= maxTile)
    return roundUp(filters, 8);
  for (int64_t tile = maxTile; tile >= 64; tile -= 32)
    if (filters % tile == 0)
      return tile;
  return maxTile;
}

int64_t mlir::conv3d::sm90StagesFor(int64_t tileM, int64_t tileN,
                                    KernelSchedule schedule) {
  int64_t stageBytes = (tileM + tileN) * 128;
  // Ping-pong gives each consumer warpgroup its own staging tile.
  int64_t stagingTiles = schedule == KernelSchedule::pingpong ? 2 : 1;
  constexpr int64_t kBudget = 232448 - 2048; // the block's shared memory
  int64_t stages = 0;
  for (int64_t chunks = 1; chunks <= 4; chunks *= 2) {
    int64_t staging = stagingTiles * tileM * (tileN / chunks + 4) * 4;
    stages = (kBudget - staging) / stageBytes;
    if (stages >= 4 || (tileN / chunks) % 16 != 0)
      break;
  }
  return std::clamp<int64_t>(stages, 2, 6);
}

IGemmConfigAttr
mlir::conv3d::selectIGemmConfig(MLIRContext *context,
                                const ConvGeometry &geometry, Target target,
                                std::optional<int64_t> quantBlockSize) {
  int64_t m = geometry.gemmM(), n = geometry.gemmN(), k = geometry.gemmK();
  constexpr int64_t kH100SMs = 132;
  int64_t tileM, tileN, tileK, stages, warpsM, warpsN;
  KernelSchedule schedule = KernelSchedule::cooperative;
  switch (target) {
  case Target::cpu:
    tileM = std::min<int64_t>(64, roundUp(m, 4));
    tileN = std::min<int64_t>(64, n);
    tileK = std::min<int64_t>(64, k);
    stages = 1;
    warpsM = warpsN = 1;
    break;
  case Target::sm80: {
    // Measured on an H100 over bench/shapes.json (bench/RESULTS.md): warp
    // tiles of 64 x 64 (32 x 32 for F = 32) do best; a 96-wide N tile is
    // slower than a 128-wide one that wastes a quarter of its columns, and
    // F = 192 prefers three 64-wide N tiles with 256-row M tiles.
    int64_t rowsPerWarp = 64;
    if (n <= 64) {
      tileN = roundUp(n, 8);
      tileM = 128;
      // Two warp columns need 8-column MMA tiles on each side.
      warpsN = tileN > 32 && tileN % 16 == 0 ? 2 : 1;
      rowsPerWarp = warpsN == 2 ? 64 : 32;
    } else if (n % 128 == 0 || n < 128) {
      tileN = 128;
      tileM = 128;
      warpsN = 2;
    } else if (n % 64 == 0) {
      tileN = 64;
      tileM = 256;
      warpsN = 1;
    } else {
      tileN = 128;
      tileM = 128;
      warpsN = 2;
    }
    // Balance the machine: a multiprocessor works through its share of the
    // blocks, so the time goes as ceil(blocks / SMs) times a block's rows
    // plus a fixed cost per block (pipeline prologue and epilogue, about
    // 32 rows' worth). Halve tile_m (down to 64) while that helps: e.g.
    // 147 blocks of 128 rows leave 15 multiprocessors with two blocks, 294
    // of 64 rows spread better (measured 8% faster on wan_chunk_mid).
    int64_t nTiles = ceilDiv(n, tileN);
    auto balancedCost = [&](int64_t rows) {
      return ceilDiv(ceilDiv(m, rows) * nTiles, kH100SMs) * (rows + 32);
    };
    while (tileM > 64 && balancedCost(tileM / 2) < balancedCost(tileM))
      tileM /= 2;
    // A halved M tile keeps four warps by thinning their rows.
    if (tileM < 128)
      rowsPerWarp = std::min<int64_t>(rowsPerWarp, 32);
    // Channel counts that are not a multiple of 2 take the register-staged
    // element-wise load path: a thinner K tile and 16-row warp tiles keep
    // the elements each thread stages (and their addresses) in registers.
    bool narrow = geometry.channels % 2 != 0;
    if (narrow)
      rowsPerWarp = 16;
    tileK = narrow ? 16 : 32;
    stages = tileM >= 256 ? 3 : 4;
    // 128-wide N tiles over at least 64 channels: a 64-deep K step halves
    // the barriers and copy issues per MMA; three stages (96 KB) keep two
    // blocks per multiprocessor, four would allow only one.
    if (tileN == 128 && geometry.channels >= 64) {
      tileK = 64;
      stages = 3;
    }
    warpsM = std::max<int64_t>(
        1, std::min<int64_t>(tileM / rowsPerWarp, 8 / warpsN));
    while (tileM % (16 * warpsM) != 0)
      --warpsM;
    break;
  }
  case Target::sm90: {
    // wgmma covers the whole N tile (up to 256 columns) per warpgroup; two
    // consumer warpgroups split a 128-row M tile (one for 64 rows). A K
    // step is one filter tap x 64 channels: one 128-byte-swizzled TMA box
    // per operand. The kernel is persistent, so the epilogue's f32 staging
    // tile has its own shared memory: as many stages as fit beside it (up
    // to 6), with the staging in column halves or quarters when whole
    // rows would leave fewer than 4 (SM90KernelPlan does the same).
    //
    // Measured on an H100 (bench/RESULTS.md, tuning): two consumer
    // warpgroups of 64 rows each beat one even when 128-row tiles leave
    // multiprocessors idle (wan_chunk_mid: 98 tiles of 128 x 192 run 25%
    // faster than 196 of 64 x 192), so tile_m drops to 64 only for M <=
    // 64. Narrow N tiles (F <= 96) are bound by the L2 bandwidth of
    // reloading the activation tile per tap: 256-row tiles halve the reloads
    // per output (wan_up_96: 256 x 96 is 1.2x faster than 128 x 96); F = 64
    // prefers 128 rows with deeper pipelines.
    //
    // Read per depth slice (past the rank-5 im2col limits), a tile never
    // spans two output depth slices: the rows of one slice bound the tile
    // as M does otherwise (an 8 x 8 slice takes 64-row tiles).
    tileN = pickTileN(n, 256);
    std::string why;
    int64_t rows =
        geometry.chooseTmaIm2colForm(2, why) == TmaIm2colForm::depthSlices
            ? std::min(m, geometry.outputSliceSize())
            : m;
    tileM = rows <= 64 ? 64 : 128;
    if (tileN > 64 && tileN <= 96 && rows >= 256 &&
        ceilDiv(m, 256) >= 2 * kH100SMs)
      tileM = 256;
    tileK = 64;
    stages = sm90StagesFor(tileM, tileN, KernelSchedule::cooperative);
    warpsM = tileM >= 128 ? 8 : 4;
    warpsN = 1;
    break;
  }
  case Target::sm100:
    // One cta_group::1 tcgen05.mma covers 128 rows (a TMEM lane each) and N
    // in multiples of 16 up to 256; its accumulators live in TMEM, so the
    // whole N tile costs no registers. As many stages (up to 6) as fit
    // beside the epilogue's staging (the plan's own computation); the four
    // epilogue warps are warps_m.
    tileN = roundUp(pickTileN(n, 256), 16);
    tileM = 128;
    tileK = 64;
    stages = std::max<int64_t>(
        2, sm100::SM100KernelPlan::maxStages(tileM, tileN, /*limit=*/6));
    warpsM = 4;
    warpsN = 1;
    break;
  }
  if (quantBlockSize)
    tileK = roundUp(tileK, *quantBlockSize);
  // The CPU and sm80 configs serve whatever target compiles them; the
  // asynchronous kernels' configs name their kernel.
  Target kernel =
      target == Target::sm90 || target == Target::sm100 ? target : Target::cpu;
  return IGemmConfigAttr::get(context, tileM, tileN, tileK, stages, warpsM,
                              warpsN, KOrder::taps_outer, /*splitK=*/1, kernel,
                              schedule, /*clusterM=*/1, Mainloop::im2col);
}

std::optional<std::string> mlir::conv3d::getTmaKernelProblem(
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
  if (geometry.channels < 64)
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
mlir::conv3d::getHaloKernelProblem(const ConvGeometry &geometry,
                                   FilterLayout layout, Type elementType,
                                   bool quantizesInTile) {
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

namespace {

/// The halo mainloop's configuration for `conv` on sm90, where it is the
/// faster kernel, or none. Measured on the H100 (bench/RESULTS.md,
/// 2026-11-24, third session): for narrow N tiles, which the im2col
/// mainloop starves by re-reading the activation per tap from L2, 256-row
/// halo tiles are 1.6-1.9x faster (video_r3d_64, F = 64; wan_up_96, F =
/// 96); from F = 192 up the im2col kernel is as fast or faster. Chosen
/// only where the window reuses rows (R * S > 1), the tiles fill the
/// multiprocessors, and the output takes the TMA-store epilogue.
std::optional<IGemmConfigAttr> selectHaloConfig(ConvOp conv) {
  ConvGeometry g = conv.getGeometry();
  constexpr int64_t kH100SMs = 132;
  if (g.filters > 96 || g.window[1] * g.window[2] < 2 ||
      conv.hasHistoryOrPrologue() || conv.getResidual() ||
      !conv.getOverwrite() || g.filters % 8 != 0 ||
      getHaloKernelProblem(g, conv.getFilterLayout(),
                           getElementTypeOrSelf(conv.getInput().getType()),
                           inputQuantBlockSize(conv).has_value()))
    return std::nullopt;
  Type outElem = getElementTypeOrSelf(conv.getInit().getType());
  if (!outElem.isBF16() && !outElem.isF16())
    return std::nullopt;
  if (auto memref = dyn_cast<MemRefType>(conv.getInit().getType());
      memref && !memref.getLayout().isIdentity())
    return std::nullopt;
  int64_t tileM = 256, tileN = roundUp(g.filters, 32);
  int64_t tiles = g.batch * g.outputSize(0) *
                  ceilDiv(g.outputSize(1), tileM / sm90::kWgmmaM) *
                  ceilDiv(g.outputSize(2), sm90::kWgmmaM);
  if (tiles < kH100SMs)
    return std::nullopt;
  std::optional<int64_t> stages =
      sm90::SM90KernelPlan::deepestHaloStages(g, tileM, tileN);
  if (!stages)
    return std::nullopt;
  return IGemmConfigAttr::get(conv.getContext(), tileM, tileN,
                              sm90::kChannelBlock, *stages, 8, 1,
                              KOrder::taps_outer, 1, Target::sm90,
                              KernelSchedule::cooperative, 1, Mainloop::halo);
}

} // namespace

std::optional<int64_t> mlir::conv3d::inputQuantBlockSize(ConvOp conv) {
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
    return quant->getBlockSize();
  return std::nullopt;
}

IGemmConfigAttr mlir::conv3d::selectIGemmConfigForConv(ConvOp conv,
                                                       Target target) {
  ConvGeometry geometry = conv.getGeometry();
  std::optional<int64_t> blockSize = inputQuantBlockSize(conv);
  MLIRContext *context = conv.getContext();
  if (target == Target::sm90)
    if (std::optional<IGemmConfigAttr> halo = selectHaloConfig(conv))
      return *halo;
  if (target == Target::sm90 || target == Target::sm100) {
    std::optional<std::string> problem;
    // A history operand is read per depth slice (chooseTmaIm2colForm),
    // which only the sm90 kernel implements.
    if (conv.hasPrologue())
      problem = "the TMA kernels do not apply an input prologue";
    else
      problem =
          getTmaKernelProblem(geometry, conv.getFilterLayout(),
                              getElementTypeOrSelf(conv.getInput().getType()),
                              /*tileQuantBlockSize=*/blockSize, target);
    if (problem) {
      conv.emitRemark() << "conv3d: the " << stringifyTarget(target)
                        << " kernel cannot take this convolution (" << *problem
                        << "); it runs on the sm80 kernel";
      IGemmConfigAttr sm80 =
          selectIGemmConfig(context, geometry, Target::sm80, blockSize);
      return withKernel(sm80, Target::sm80);
    }
    std::string why;
    if (geometry.chooseTmaIm2colForm(2, why) == TmaIm2colForm::depthSlices)
      conv.emitRemark() << "conv3d: the " << stringifyTarget(target)
                        << " kernel reads this input through per-depth-slice "
                           "(rank-4) TMA im2col descriptors ("
                        << why << ")";
  }
  return selectIGemmConfig(context, geometry, target, blockSize);
}

IGemmConfigAttr mlir::conv3d::withKernel(IGemmConfigAttr config,
                                         Target kernel) {
  return IGemmConfigAttr::get(
      config.getContext(), config.getTileM(), config.getTileN(),
      config.getTileK(), config.getStages(), config.getWarpsM(),
      config.getWarpsN(), config.getKOrder(), config.getSplitK(), kernel,
      config.getSchedule(), kernel == Target::sm90 ? config.getClusterM() : 1,
      kernel == Target::sm90 ? config.getMainloop() : Mainloop::im2col);
}

std::optional<std::string>
mlir::conv3d::checkConfigForConv(IGemmConfigAttr config,
                                 const ConvGeometry &geometry,
                                 std::optional<int64_t> quantBlockSize) {
  if (config.getSplitK() > 1 && config.getKOrder() != KOrder::taps_outer)
    return std::string("split_k > 1 needs k_order = taps_outer");
  if (!quantBlockSize)
    return std::nullopt;
  if (config.getTileK() % *quantBlockSize != 0)
    return llvm::formatv("tile_k = {0} must be a multiple of the NVFP4 block "
                         "size {1} (tile loads quantize whole blocks)",
                         config.getTileK(), *quantBlockSize)
        .str();
  int64_t sliceK = geometry.gemmK() / geometry.window[0];
  if (config.getKOrder() == KOrder::qslice_outer &&
      sliceK % *quantBlockSize != 0)
    return llvm::formatv("k_order = qslice_outer splits NVFP4 blocks: R*S*C "
                         "= {0} is not a multiple of the block size {1}",
                         sliceK, *quantBlockSize)
        .str();
  return std::nullopt;
}

/// A configuration the user or the host chose (rather than the heuristic)
/// for `conv`, made ready for `target`: a config without a kernel is for the
/// target's own. Returns null after reporting on `conv` when it does not fit
/// the convolution or names a TMA kernel that cannot take it; `origin` says
/// where it came from ("" for `config=`).
static IGemmConfigAttr checkChosenConfig(ConvOp conv, IGemmConfigAttr config,
                                         Target target, StringRef origin) {
  IGemmConfigAttr chosen =
      config.getKernel() == Target::cpu && target != Target::cpu
          ? withKernel(config, target)
          : config;
  ConvGeometry geometry = conv.getGeometry();
  std::optional<int64_t> blockSize = inputQuantBlockSize(conv);
  if (std::optional<std::string> problem =
          checkConfigForConv(chosen, geometry, blockSize)) {
    conv.emitError() << "cannot use " << origin << "tile configuration "
                     << chosen << ": " << *problem;
    return {};
  }
  // An sm90 or sm100 config on a convolution that kernel cannot take is
  // refused here, with the way out, rather than in the lowering.
  Target kernel = chosen.getKernel();
  if ((target == Target::sm90 || target == Target::sm100) && kernel == target) {
    Type elementType = getElementTypeOrSelf(conv.getInput().getType());
    if (std::optional<std::string> problem =
            chosen.getMainloop() == Mainloop::halo
                ? getHaloKernelProblem(geometry, conv.getFilterLayout(),
                                       elementType, blockSize.has_value())
                : getTmaKernelProblem(geometry, conv.getFilterLayout(),
                                      elementType, blockSize, kernel)) {
      conv.emitError() << "cannot use " << origin << "tile configuration "
                       << chosen << ": the " << stringifyTarget(kernel)
                       << " kernel cannot take this convolution (" << *problem
                       << "); force an sm80 configuration with kernel=sm80";
      return {};
    }
  }
  return chosen;
}

namespace {
struct SelectConfigPass
    : mlir::conv3d::impl::Conv3dSelectConfigBase<SelectConfigPass> {
  using Base::Base;
  SelectConfigPass(const Conv3dSelectConfigOptions &options,
                   std::function<IGemmConfigAttr(ConvOp)> hook)
      : Base(options), hook(std::move(hook)) {}

  void runOnOperation() override {
    IGemmConfigAttr forced;
    if (!config.empty()) {
      std::string error;
      forced = parseIGemmConfig(&getContext(), config, error);
      if (!forced) {
        getOperation()->emitError() << "conv3d-select-config: " << error;
        return signalPassFailure();
      }
    }
    WalkResult result = getOperation()->walk([&](ConvOp conv) {
      if (conv.getConfig())
        return WalkResult::advance();
      // A packed NVFP4 filter is multiplied only by the block-scaled sm100
      // kernel, which chooses its own tile (conv3d-lower-block-scaled-to-
      // sm100) unless the host or the user chose one: that configuration
      // is the kernel's to take or refuse, with its reason.
      if (conv.hasPackedFilter()) {
        IGemmConfigAttr chosen = hook ? hook(conv) : IGemmConfigAttr();
        if (!chosen)
          chosen = forced;
        if (chosen)
          conv.setConfigAttr(chosen.getKernel() == Target::cpu
                                 ? withKernel(chosen, Target::sm100)
                                 : chosen);
        return WalkResult::advance();
      }
      ConvGeometry geometry = conv.getGeometry();
      if (!geometry.hasStaticShape())
        return WalkResult::advance(); // dynamic shapes keep no config
      // The host's hook first, then a forced config, then the heuristic.
      IGemmConfigAttr chosen;
      if (IGemmConfigAttr fromHook = hook ? hook(conv) : IGemmConfigAttr())
        chosen = checkChosenConfig(conv, fromHook, target, "the hook's ");
      else if (forced)
        chosen = checkChosenConfig(conv, forced, target, "");
      else if (IGemmConfigAttr heuristic =
                   selectIGemmConfigForConv(conv, target);
               std::optional<std::string> problem = checkConfigForConv(
                   heuristic, geometry, inputQuantBlockSize(conv)))
        conv.emitError() << "cannot use tile configuration " << heuristic
                         << ": " << *problem;
      else
        chosen = heuristic;
      if (!chosen)
        return WalkResult::interrupt();
      conv.setConfigAttr(chosen);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  std::function<IGemmConfigAttr(ConvOp)> hook;
};
} // namespace

std::unique_ptr<Pass> mlir::conv3d::createConv3dSelectConfig(
    const Conv3dSelectConfigOptions &options,
    std::function<IGemmConfigAttr(ConvOp)> selectConfig) {
  return std::make_unique<SelectConfigPass>(options, std::move(selectConfig));
}
