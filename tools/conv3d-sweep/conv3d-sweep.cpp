//===- conv3d-sweep.cpp - randomized correctness sweep --------------------===//
//
// Draws random valid convolutions (strides, dilations, asymmetric and causal
// padding, odd channel counts, batch > 1, 1x1x1 to 5x5x5 windows, both filter
// layouts) and, per case, random compile variants (epilogue, accumulation,
// NVFP4 input quantization, Q-slice strategy, awkward tile configs). Each
// case is compiled through the engine, run on fresh random data with a
// poisoned output, and compared with the independent double-precision
// reference. Exit status 1 if any case exceeds its tolerance.
//
// --assemble draws the same cases but runs nothing: each is compiled to PTX
// and every kernel assembled by ptxas for the target's chip (a ptxas error
// or warning fails the case). It needs no GPU, and it is how sm100 code,
// which no GPU here runs, is swept: the tcgen05 kernel with cta_group::1
// and ::2 tiles, NVFP4 in fake mode, real NVFP4 (the block-scaled kernel,
// variant `real`) and the fallbacks to the sm80 kernel.
//
//===----------------------------------------------------------------------===//

#include "PtxAssembler.h"

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"
#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"
#include "conv3d/Target/SM100/SM100KernelPlan.h"
#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <map>
#include <random>

using namespace mlir::conv3d;
namespace cl = llvm::cl;

static cl::OptionCategory sweepCategory("conv3d-sweep options");

static cl::opt<int> count("count", cl::desc("Number of random cases"),
                          cl::init(50), cl::cat(sweepCategory));
static cl::opt<unsigned long long> seed("seed", cl::desc("Random seed"),
                                        cl::init(2024), cl::cat(sweepCategory));
static cl::opt<std::string>
    dtypes("dtypes",
           cl::desc("Comma-separated input dtypes to cycle through (default "
                    "f32,bf16; bf16,f16 for the GPU targets, which compute "
                    "no f32)"),
           cl::init("f32,bf16"), cl::cat(sweepCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu, sm80, sm90 or sm100 (running GPU targets "
                    "needs a GPU; sm90 an H100/H200; sm100 only with "
                    "--assemble). With sm90 and sm100, most cases are drawn "
                    "where the target's kernel applies (C >= 64, FQRSC), the "
                    "rest exercise its fallback to the sm80 kernel"),
           cl::init("cpu"), cl::cat(sweepCategory));
static cl::opt<bool> assemble(
    "assemble",
    cl::desc("Run nothing: compile each case of a GPU target to PTX and "
             "assemble every kernel with the CUDA toolkit's ptxas "
             "($CUDA_HOME) for the target's chip (sm_80, sm_90a, sm_100a); "
             "a ptxas error or warning fails the case. Needs no GPU; the "
             "one mode of --target=sm100"),
    cl::cat(sweepCategory));
static cl::opt<std::string> lowering("lowering",
                                     cl::desc("CPU lowering: igemm, "
                                              "reference"),
                                     cl::init("igemm"), cl::cat(sweepCategory));
static cl::opt<std::string> variants(
    "variants",
    cl::desc("Comma-separated random variants to draw from: epilogue, "
             "accumulate, fqrsc, quant (any placement), quant-tile (fused in "
             "the tile load), qslice (any strategy), qslice-fused (none, "
             "auto or fused), config (forced tile configurations, valid for "
             "the target), stream (a history operand of 0-3 frames and an "
             "input prologue: RMS norm with or without beta, an "
             "activation; for sm90, half of them the history alone, which "
             "the sm90 kernel reads), packed (the filter packed to real "
             "NVFP4 by Engine::quantizeFilter, unpacked by the compiled code: "
             "nvfp4-mode=fake; where C is a multiple of 16), real "
             "(sm100 with --assemble: both operands NVFP4 with "
             "nvfp4-mode=real, the block-scaled kernel, on C = 256 or 512)"),
    cl::init("epilogue,accumulate,fqrsc"), cl::cat(sweepCategory));
static cl::opt<int> maxWork("max-work",
                            cl::desc("Upper bound on M*N*K of a case (default "
                                     "3e6; 4e7 for sm90, whose kernel needs "
                                     "64 channels)"),
                            cl::init(0), cl::cat(sweepCategory));
static cl::opt<std::string> geometries(
    "geometries",
    cl::desc("With --target=sm90 or sm100, which geometries the TMA "
             "kernel's cases draw: any (default: about a quarter of them "
             "past the rank-5 TMA im2col limits, read through "
             "per-depth-slice rank-4 descriptors by the sm90 kernel; the "
             "sm100 kernel leaves them to the sm80 kernel), tma-rank5 "
             "(within the rank-5 limits), tma-rank4 (all past them, within "
             "rank 4's)"),
    cl::init("any"), cl::cat(sweepCategory));
static cl::opt<bool> verbose("v", cl::desc("Print every case"),
                             cl::cat(sweepCategory));

namespace {

class CaseGenerator {
public:
  CaseGenerator(uint64_t seed, double workLimit)
      : rng(seed), workLimit(workLimit) {}

  int64_t pick(std::initializer_list<int64_t> values) {
    std::uniform_int_distribution<size_t> dist(0, values.size() - 1);
    return *(values.begin() + dist(rng));
  }
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

  /// A random valid geometry with bounded work.
  ConvGeometry geometry() {
    for (;;) {
      ConvGeometry g;
      g.batch = pick({1, 1, 2, 3});
      g.channels = pick({1, 2, 3, 4, 5, 8, 13, 16, 17, 24, 32, 48});
      g.filters = pick({1, 3, 4, 5, 7, 8, 16, 24, 33});
      int64_t cube = pick({1, 3, 3, 3, 2, 5});
      for (unsigned axis = 0; axis < 3; ++axis) {
        g.window[axis] = coin(0.8) ? cube : pick({1, 2, 3});
        g.inputSize[axis] = range(1, 10);
        g.strides[axis] = pick({1, 1, 1, 2, 3});
        g.dilations[axis] = pick({1, 1, 1, 2, 3});
        g.padLow[axis] = range(0, 3);
        g.padHigh[axis] = range(0, 3);
      }
      if (coin(0.25)) { // causal temporal padding
        g.padLow[0] = g.effectiveWindow(0) - 1;
        g.padHigh[0] = 0;
      }
      if (g.validate())
        continue;
      double work = double(g.gemmM()) * g.gemmN() * g.gemmK();
      if (work > workLimit || g.gemmM() < 1)
        continue;
      return g;
    }
  }

  /// A random valid geometry the sm90 kernel takes: C a multiple of 8 from
  /// 64, strides up to 3, paddings and windows within the rank-5 TMA im2col
  /// corners, or (`rank4`, an axis stretched) past them: depth padding,
  /// stride or dilation beyond rank 5's, or height/width padding or
  /// dilation up to rank 4's corners, read through per-depth-slice
  /// descriptors. The sm100 kernel takes the same rank-5 geometries;
  /// `realNVFP4` draws C from the block-scaled kernel's multiples of 32.
  ConvGeometry sm90Geometry(bool rank4, bool realNVFP4 = false) {
    for (;;) {
      ConvGeometry g;
      g.batch = pick({1, 1, 2, 3});
      // Real NVFP4 (the block-scaled sm100 kernel) loads a voxel's C / 2
      // code bytes by TMA: C a multiple of 32 (its scales are read from
      // rows padded to 16 bytes a 256-channel block).
      g.channels = realNVFP4 ? pick({256, 256, 512, 96, 320})
                             : pick({64, 64, 72, 96, 128, 136, 192});
      g.filters = pick({8, 16, 40, 64, 96, 128, 136, 200, 256, 264});
      int64_t cube = pick({1, 3, 3, 3, 2, 5});
      for (unsigned axis = 0; axis < 3; ++axis) {
        g.window[axis] = coin(0.8) ? cube : pick({1, 2, 3});
        g.inputSize[axis] = range(1, 12);
        g.strides[axis] = pick({1, 1, 1, 2, 3});
        g.dilations[axis] = pick({1, 1, 1, 2});
        g.padLow[axis] = range(0, 3);
        g.padHigh[axis] = range(0, 3);
      }
      if (coin(0.3)) { // causal temporal padding
        g.padLow[0] = g.effectiveWindow(0) - 1;
        g.padHigh[0] = 0;
      }
      if (rank4) {
        unsigned axis = unsigned(range(0, 2));
        switch (range(0, 2)) {
        case 0: // padding past rank 5's corners
          g.padLow[axis] = range(17, 40);
          if (coin())
            g.padHigh[axis] = range(17, 40);
          break;
        case 1: // a dilated window past rank 5's offsets
          g.window[axis] = 3;
          g.dilations[axis] = range(16, 30);
          g.padHigh[axis] = range(0, 2 * g.dilations[axis]);
          break;
        default: // a depth stride past TMA's element strides
          g.strides[kDepth] = range(9, 12);
          g.inputSize[kDepth] = range(10, 30);
          break;
        }
      }
      std::string why;
      std::optional<TmaIm2colForm> form = g.chooseTmaIm2colForm(2, why);
      if (g.validate() || !form ||
          (*form == TmaIm2colForm::depthSlices) != rank4)
        continue;
      double work = double(g.gemmM()) * g.gemmN() * g.gemmK();
      if (work > workLimit || g.gemmM() < 1)
        continue;
      return g;
    }
  }

  /// `config` with the K order a forced config needs: qslice_outer for the
  /// fused Q-slice strategy, else sometimes split-K.
  std::string withKOrder(std::string config, bool qsliceOuter,
                         bool splitK = true) {
    if (qsliceOuter)
      return config + ",k_order=qslice_outer";
    if (splitK && coin(0.2))
      return config + ",split_k=" + std::to_string(pick({2, 3}));
    return config;
  }

  /// A forced configuration valid for the sm90 kernel: 64-row wgmmas in one
  /// or two consumer warpgroups, N tiles of 8-column multiples up to 256.
  std::string sm90Config(bool qsliceOuter) {
    int64_t warpsM = pick({4, 8});
    int64_t tileM = warpsM == 4 ? pick({64, 128}) : pick({128, 256});
    int64_t tileN =
        tileM == 256 ? pick({32, 64, 128}) : pick({16, 48, 64, 96, 128, 256});
    // 256-row or 256-column tiles leave room for 3 stages beside the
    // epilogue's staging.
    int64_t stages =
        tileM == 256 || tileN == 256 ? pick({2, 3}) : pick({2, 3, 4});
    std::string text = llvm::formatv(
        "tile_m={0},tile_n={1},tile_k=64,stages={2},warps_m={3},warps_n=1",
        tileM, tileN, stages, warpsM);
    // Ping-pong: one warpgroup per tile of at most 128 rows, no split-K
    // (its wgmmas would be serialized).
    bool pingPong = warpsM == 4 && coin(0.5);
    if (pingPong)
      text += ",schedule=pingpong";
    // 2-block clusters sharing the filter tile: halves of whole 8-row
    // swizzle atoms, and the same K steps in both blocks (no qslice_outer).
    if (!qsliceOuter && tileN % 16 == 0 && coin(0.35))
      text += ",cluster_m=2";
    return withKOrder(text, qsliceOuter, /*splitK=*/!pingPong);
  }

  /// A forced configuration valid for the sm100 kernel: 128-row tiles
  /// (cta_group::1) or 256-row tiles over a CTA pair (cta_group::2), N
  /// tiles of 16-column multiples up to 256 (every one of them with two
  /// TMEM accumulator buffers), as many stages as fit or fewer.
  std::string sm100Config(bool qsliceOuter) {
    int64_t tileM = pick({128, 128, 256});
    for (;;) {
      int64_t tileN = 16 * range(1, 16);
      int64_t most = sm100::SM100KernelPlan::maxStages(tileM, tileN, 6);
      if (most < 2)
        continue;
      std::string text = llvm::formatv(
          "tile_m={0},tile_n={1},tile_k=64,stages={2},warps_m=4,warps_n=1",
          tileM, tileN, range(2, most));
      return withKOrder(text, qsliceOuter);
    }
  }

  /// A forced configuration of the block-scaled sm100 kernel (real NVFP4)
  /// for `g`: a 128 x tile_n tile (cta_group::1), as many stages as fit or
  /// fewer; none when no N tile drawn fits.
  std::optional<std::string> blockScaledConfig(const ConvGeometry &g) {
    int64_t tileN = 16 * range(1, 16);
    int64_t most = sm100::nvfp4::BlockScaledPlan::maxStages(g, tileN, 6);
    if (most < 2)
      return std::nullopt;
    return llvm::formatv(
               "tile_m=128,tile_n={0},tile_k=64,stages={1},warps_m=4,warps_n=1",
               tileN, range(2, most))
        .str();
  }

  /// A forced configuration of the sm90 halo mainloop (mainloop = halo)
  /// where it takes `spec` (unit strides in H and W, C from 32 up, an
  /// overwritten 16-bit output without residual, no NVFP4, history or
  /// prologue, the flat K order), with as many filter stages as fit beside
  /// two patches; otherwise none.
  std::optional<std::string> sm90HaloConfig(const ConvSpec &spec,
                                            bool qsliceOuter) {
    const ConvGeometry &g = spec.geometry;
    bool outputTakesTmaStore = !spec.hasResidual && !spec.accumulate &&
                               g.filters % 8 == 0 &&
                               (spec.outputType == ElementType::bf16 ||
                                spec.outputType == ElementType::f16);
    if (qsliceOuter || spec.inputQuantBlockSize || spec.hasNorm ||
        spec.inputActivation != Activation::none || g.historyDepth ||
        spec.filterLayout != FilterLayout::fqrsc || g.strides[1] != 1 ||
        g.strides[2] != 1 || g.channels < 32 || g.channels % 8 != 0 ||
        !outputTakesTmaStore)
      return std::nullopt;
    int64_t tileM = pick({128, 256});
    int64_t tileN = pick({32, 64, 96, 128});
    std::optional<int64_t> stages = sm90::SM90KernelPlan::deepestHaloStages(
        g, tileM, tileN, pick({4, 6, 8}));
    if (!stages)
      return std::nullopt;
    return llvm::formatv("tile_m={0},tile_n={1},tile_k=64,stages={2},"
                         "warps_m=8,warps_n=1,mainloop=halo",
                         tileM, tileN, *stages)
        .str();
  }

  /// A forced configuration valid for sm80: warp tiles of 16-row and
  /// 8-column multiples, 2 to 4 stages.
  std::string gpuConfig(const ConvSpec &spec, bool qsliceOuter) {
    int64_t warpsM = pick({1, 2, 4}), warpsN = pick({1, 2});
    int64_t tileM = 16 * warpsM * pick({1, 2, 4});
    int64_t tileN = 8 * warpsN * pick({1, 2, 4});
    int64_t tileK = pick({16, 32, 64});
    if (spec.inputQuantBlockSize)
      tileK = std::max<int64_t>(tileK, *spec.inputQuantBlockSize);
    std::string text = llvm::formatv(
        "tile_m={0},tile_n={1},tile_k={2},stages={3},warps_m={4},warps_n={5}",
        tileM, tileN, tileK, pick({2, 3, 4}), warpsM, warpsN);
    return withKOrder(text, qsliceOuter);
  }

  /// A tile configuration with awkward sizes (not powers of two, larger
  /// than the problem, tiny), valid for `spec`.
  std::string config(const ConvSpec &spec, bool qsliceOuter) {
    int64_t tileK = pick({1, 3, 8, 16, 24, 32, 48, 64});
    if (spec.inputQuantBlockSize)
      tileK = *spec.inputQuantBlockSize * pick({1, 1, 2});
    std::string text = llvm::formatv("tile_m={0},tile_n={1},tile_k={2}",
                                     pick({1, 5, 16, 17, 32, 64, 128}),
                                     pick({1, 3, 8, 16, 24, 64}), tileK);
    // split_k needs the flat K order.
    if (qsliceOuter)
      text += ",k_order=qslice_outer";
    else if (coin(0.3))
      text += ",split_k=" + std::to_string(pick({2, 3}));
    return text;
  }

  std::mt19937_64 rng;
  double workLimit;
};

struct CaseResult {
  bool passed = false;
  double error = 0, tolerance = 0;
  std::string message;
};

CaseResult runCase(Engine &engine, const ConvSpec &spec,
                   const CompileOptions &options, uint64_t dataSeed) {
  CaseResult result;
  auto conv = engine.compile(spec, options);
  if (!conv) {
    result.message = llvm::toString(conv.takeError());
    return result;
  }
  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  HostTensor bias =
      HostTensor::zeros(ElementType::f32, {spec.geometry.filters});
  HostTensor residual = HostTensor::zeros(spec.outputType, spec.outputShape());
  HostTensor init = HostTensor::zeros(spec.outputType, spec.outputShape());
  fillRandomNormal(input, dataSeed, 1.0);
  fillRandomNormal(filter, dataSeed + 1,
                   1.0 / std::sqrt(double(spec.geometry.gemmK())));
  fillRandomNormal(bias, dataSeed + 2, 0.5);
  fillRandomNormal(residual, dataSeed + 3, 1.0);
  HostTensor history = HostTensor::zeros(spec.inputType, spec.historyShape());
  HostTensor gamma =
      HostTensor::zeros(ElementType::f32, {spec.geometry.channels});
  HostTensor beta =
      HostTensor::zeros(ElementType::f32, {spec.geometry.channels});
  fillRandomNormal(history, dataSeed + 5, 1.0);
  fillRandomNormal(gamma, dataSeed + 6, 1.0);
  fillRandomNormal(beta, dataSeed + 7, 0.5);
  if (spec.accumulate)
    fillRandomNormal(init, dataSeed + 4, 1.0);
  else
    fillPoison(init);
  HostTensor output = init;
  // amax above the data maximum exercises scales below 448.
  float amax = 0;
  for (int64_t i = 0; i < input.numElements(); ++i)
    amax = std::max(amax, float(std::fabs(input.get(i))));
  amax *= 1.5f;

  // A packed filter: the convolution reads its codes and scales, the
  // reference the reference quantizer's values of the same filter. An amax
  // below max |w| saturates some blocks.
  std::optional<Engine::PackedNVFP4> packed;
  float filterAmax = 0;
  if (spec.packedFilter) {
    for (int64_t i = 0; i < filter.numElements(); ++i)
      filterAmax = std::max(filterAmax, float(std::fabs(filter.get(i))));
    filterAmax *= (dataSeed % 3 == 0) ? 0.5f : 1.0f;
    llvm::Expected<Engine::PackedNVFP4> codes =
        engine.quantizeFilter(spec, filter, filterAmax, CompileOptions{});
    if (!codes) {
      result.message = llvm::toString(codes.takeError());
      return result;
    }
    packed = std::move(*codes);
    filter = referenceQuantize(filter, 16, filterAmax, 1, 4);
  }

  HostConvBuffers buffers;
  buffers.input = &input;
  buffers.filter = &filter;
  buffers.packedFilter = packed ? &*packed : nullptr;
  buffers.filterAmax = filterAmax;
  buffers.bias = spec.hasBias ? &bias : nullptr;
  buffers.residual = spec.hasResidual ? &residual : nullptr;
  buffers.history = spec.geometry.historyDepth > 0 ? &history : nullptr;
  buffers.normGamma = spec.hasNorm ? &gamma : nullptr;
  buffers.normBeta = spec.hasNormBeta ? &beta : nullptr;
  buffers.amax = amax;
  buffers.output = &output;
  if (llvm::Error error = runWithHostBuffers(**conv, buffers)) {
    result.message = llvm::toString(std::move(error));
    return result;
  }
  result.error = relativeL2Error(
      referenceConv(referenceProblem(spec, buffers, &init)), output);
  result.tolerance = spec.checkTolerance();
  result.passed = result.error <= result.tolerance;
  return result;
}

/// What --assemble reached: kernels by their MMA, and cases by the MMA of
/// their convolution's kernel (all cases, and those with NVFP4 in fake
/// mode).
struct AssembleTally {
  std::map<std::string, int> kernels, cases, fakeNVFP4Cases;

  /// "3 mma.sync, 5 tcgen05-cta1" (names in order), or "none".
  static std::string describe(const std::map<std::string, int> &counts) {
    std::string text;
    for (const auto &[kind, n] : counts)
      text += llvm::formatv("{0}{1} {2}", text.empty() ? "" : ", ", n, kind);
    return text.empty() ? "none" : text;
  }
};

/// The case's convolution kernel among its kernels: the block-scaled MMA,
/// then tcgen05, wgmma, mma.sync; prepasses issue none.
conv3d_sweep::KernelKind
convolutionKernel(llvm::ArrayRef<conv3d_sweep::AssembledKernel> kernels) {
  using conv3d_sweep::KernelKind;
  KernelKind best = KernelKind::NoMma;
  for (KernelKind kind :
       {KernelKind::MmaSync, KernelKind::Wgmma, KernelKind::Tcgen05Cta1,
        KernelKind::Tcgen05Cta2, KernelKind::BlockScaled})
    for (const conv3d_sweep::AssembledKernel &kernel : kernels)
      if (kernel.kind == kind)
        best = kind;
  return best;
}

/// --assemble: `spec` compiled to PTX for `options.target` and every
/// kernel assembled by ptxas, counted in `tally`.
CaseResult assembleCase(Engine &engine, const ConvSpec &spec,
                        const CompileOptions &options, AssembleTally &tally) {
  CaseResult result;
  llvm::Expected<std::string> ptx = engine.emit(spec, options, EmitStage::Ptx);
  if (!ptx) {
    result.message = llvm::toString(ptx.takeError());
    return result;
  }
  llvm::Expected<std::vector<conv3d_sweep::AssembledKernel>> kernels =
      conv3d_sweep::assemblePtxModules(*ptx, ptxasPathFor(options),
                                       gpuChipFor(options));
  if (!kernels) {
    result.message = llvm::toString(kernels.takeError());
    return result;
  }
  for (const conv3d_sweep::AssembledKernel &kernel : *kernels) {
    llvm::StringRef kind = conv3d_sweep::stringifyKernelKind(kernel.kind);
    ++tally.kernels[kind.str()];
    result.message += (result.message.empty() ? "" : " ") + kind.str();
  }
  std::string conv =
      conv3d_sweep::stringifyKernelKind(convolutionKernel(*kernels)).str();
  ++tally.cases[conv];
  if ((spec.inputQuantBlockSize || spec.packedFilter) &&
      options.nvfp4Mode == NVFP4Mode::Fake)
    ++tally.fakeNVFP4Cases[conv];
  result.passed = true;
  return result;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(sweepCategory);
  cl::ParseCommandLineOptions(argc, argv, "conv3d randomized sweep\n");

  std::optional<Target> parsedTarget = symbolizeTarget(target);
  // The GPU targets compute bf16 and f16 (f32 runs on the CPU target).
  if (parsedTarget && *parsedTarget != Target::cpu &&
      !dtypes.getNumOccurrences())
    dtypes = "bf16,f16";
  llvm::SmallVector<llvm::StringRef> dtypeNames, variantNames;
  llvm::StringRef(dtypes).split(dtypeNames, ',', -1, false);
  llvm::StringRef(variants).split(variantNames, ',', -1, false);
  std::vector<ElementType> types;
  for (llvm::StringRef name : dtypeNames) {
    std::optional<ElementType> type = parseElementType(name);
    if (!type) {
      llvm::errs() << "conv3d-sweep: unknown dtype '" << name << "'\n";
      return 2;
    }
    types.push_back(*type);
  }
  auto has = [&](llvm::StringRef v) {
    return llvm::is_contained(variantNames, v);
  };
  if (!parsedTarget || types.empty()) {
    llvm::errs() << "conv3d-sweep: bad --target or --dtypes\n";
    return 2;
  }
  if (geometries != "any" && geometries != "tma-rank5" &&
      geometries != "tma-rank4") {
    llvm::errs() << "conv3d-sweep: unknown --geometries '" << geometries
                 << "' (any, tma-rank5, tma-rank4)\n";
    return 2;
  }

  bool sm90 = *parsedTarget == Target::sm90;
  bool sm100 = *parsedTarget == Target::sm100;
  if (sm100 && !assemble) {
    llvm::errs() << "conv3d-sweep: --target=sm100 needs --assemble: sm100 "
                    "code is compiled and assembled, never run (no sm_100 "
                    "GPU has run it)\n";
    return 2;
  }
  if (assemble && *parsedTarget == Target::cpu) {
    llvm::errs() << "conv3d-sweep: --assemble needs a GPU target (sm80, "
                    "sm90 or sm100)\n";
    return 2;
  }
  if (*parsedTarget != Target::cpu &&
      llvm::is_contained(types, ElementType::f32)) {
    llvm::errs() << "conv3d-sweep: --dtypes: the GPU targets compute bf16 "
                    "and f16 (f32 runs on the CPU target)\n";
    return 2;
  }
  if (has("real") && !sm100) {
    llvm::errs() << "conv3d-sweep: variant 'real' needs --target=sm100 "
                    "(--assemble)\n";
    return 2;
  }

  // Every case is compiled: a sweep tests the compiler, and its one-off
  // kernels would only fill the disk cache.
  Engine engine{CacheOptions{}};
  // Nothing runs with --assemble, so sizes cost nothing but compile time
  // (which does not depend on them).
  CaseGenerator gen(seed, maxWork > 0       ? double(maxWork)
                          : assemble        ? 1e12
                          : (sm90 || sm100) ? 4e7
                                            : 3e6);
  int failures = 0;
  double worst = 0;
  AssembleTally tally;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    ConvSpec spec;
    // sm90 and sm100: most cases where the target's kernel applies, the
    // rest test the fallback. Some sm100 cases are real NVFP4.
    bool sm90Case = (sm90 || sm100) && gen.coin(0.85);
    bool realCase = sm90Case && has("real") && gen.coin(0.4);
    // Per-depth-slice cases: all of them, none, or about a quarter (the
    // block-scaled kernel has no such form: none of its cases).
    bool rank4 =
        sm90Case && !realCase &&
        (geometries == "tma-rank4" || (geometries == "any" && gen.coin(0.25)));
    spec.geometry =
        sm90Case ? gen.sm90Geometry(rank4, realCase) : gen.geometry();
    spec.inputType = types[i % types.size()];
    spec.outputType = gen.coin(0.3) ? ElementType::f32 : spec.inputType;
    if (sm90Case || (has("fqrsc") && gen.coin()))
      spec.filterLayout = FilterLayout::fqrsc;
    if (has("epilogue") && gen.coin(0.6)) {
      spec.hasBias = gen.coin();
      spec.hasResidual = gen.coin(0.4);
      spec.activation = static_cast<Activation>(gen.range(0, 3));
    }
    if (has("accumulate"))
      spec.accumulate = gen.coin(0.25);
    if (has("packed") && spec.geometry.channels % 16 == 0 && gen.coin(0.5)) {
      spec.filterLayout = FilterLayout::fqrsc;
      spec.packedFilter = true;
    }
    if ((has("quant") || has("quant-tile")) && gen.coin(0.5))
      spec.inputQuantBlockSize = gen.pick({16, 16, 32, 64});
    // Real NVFP4: both operands, blocks of 16.
    if (realCase) {
      spec.inputQuantBlockSize = 16;
      spec.packedFilter = true;
    }
    // A streaming decoder's step: cached frames and the input prologue
    // (which NVFP4 quantization of the input excludes).
    bool streamCase = has("stream") && !spec.inputQuantBlockSize &&
                      !spec.packedFilter && gen.coin(0.5);
    // On sm90, half of them take no prologue: the sm90 kernel reads the
    // history itself either way (a prologue runs in its prepass unless the
    // fused placement sends the convolution to the sm80 kernel).
    bool streamPrologue = streamCase && (!sm90Case || gen.coin());
    if (streamCase)
      spec.geometry.addHistory(gen.range(0, 3));
    if (streamPrologue) {
      spec.hasNorm = gen.coin(0.7);
      spec.hasNormBeta = spec.hasNorm && gen.coin();
      spec.normEps = gen.coin() ? 1e-6f : 1e-3f;
      spec.inputActivation = static_cast<Activation>(gen.range(0, 3));
    }

    CompileOptions options;
    options.target = *parsedTarget;
    if (realCase)
      options.nvfp4Mode = NVFP4Mode::Real;
    options.lowering = lowering == "reference" ? CpuLowering::Reference
                                               : CpuLowering::ImplicitGemm;
    options.qslice = QSliceStrategy::None;
    // Both placements of the prologue: the prepass (the default) and fused
    // in the loads.
    if (streamPrologue && gen.coin(0.3))
      options.prologuePlacement = ProloguePlacement::Fused;
    if (realCase)
      ; // the block-scaled kernel takes the K loop whole
    else if (has("qslice"))
      options.qslice = gen.pick({0, 1, 2, 3}) == 0 ? QSliceStrategy::None
                       : gen.coin(0.4)             ? QSliceStrategy::Fused
                       : gen.coin()                ? QSliceStrategy::Separate
                                                   : QSliceStrategy::Auto;
    else if (has("qslice-fused"))
      options.qslice = gen.pick({0, 1, 2}) == 0 ? QSliceStrategy::None
                       : gen.coin()             ? QSliceStrategy::Fused
                                                : QSliceStrategy::Auto;
    if (spec.inputQuantBlockSize) {
      // A prepass only has the semantics of K blocks when the blocks are
      // whole channel groups.
      bool prepassExact =
          spec.geometry.channels % *spec.inputQuantBlockSize == 0;
      int64_t choice = gen.range(0, prepassExact ? 2 : 1);
      options.quantPlacement = !has("quant") ? QuantPlacement::Tile
                               : choice == 0 ? QuantPlacement::Auto
                               : choice == 1 ? QuantPlacement::Tile
                                             : QuantPlacement::Prepass;
    }
    // Forced Q-slice strategies are rejected (with a diagnostic) when NVFP4
    // blocks straddle depth slices; draw only combinations that apply.
    int64_t sliceK = spec.geometry.gemmK() / spec.geometry.window[0];
    if (spec.inputQuantBlockSize && sliceK % *spec.inputQuantBlockSize != 0 &&
        (options.qslice == QSliceStrategy::Fused ||
         options.qslice == QSliceStrategy::Separate))
      options.qslice = QSliceStrategy::Auto;
    // The separate strategy refuses a history and a prologue.
    if (streamCase && options.qslice == QSliceStrategy::Separate)
      options.qslice = QSliceStrategy::Fused;
    bool qsliceOuter = options.qslice == QSliceStrategy::Fused;
    // A forced sm90 config where the sm90 kernel takes the quantization in
    // its tiles (blocks of 16, 32 or 64 dividing C; a prepass feeds it too);
    // otherwise the tile placement runs on the sm80 kernel.
    bool sm90TakesQuant =
        !spec.inputQuantBlockSize ||
        (*spec.inputQuantBlockSize <= 64 &&
         spec.geometry.channels % *spec.inputQuantBlockSize == 0);
    // The sm100 kernel takes a prepass's output, not the tile placement
    // (which `auto` keeps where blocks straddle voxels), and reads no
    // history.
    bool sm100TakesCase =
        (!spec.inputQuantBlockSize ||
         options.quantPlacement == QuantPlacement::Prepass ||
         (options.quantPlacement == QuantPlacement::Auto &&
          spec.geometry.channels % *spec.inputQuantBlockSize == 0)) &&
        !streamCase;
    std::optional<std::string> halo;
    // The halo mainloop stores dense 16-bit tiles: not the f32 partial sums
    // of separate Q-slices.
    if (has("config") && sm90Case && sm90 &&
        options.qslice != QSliceStrategy::Separate && gen.coin(0.3))
      halo = gen.sm90HaloConfig(spec, qsliceOuter);
    if (halo)
      options.config = *halo;
    else if (realCase) {
      // The block-scaled kernel chooses its own tile unless forced.
      if (has("config") && gen.coin(0.6))
        options.config = gen.blockScaledConfig(spec.geometry).value_or("");
    } else if (has("config") && gen.coin(0.6))
      options.config =
          options.target == Target::cpu ? gen.config(spec, qsliceOuter)
          : sm90Case && sm90 && sm90TakesQuant &&
                  (!streamPrologue ||
                   options.prologuePlacement == ProloguePlacement::Prepass)
              ? gen.sm90Config(qsliceOuter)
          : sm90Case && sm100 && sm100TakesCase && !rank4
              ? gen.sm100Config(qsliceOuter)
              : gen.gpuConfig(spec, qsliceOuter) +
                    (sm90 || sm100 ? ",kernel=sm80" : "");

    auto caseStart = std::chrono::steady_clock::now();
    CaseResult r = assemble ? assembleCase(engine, spec, options, tally)
                            : runCase(engine, spec, options, seed * 1000 + i);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - caseStart)
                    .count();
    if (!r.passed)
      ++failures;
    if (assemble) {
      // The kernels' kinds, or why the case failed.
      if (!r.passed || verbose)
        llvm::outs() << llvm::formatv(
            "[{0,3}] {1} {2:f0}ms | {3} | {4}\n  {5}\n", i,
            r.passed ? "ok  " : "FAIL", ms, spec.describe(), options.describe(),
            r.message);
      continue;
    }
    worst = std::max(worst, r.passed ? r.error / r.tolerance : 0.0);
    if (!r.passed || verbose)
      llvm::outs() << llvm::formatv(
          "[{0,3}] {1} rel_l2={2:e2} tol={3:e1} "
          "{4:f0}ms | {5} | {6}{7}\n",
          i, r.passed ? "ok  " : "FAIL", r.error, r.tolerance, ms,
          spec.describe(), options.describe(),
          r.message.empty() ? "" : "\n  " + r.message);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (assemble) {
    CompileOptions chipOf;
    chipOf.target = *parsedTarget;
    // Which kernels the cases reached, so that a test can require each.
    llvm::outs() << llvm::formatv(
        "conv3d-sweep: {0} cases assembled for {1}, {2} failed ({3:f1} s)\n"
        "  cases by convolution kernel: {4}\n"
        "  NVFP4 fake-mode cases by convolution kernel: {5}\n"
        "  kernels assembled: {6}\n",
        int(count), gpuChipFor(chipOf), failures, seconds,
        AssembleTally::describe(tally.cases),
        AssembleTally::describe(tally.fakeNVFP4Cases),
        AssembleTally::describe(tally.kernels));
    return failures ? 1 : 0;
  }
  llvm::outs() << llvm::formatv(
      "conv3d-sweep: {0} cases, {1} failed, worst error/tolerance {2:f3} "
      "({3:f1} s)\n",
      int(count), failures, worst, seconds);
  return failures ? 1 : 0;
}
