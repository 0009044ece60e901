//===- Pipelines.cpp - conv3d pass pipelines ------------------------------===//

#include "conv3d/Pipelines/Pipelines.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::conv3d;

StringRef mlir::conv3d::stringifyCpuLowering(CpuLowering lowering) {
  return lowering == CpuLowering::Reference ? "reference" : "igemm";
}

std::optional<CpuLowering> mlir::conv3d::symbolizeCpuLowering(StringRef text) {
  return llvm::StringSwitch<std::optional<CpuLowering>>(text)
      .Case("reference", CpuLowering::Reference)
      .Case("igemm", CpuLowering::ImplicitGemm)
      .Default(std::nullopt);
}

StringRef mlir::conv3d::stringifyGpuBinaryFormat(GpuBinaryFormat format) {
  return format == GpuBinaryFormat::Bin ? "bin" : "isa";
}

std::optional<GpuBinaryFormat>
mlir::conv3d::symbolizeGpuBinaryFormat(StringRef text) {
  return llvm::StringSwitch<std::optional<GpuBinaryFormat>>(text)
      .Case("bin", GpuBinaryFormat::Bin)
      .Case("isa", GpuBinaryFormat::Isa)
      .Default(std::nullopt);
}

std::string PipelineOptions::describe() const {
  return llvm::formatv("target={0} lowering={1} config={2} qslice={3} "
                       "quant={4} nvfp4={5} prologue={6} wgrad-fold={7}",
                       stringifyTarget(target), stringifyCpuLowering(lowering),
                       !config.empty()                           ? config
                       : tune                                    ? "tuned"
                       : selection == SelectionPolicy::Heuristic ? "heuristic"
                                                                 : "auto",
                       stringifyQSliceStrategy(qslice),
                       stringifyQuantPlacement(quantPlacement),
                       stringifyNVFP4Mode(nvfp4Mode),
                       stringifyProloguePlacement(prologuePlacement),
                       stringifyWgradFoldPolicy(wgradFold))
      .str();
}

std::string PipelineOptions::fingerprint() const {
  return llvm::formatv("{0} results-to-out-params={1} gpu-chip={2} "
                       "cuda-home={3} gpu-binary-format={4} ptxas-options={5}",
                       describe(), resultsToOutParams, gpuChip, cudaHome,
                       stringifyGpuBinaryFormat(gpuBinaryFormat), ptxasOptions)
      .str();
}

/// Appends a textual pipeline. The texts below name registered passes, and
/// option values are validated before they are spliced in, so a failure is
/// a bug in this file.
static void addPipeline(OpPassManager &pm, StringRef text) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(text, pm, os)))
    llvm::report_fatal_error(llvm::Twine("conv3d: malformed built-in "
                                         "pipeline '") +
                             text + "': " + errors);
}

void mlir::conv3d::buildConv3dImportPipeline(OpPassManager &pm,
                                             const ConvolutionHooks &hooks) {
  pm.addPass(createConv3dFromLinalg(hooks.shouldConvert));
}

/// conv3d-implicit-gemm for `options.target` with the host's config hook.
static std::unique_ptr<Pass>
createImplicitGemmPass(const PipelineOptions &options,
                       const ConvolutionHooks &hooks) {
  ImplicitGemmOptions implicitGemm;
  implicitGemm.target = options.target;
  implicitGemm.selectConfig = hooks.selectConfig;
  return createConv3dImplicitGemm(std::move(implicitGemm));
}

void mlir::conv3d::buildConv3dGraphPipeline(OpPassManager &pm,
                                            const PipelineOptions &options,
                                            const ConvolutionHooks &hooks) {
  Target target = options.target;
  // The pipelines import linalg convolutions themselves (a host's
  // shouldConvert still keeps its own), and refuse to leave one they cannot
  // import to upstream's generic lowering.
  pm.addPass(createConv3dCheckPipelineInput());
  Conv3dFromLinalgOptions importOptions;
  importOptions.refuseUnconverted = true;
  pm.addPass(createConv3dFromLinalg(importOptions, hooks.shouldConvert));
  // A convolution of a nearest-upsampled tensor becomes a data gradient of
  // the tensor before upsampling (which is then never formed)...
  pm.addPass(createConv3dFoldUpsample());
  // ...and gradients become forward convolutions, which every later pass
  // and kernel family then treats as any other.
  pm.addPass(createConv3dLowerConvGradients(
      Conv3dLowerConvGradientsOptions{target, options.wgradFold}));
  addPipeline(pm, "canonicalize");
  pm.addPass(createConv3dPlacePrologue(
      Conv3dPlacePrologueOptions{options.prologuePlacement}));
  pm.addPass(createConv3dFuseQuant(
      Conv3dFuseQuantOptions{options.quantPlacement, target}));
  // Packed filters are unpacked (fake) or the block-scaled kernel checked
  // (real) once the input quantization is fused or placed.
  pm.addPass(createConv3dApplyNVFP4Mode(
      Conv3dApplyNVFP4ModeOptions{target, options.nvfp4Mode}));
  pm.addPass(createConv3dFuseEpilogue());
  pm.addPass(createConv3dRelayoutFilter(Conv3dRelayoutFilterOptions{target}));
  // Configs are chosen before the Q-slice decomposition so that `fused`
  // can reorder the K loop of a forced configuration.
  pm.addPass(createConv3dSelectConfig(
      Conv3dSelectConfigOptions{target, options.config, options.selection,
                                options.qslice},
      hooks.selectConfig));
  pm.addPass(createConv3dQSlice(
      Conv3dQSliceOptions{options.qslice, target, options.selection}));
  addPipeline(pm, "canonicalize,cse");
}

void mlir::conv3d::buildConv3dBufferizationPipeline(
    OpPassManager &pm, const PipelineOptions &options) {
  // Results materialized into the caller's buffers are computed there
  // directly instead of in a temporary that is then copied.
  addPipeline(pm, "eliminate-empty-tensors");
  addPipeline(pm, "one-shot-bufferize{bufferize-function-boundaries=1 "
                  "function-boundary-type-conversion=identity-layout-map}");
  if (options.resultsToOutParams)
    addPipeline(pm, "buffer-results-to-out-params{hoist-static-allocs=1 "
                    "modify-public-functions=1}");
  addPipeline(pm, "canonicalize,buffer-deallocation-pipeline,"
                  "convert-bufferization-to-memref");
}

void mlir::conv3d::buildConv3dHostToLLVMPipeline(OpPassManager &pm) {
  // Host allocations are size-checked (and their total recorded for the
  // engine) while they are still memref.alloc ops.
  pm.addPass(createConv3dCheckAllocations());
  // bf16 arithmetic has no native x86 lowering: arith-expand turns its
  // casts into integer code (round to nearest even).
  addPipeline(pm, "func.func(convert-linalg-to-loops),scf-forall-to-for,"
                  "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
                  "arith-expand{include-bf16=1},convert-math-to-llvm,"
                  "convert-math-to-libm,convert-to-llvm,"
                  "reconcile-unrealized-casts");
}

void mlir::conv3d::buildConv3dCpuLoweringPipeline(
    OpPassManager &pm, const PipelineOptions &options,
    const ConvolutionHooks &hooks) {
  buildConv3dGraphPipeline(pm, options, hooks);
  bool reference = options.lowering == CpuLowering::Reference;
  // The implicit-GEMM path tiles convolutions after bufferization; the
  // tensor-level quantize and epilogue ops take the linalg route either way.
  // The reference lowers every quantize to linalg; the implicit-GEMM path
  // quantizes contiguous blocks (the NVFP4 prepass) in one loop over them.
  // Convolutions of dynamic shape take the reference lowering (with a
  // remark): the implicit GEMM tiles static shapes.
  pm.addPass(createConv3dToLinalg(Conv3dToLinalgOptions{
      /*lowerConv=*/reference, /*lowerContiguousQuantize=*/reference,
      /*lowerDynamicConv=*/true}));
  addPipeline(pm, "canonicalize");
  buildConv3dBufferizationPipeline(pm, options);
  if (!reference) {
    pm.addPass(createConv3dQuantizeToLoops());
    // Depthwise convolutions take their direct loop nest (the GPU targets'
    // depthwise kernel, run on the host); other grouped ones the implicit
    // GEMM's group grid (takesDepthwiseKernel).
    pm.addPass(createConv3dLowerDepthwise(
        Conv3dLowerDepthwiseOptions{/*wBlock=*/4, Target::cpu}));
    pm.addPass(createImplicitGemmPass(options, hooks));
    pm.addPass(createConv3dLowerToCPU());
    addPipeline(pm, "canonicalize,cse");
  }
}

void mlir::conv3d::buildConv3dCpuPipeline(OpPassManager &pm,
                                          const PipelineOptions &options,
                                          const ConvolutionHooks &hooks) {
  buildConv3dCpuLoweringPipeline(pm, options, hooks);
  buildConv3dHostToLLVMPipeline(pm);
}

std::string mlir::conv3d::gpuChipFor(const PipelineOptions &options) {
  if (!options.gpuChip.empty())
    return options.gpuChip;
  switch (options.target) {
  case Target::sm90:
    return "sm_90a";
  case Target::sm100:
    return "sm_100a";
  default:
    return "sm_80";
  }
}

std::string mlir::conv3d::gpuPtxFeaturesFor(llvm::StringRef chip) {
  // The default (+ptx60) is too old for sm_90a. sm_100a needs PTX 8.6, and
  // 8.8 for the block-scaled MMA (LLVM 22 selects
  // tcgen05.mma...block_scale.block16 only from +ptx88).
  return chip.starts_with("sm_10") || chip.starts_with("sm_12") ? "+ptx88"
                                                                : "+ptx80";
}

std::string mlir::conv3d::cudaHomeFor(const PipelineOptions &options) {
  if (!options.cudaHome.empty())
    return options.cudaHome;
  if (const char *env = std::getenv("CUDA_HOME"); env && *env)
    return env;
  return CONV3D_DEFAULT_CUDA_HOME;
}

std::string mlir::conv3d::ptxasPathFor(const PipelineOptions &options) {
  llvm::SmallString<256> path(cudaHomeFor(options));
  llvm::sys::path::append(path, "bin", "ptxas");
  return std::string(path);
}

std::string mlir::conv3d::libdevicePathFor(const PipelineOptions &options) {
  llvm::SmallString<256> path(cudaHomeFor(options));
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return std::string(path);
}

void mlir::conv3d::buildConv3dGpuLoweringPipeline(
    OpPassManager &pm, const PipelineOptions &options,
    const ConvolutionHooks &hooks) {
  buildConv3dGraphPipeline(pm, options, hooks);
  pm.addPass(createConv3dToLinalg(Conv3dToLinalgOptions{
      /*lowerConv=*/false, /*lowerContiguousQuantize=*/false,
      /*lowerDynamicConv=*/true}));
  addPipeline(pm, "canonicalize");
  buildConv3dBufferizationPipeline(pm, options);
  // Real NVFP4: the block-scaled kernel and the packing prepass of its
  // input, which conv3d-quantize-to-loops lowers with the other prepasses.
  if (options.target == Target::sm100 && options.nvfp4Mode == NVFP4Mode::Real)
    pm.addPass(createConv3dLowerBlockScaledToSM100());
  // 16-byte accesses: the convolution kernels assume the same alignment of
  // the caller's buffers.
  // A warp per voxel of a conv3d.prologue (conv3d-lower-host-ops-to-gpu
  // tiles host loops by 256 threads).
  pm.addPass(createConv3dQuantizeToLoops(Conv3dQuantizeToLoopsOptions{16, 32}));
  // Grouped convolutions no kernel family of the target takes (fewer than
  // 8 channels or filters per group, takesDepthwiseKernel): the depthwise
  // kernel (a direct loop nest that conv3d-lower-host-ops-to-gpu makes a
  // kernel). The sm80 kernel's grouped implicit GEMM takes the others.
  pm.addPass(createConv3dLowerDepthwise(
      Conv3dLowerDepthwiseOptions{/*wBlock=*/4, options.target}));
  pm.addPass(createImplicitGemmPass(options, hooks));
  // The target's kernel lowering. sm90 and sm100 also lower the grids they
  // left to the sm80 kernel.
  if (options.target == Target::sm90)
    pm.addPass(createConv3dLowerToSM90());
  else if (options.target == Target::sm100)
    pm.addPass(createConv3dLowerToSM100());
  else
    pm.addPass(createConv3dLowerToSM80());
  pm.addPass(createConv3dLowerHostOpsToGPU());
  addPipeline(pm, "func.func(gpu-map-parallel-loops),"
                  "convert-parallel-loops-to-gpu,canonicalize,cse");
}

void mlir::conv3d::buildConv3dGpuPipeline(OpPassManager &pm,
                                          const PipelineOptions &options,
                                          const ConvolutionHooks &hooks) {
  buildConv3dGpuLoweringPipeline(pm, options, hooks);
  std::string chip = gpuChipFor(options);
  // The upstream NVVM lowering, with an explicit chip and toolkit (CI runs
  // in a clean environment) and -O3 for the device code.
  addPipeline(pm,
              "convert-nvgpu-to-nvvm,gpu-launch-sink-index-computations,"
              "gpu-kernel-outlining,conv3d-set-kernel-occupancy,"
              "convert-vector-to-scf,convert-scf-to-cf,convert-nvvm-to-llvm,"
              "convert-func-to-llvm,expand-strided-metadata");
  addPipeline(pm, "nvvm-attach-target{chip=" + chip +
                      " features=" + gpuPtxFeaturesFor(chip) + " O=3}");
  addPipeline(pm, "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,"
                  "canonicalize,cse,"
                  "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
                  "reconcile-unrealized-casts),"
                  "gpu-to-llvm");
  std::string binary = "gpu-module-to-binary{format=" +
                       stringifyGpuBinaryFormat(options.gpuBinaryFormat).str() +
                       " toolkit=" + cudaHomeFor(options);
  if (!options.ptxasOptions.empty())
    binary += " opts=\"" + options.ptxasOptions + "\"";
  addPipeline(pm, binary + "}");
  buildConv3dHostToLLVMPipeline(pm);
}

namespace {
/// The command-line face of PipelineOptions for registered pipelines.
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<Target> target{
      *this, "target",
      llvm::cl::desc("Target the tile configuration is chosen for"),
      llvm::cl::init(Target::cpu),
      llvm::cl::values(clEnumValN(Target::cpu, "cpu", "CPU loops"),
                       clEnumValN(Target::sm80, "sm80", "mma.sync"),
                       clEnumValN(Target::sm90, "sm90", "wgmma + TMA"),
                       clEnumValN(Target::sm100, "sm100", "tcgen05 + TMA"))};
  Option<CpuLowering> lowering{
      *this, "lowering", llvm::cl::desc("How the CPU target computes"),
      llvm::cl::init(CpuLowering::ImplicitGemm),
      llvm::cl::values(clEnumValN(CpuLowering::Reference, "reference",
                                  "conv3d-to-linalg (direct loops)"),
                       clEnumValN(CpuLowering::ImplicitGemm, "igemm",
                                  "implicit-GEMM tiles lowered to loops"))};
  Option<std::string> config{
      *this, "config",
      llvm::cl::desc("Tile configuration: comma-separated key=value pairs "
                     "(tile_m, tile_n, tile_k, stages, warps_m, warps_n, "
                     "k_order, split_k); default: the heuristic")};
  Option<QSliceStrategy> qslice{
      *this, "qslice",
      llvm::cl::desc("Q-slice decomposition: auto, none, fused or separate"),
      llvm::cl::init(QSliceStrategy::Auto),
      llvm::cl::values(
          clEnumValN(QSliceStrategy::Auto, "auto",
                     "fused where depth padding makes slices halo-only"),
          clEnumValN(QSliceStrategy::None, "none", "no decomposition"),
          clEnumValN(QSliceStrategy::Fused, "fused",
                     "slices outermost in one kernel's K loop"),
          clEnumValN(QSliceStrategy::Separate, "separate",
                     "Q convolutions accumulating in f32"))};
  Option<QuantPlacement> quantPlacement{
      *this, "quant-placement",
      llvm::cl::desc("NVFP4 input quantization placement: auto, tile or "
                     "prepass"),
      llvm::cl::init(QuantPlacement::Auto),
      llvm::cl::values(
          clEnumValN(QuantPlacement::Auto, "auto", "the cost model's choice"),
          clEnumValN(QuantPlacement::Tile, "tile", "in the tile loads"),
          clEnumValN(QuantPlacement::Prepass, "prepass",
                     "a separate pass over the input"))};
  Option<ProloguePlacement> prologuePlacement{
      *this, "prologue-placement",
      llvm::cl::desc("Input prologue (RMS norm, activation) placement: "
                     "prepass (a separate pass over the input, once per "
                     "element; every kernel) or fused (in the loads of the "
                     "CPU and sm80 kernels, once per tap and N tile)"),
      llvm::cl::init(ProloguePlacement::Prepass),
      llvm::cl::values(clEnumValN(ProloguePlacement::Prepass, "prepass",
                                  "a conv3d.prologue over the input"),
                       clEnumValN(ProloguePlacement::Fused, "fused",
                                  "in the CPU and sm80 loads"))};
  Option<WgradFoldPolicy> wgradFold{
      *this, "wgrad-fold",
      llvm::cl::desc("How a weight gradient's output positions become its "
                     "forward convolution's channels: auto (the fold the "
                     "target's cost model prices cheaper; width on cpu), "
                     "width (Wo x N channels, a window of Do x Ho taps) or "
                     "height-width (Ho x Wo x N channels, a window of Do "
                     "taps, R x S gathered copies of the input)"),
      llvm::cl::init(WgradFoldPolicy::Auto),
      llvm::cl::values(
          clEnumValN(WgradFoldPolicy::Auto, "auto", "priced for the target"),
          clEnumValN(WgradFoldPolicy::Width, "width", "Wo x N channels"),
          clEnumValN(WgradFoldPolicy::HeightWidth, "height-width",
                     "Ho x Wo x N channels"))};
  Option<NVFP4Mode> nvfp4Mode{
      *this, "nvfp4-mode",
      llvm::cl::desc("How NVFP4 operands are multiplied: fake (quantize, "
                     "dequantize, bf16/f16 MMA; every target) or real (E2M1 "
                     "codes and E4M3 scales into the block-scaled tcgen05.mma "
                     "of sm100 only, generated and assembled, never run; an "
                     "NVFP4 convolution it cannot take is refused with its "
                     "reason)"),
      llvm::cl::init(NVFP4Mode::Fake),
      llvm::cl::values(
          clEnumValN(NVFP4Mode::Fake, "fake",
                     "quantize, dequantize, bf16/f16 MMA"),
          clEnumValN(NVFP4Mode::Real, "real", "the block-scaled sm100 MMA"))};
  Option<SelectionPolicy> selection{
      *this, "selection",
      llvm::cl::desc("How a configuration is chosen where none is given: "
                     "model (sm90: the candidate the cost model predicts "
                     "fastest among the heuristic's and the tuner's; other "
                     "targets: the heuristic) or heuristic"),
      llvm::cl::init(SelectionPolicy::CostModel),
      llvm::cl::values(
          clEnumValN(SelectionPolicy::CostModel, "model", "the cost model"),
          clEnumValN(SelectionPolicy::Heuristic, "heuristic",
                     "the kernel families' rules"))};
  Option<bool> resultsToOutParams{
      *this, "results-to-out-params",
      llvm::cl::desc("Turn memref results into out-parameters"),
      llvm::cl::init(false)};
  Option<std::string> gpuChip{
      *this, "gpu-chip",
      llvm::cl::desc("GPU targets: chip to generate code for (default: the "
                     "target's, e.g. sm_80)")};
  Option<std::string> cudaHome{
      *this, "cuda-home",
      llvm::cl::desc("CUDA toolkit for ptxas and libdevice (default: "
                     "$CUDA_HOME, else the configured one)")};
  Option<GpuBinaryFormat> gpuBinaryFormat{
      *this, "gpu-binary-format",
      llvm::cl::desc("GPU binary: bin (cubin) or isa (PTX)"),
      llvm::cl::init(GpuBinaryFormat::Bin),
      llvm::cl::values(clEnumValN(GpuBinaryFormat::Bin, "bin", "cubin"),
                       clEnumValN(GpuBinaryFormat::Isa, "isa", "PTX"))};
  Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Extra ptxas options for gpu-binary-format=bin, after "
                     "the pipeline's own (e.g. -O0)")};
  Option<bool> tune{
      *this, "tune",
      llvm::cl::desc("Engine only (C API, Python): time the heuristic's and "
                     "nearby tile configurations on the device and compile "
                     "the fastest, remembered in the disk cache; exclusive "
                     "with config. The pass pipelines refuse it"),
      llvm::cl::init(false)};

  PipelineOptions get() const {
    PipelineOptions options;
    options.target = target;
    options.lowering = lowering;
    options.config = config;
    options.qslice = qslice;
    options.quantPlacement = quantPlacement;
    options.nvfp4Mode = nvfp4Mode;
    options.selection = selection;
    options.prologuePlacement = prologuePlacement;
    options.wgradFold = wgradFold;
    options.resultsToOutParams = resultsToOutParams;
    options.gpuChip = gpuChip;
    options.cudaHome = cudaHome;
    options.gpuBinaryFormat = gpuBinaryFormat;
    options.ptxasOptions = ptxasOptions;
    options.tune = tune;
    return options;
  }
};
} // namespace

llvm::Error
mlir::conv3d::verifyPipelineOptions(const PipelineOptions &options) {
  // On sm100, conv3d-apply-nvfp4-mode says per convolution why the
  // block-scaled kernel does not take it, if it does not.
  if (options.nvfp4Mode == NVFP4Mode::Real && options.target != Target::sm100)
    return llvm::createStringError(
        "nvfp4-mode=real needs target=sm100 (the block-scaled "
        "tcgen05.mma); other targets multiply NVFP4 operands as "
        "nvfp4-mode=fake");
  if (options.tune && !options.config.empty())
    return llvm::createStringError(
        "tune=true times candidate tile configurations; it cannot be "
        "combined with a forced config");
  if (options.tune && options.lowering == CpuLowering::Reference)
    return llvm::createStringError(
        "tune=true chooses implicit-GEMM tile configurations; "
        "lowering=reference has none");
  if (!options.gpuChip.empty() &&
      !StringRef(options.gpuChip).starts_with("sm_"))
    return llvm::createStringError("gpu-chip=" + options.gpuChip +
                                   ": expected a chip such as sm_80 or sm_90a");
  // Spliced into a textual pipeline as a quoted option value.
  if (options.ptxasOptions.find_first_of("\"{}") != std::string::npos)
    return llvm::createStringError("ptxas-options=" + options.ptxasOptions +
                                   ": quotes and braces are not allowed");
  return llvm::Error::success();
}

/// The spellings of an enum with a string table: every value from 0 to
/// `max` that `symbolize` knows, through `stringify`.
template <typename E>
static SmallVector<std::string>
enumSpellings(unsigned max, std::optional<E> (*symbolize)(uint32_t),
              StringRef (*stringify)(E)) {
  SmallVector<std::string> spellings;
  for (unsigned i = 0; i <= max; ++i)
    if (std::optional<E> value = symbolize(i))
      spellings.push_back(stringify(*value).str());
  return spellings;
}

/// Why `text` failed to parse, naming the option: llvm::cl reports a bad
/// enum value on stderr only, so the value of each enum option is looked
/// up here once parsing has failed. Values may be quoted or braced, as the
/// pass-option parser takes them.
static std::string diagnoseMalformedOptions(StringRef text) {
  auto enumProblem = [](StringRef key,
                        StringRef value) -> std::optional<std::string> {
    SmallVector<std::string> allowed;
    if (key == "target") {
      allowed = enumSpellings<Target>(getMaxEnumValForTarget(), symbolizeTarget,
                                      stringifyTarget);
    } else if (key == "qslice") {
      allowed = enumSpellings<QSliceStrategy>(getMaxEnumValForQSliceStrategy(),
                                              symbolizeQSliceStrategy,
                                              stringifyQSliceStrategy);
    } else if (key == "quant-placement") {
      allowed = enumSpellings<QuantPlacement>(getMaxEnumValForQuantPlacement(),
                                              symbolizeQuantPlacement,
                                              stringifyQuantPlacement);
    } else if (key == "prologue-placement") {
      allowed = enumSpellings<ProloguePlacement>(
          getMaxEnumValForProloguePlacement(), symbolizeProloguePlacement,
          stringifyProloguePlacement);
    } else if (key == "wgrad-fold") {
      allowed = enumSpellings<WgradFoldPolicy>(
          getMaxEnumValForWgradFoldPolicy(), symbolizeWgradFoldPolicy,
          stringifyWgradFoldPolicy);
    } else if (key == "nvfp4-mode") {
      allowed = enumSpellings<NVFP4Mode>(
          getMaxEnumValForNVFP4Mode(), symbolizeNVFP4Mode, stringifyNVFP4Mode);
    } else if (key == "selection") {
      for (SelectionPolicy policy :
           {SelectionPolicy::CostModel, SelectionPolicy::Heuristic})
        allowed.push_back(stringifySelectionPolicy(policy).str());
    } else if (key == "lowering") {
      for (CpuLowering lowering :
           {CpuLowering::Reference, CpuLowering::ImplicitGemm})
        allowed.push_back(stringifyCpuLowering(lowering).str());
    } else if (key == "gpu-binary-format") {
      for (GpuBinaryFormat format :
           {GpuBinaryFormat::Bin, GpuBinaryFormat::Isa})
        allowed.push_back(stringifyGpuBinaryFormat(format).str());
    } else if (key == "results-to-out-params" || key == "tune") {
      allowed = {"true", "false", "1", "0"};
    } else {
      return std::nullopt;
    }
    if (llvm::is_contained(allowed, value))
      return std::nullopt;
    return llvm::formatv("{0}={1}: expected one of {2}", key, value,
                         llvm::join(allowed, ", "))
        .str();
  };
  StringRef rest = text.trim();
  while (!rest.empty()) {
    size_t end = 0;
    char close = 0;
    while (end < rest.size() && (close || !llvm::isSpace(rest[end]))) {
      if (close && rest[end] == close)
        close = 0;
      else if (!close && (rest[end] == '"' || rest[end] == '{'))
        close = rest[end] == '"' ? '"' : '}';
      ++end;
    }
    auto [key, value] = rest.take_front(end).split('=');
    if (value.size() >= 2 && ((value.front() == '"' && value.back() == '"') ||
                              (value.front() == '{' && value.back() == '}')))
      value = value.drop_front().drop_back();
    if (std::optional<std::string> problem = enumProblem(key, value))
      return *problem;
    rest = rest.drop_front(end).ltrim();
  }
  return "malformed options '" + text.str() + "'";
}

llvm::Expected<PipelineOptions>
mlir::conv3d::parsePipelineOptions(llvm::StringRef text) {
  PipelineCLOptions parsed;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsed.parseFromString(text, os)))
    return llvm::createStringError(llvm::StringRef(errors).trim().empty()
                                       ? diagnoseMalformedOptions(text)
                                       : llvm::StringRef(errors).trim().str());
  PipelineOptions options = parsed.get();
  if (llvm::Error e = verifyPipelineOptions(options))
    return std::move(e);
  return options;
}

llvm::Error mlir::conv3d::verifyCudaToolkit(const PipelineOptions &options,
                                            bool needsPtxas) {
  for (auto [path, needed] : {std::pair{libdevicePathFor(options), true},
                              std::pair{ptxasPathFor(options), needsPtxas}})
    if (needed && !llvm::sys::fs::exists(path))
      return llvm::createStringError(
          "CUDA toolkit not found at '" + cudaHomeFor(options) + "' (no " +
          path +
          "): set CUDA_HOME or the toolkit option (cuda-home=, conv3d-run "
          "--cuda-home, cuda_home in the C API)");
  return llvm::Error::success();
}

/// What conv3d-gpu-pipeline needs beyond valid options: a GPU target, and
/// the toolkit (upstream's gpu-module-to-binary reports a missing one as an
/// error but succeeds, so the tool would exit 0).
static llvm::Error verifyGpuPipelineOptions(const PipelineOptions &options) {
  if (options.target == Target::cpu)
    return llvm::createStringError(
        "target=cpu is not a GPU target: conv3d-gpu-pipeline compiles for "
        "target=sm80, sm90 or sm100 (conv3d-cpu-pipeline compiles for the "
        "CPU)");
  return verifyCudaToolkit(options,
                           /*needsPtxas=*/options.gpuBinaryFormat ==
                               GpuBinaryFormat::Bin);
}

/// Registers `name` with options parsed by parsePipelineOptions, so that
/// conv3d-opt reports every bad option with its message; `verify` adds the
/// pipeline's own checks.
static void
registerPipeline(StringRef name, StringRef description,
                 void (*build)(OpPassManager &, const PipelineOptions &,
                               const ConvolutionHooks &),
                 llvm::Error (*verify)(const PipelineOptions &) = nullptr) {
  registerPassPipeline(
      name, description,
      [build, verify](OpPassManager &pm, StringRef text,
                      function_ref<LogicalResult(const Twine &)> errorHandler) {
        llvm::Expected<PipelineOptions> options = parsePipelineOptions(text);
        if (!options)
          return errorHandler(llvm::toString(options.takeError()));
        if (verify)
          if (llvm::Error error = verify(*options))
            return errorHandler(llvm::toString(std::move(error)));
        // Tuning runs candidate kernels; a pass pipeline only compiles.
        if (options->tune)
          return errorHandler("tune=true is an option of the engine "
                              "(conv3d-run --tune, the C API, Python); a "
                              "pass pipeline takes a tile configuration "
                              "through config=");
        build(pm, *options, ConvolutionHooks{});
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(PipelineCLOptions());
      });
}

void mlir::conv3d::registerConv3dPipelines() {
  registerPipeline(
      "conv3d-cpu-pipeline",
      "Lower conv3d ops on tensors to the LLVM dialect for the CPU",
      buildConv3dCpuPipeline);
  registerPipeline("conv3d-gpu-pipeline",
                   "Lower conv3d ops on tensors to GPU kernels (binary "
                   "embedded) and host code in the LLVM dialect",
                   buildConv3dGpuPipeline, verifyGpuPipelineOptions);
  registerPipeline("conv3d-graph-pipeline",
                   "The tensor-level conv3d passes (fusion, Q-slices, config)",
                   buildConv3dGraphPipeline);
}
