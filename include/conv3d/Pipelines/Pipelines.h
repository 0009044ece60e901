//===- Pipelines.h - conv3d pass pipelines ----------------------*- C++ -*-===//
//
// The pipelines are assembled here, in one place, for conv3d-opt, the JIT
// engine and host compilers alike:
//
//   graph passes (tensors)  ->  bufferization  ->  implicit GEMM (memrefs)
//     ->  target lowering  ->  LLVM (host) / NVVM (device)
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_PIPELINES_PIPELINES_H
#define CONV3D_PIPELINES_PIPELINES_H

#include "conv3d/IR/Conv3dEnums.h"
#include "conv3d/Target/SelectionPolicy.h"
#include "conv3d/Transforms/AttrNames.h"
#include "conv3d/Transforms/PassEnums.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
class Operation;
} // namespace mlir

namespace mlir::conv3d {

class ConvOp;
class IGemmConfigAttr;

// Code generation targets are the dialect's `Target` enum
// (conv3d/IR/Conv3dEnums.h: stringifyTarget, symbolizeTarget); the passes'
// choices are the enums of conv3d/Transforms/PassEnums.h (QSliceStrategy,
// QuantPlacement, ProloguePlacement, NVFP4Mode, WgradFoldPolicy:
// stringifyX, symbolizeX).
// Each enum has one string table, which the options' parser, describe() and
// fingerprint() use.

/// How the CPU target computes a convolution.
enum class CpuLowering {
  /// conv3d-to-linalg: direct loops, the numerical reference.
  Reference,
  /// The implicit-GEMM tile path every GPU target shares, run as loops.
  ImplicitGemm,
};
/// "reference" / "igemm".
StringRef stringifyCpuLowering(CpuLowering lowering);
std::optional<CpuLowering> symbolizeCpuLowering(StringRef text);

/// What the GPU pipeline embeds in the module.
enum class GpuBinaryFormat {
  /// A cubin (ptxas): runnable.
  Bin,
  /// PTX: for inspection.
  Isa,
};
/// "bin" / "isa".
StringRef stringifyGpuBinaryFormat(GpuBinaryFormat format);
std::optional<GpuBinaryFormat> symbolizeGpuBinaryFormat(StringRef text);

/// Everything that steers the pipelines. The runtime's CompileOptions and
/// the options of the registered pipelines (`conv3d-opt
/// --conv3d-cpu-pipeline='...'`) both are this struct.
struct PipelineOptions {
  Target target = Target::cpu;
  CpuLowering lowering = CpuLowering::ImplicitGemm;
  /// Tile configuration as comma-separated key=value pairs (tile_m, tile_n,
  /// tile_k, stages, warps_m, warps_n, k_order, split_k); empty: heuristic.
  std::string config;
  /// How a configuration is chosen where none is given: `model` (sm90: the
  /// candidate the cost model predicts fastest among the heuristic's and
  /// the tuner's) or `heuristic` (the families' rules).
  SelectionPolicy selection = SelectionPolicy::CostModel;
  /// Q-slice decomposition: auto, none, fused or separate.
  QSliceStrategy qslice = QSliceStrategy::Auto;
  /// NVFP4 input quantization placement: auto (cost model), tile, prepass.
  QuantPlacement quantPlacement = QuantPlacement::Auto;
  /// Where an input prologue runs: prepass or fused (conv3d-place-prologue).
  ProloguePlacement prologuePlacement = ProloguePlacement::Prepass;
  /// How a weight gradient's output positions become its forward form's
  /// channels (conv3d-lower-conv-gradients): auto (priced for the target),
  /// width or height-width.
  WgradFoldPolicy wgradFold = WgradFoldPolicy::Auto;
  /// How NVFP4 operands are multiplied: `fake` (quantized, dequantized to
  /// the compute type, bf16/f16 MMA: every target) or `real` (E2M1 codes
  /// and E4M3 scales packed by conv3d.pack_nvfp4 and multiplied by the
  /// block-scaled tcgen05.mma kind::mxf4nvf4 of sm100; other targets refuse
  /// it). conv3d-apply-nvfp4-mode refuses each convolution with an NVFP4
  /// operand that the block-scaled kernel cannot take, naming why, and
  /// conv3d-lower-block-scaled-to-sm100 compiles the others (README, "NVFP4
  /// on sm100": generated and assembled, never run).
  NVFP4Mode nvfp4Mode = NVFP4Mode::Fake;
  /// Turn memref results of functions into out-parameters (to run arbitrary
  /// functions from the JIT).
  bool resultsToOutParams = false;
  /// GPU targets: the chip code is generated for (sm_80, sm_90, ...); empty:
  /// the target's own. sm80 code runs on any sm_80+ chip, so the engine
  /// passes the device's chip here.
  std::string gpuChip;
  /// The CUDA toolkit providing ptxas and libdevice; empty: $CUDA_HOME, else
  /// the one the project was configured with.
  std::string cudaHome;
  /// GPU binary format: bin (cubin, runnable) or isa (PTX, for inspection).
  GpuBinaryFormat gpuBinaryFormat = GpuBinaryFormat::Bin;
  /// Extra ptxas command-line options for `bin` (space-separated, after the
  /// pipeline's own, so e.g. -O0 replaces the default -O3): isolates a
  /// code-generation problem below PTX without rebuilding the project.
  std::string ptxasOptions;
  /// Engine only: time the heuristic's configuration and the nearby ones of
  /// `tuningCandidates` on the device (the host for cpu) and compile the
  /// fastest; the choice is remembered per convolution in the engine and
  /// its disk cache, as cuDNN's benchmark mode does. Exclusive with
  /// `config`; the registered pass pipelines refuse it.
  bool tune = false;

  /// The options most logs need: target, lowering, config, qslice, quant.
  std::string describe() const;
  /// Every field, for cache keys: options that differ in any field give
  /// different text.
  std::string fingerprint() const;
};

/// The one parser of pipeline options: space-separated key=value pairs with
/// the registered pipelines' spelling (`target=sm90 quant-placement=prepass
/// config="tile_m=128,..."`), as `conv3d-opt --conv3d-gpu-pipeline='...'`
/// takes them. Every unknown key or value is an error naming it. The C API
/// (and so Python) and conv3d-opt parse options here.
llvm::Expected<PipelineOptions> parsePipelineOptions(llvm::StringRef text);

/// The checks across options (nvfp4-mode=real needs sm100, tune excludes
/// config, ...) and of the free-form ones (gpu-chip, ptxas-options): an
/// error naming the value, or success.
llvm::Error verifyPipelineOptions(const PipelineOptions &options);

/// The decisions a host compiler makes per convolution, as IREE's
/// ConvolutionToIGEMM takes them: which convolutions conv3d takes over and
/// which tile configuration each gets. Unset hooks keep conv3d's defaults.
/// Hooks are not options: they do not reach the engine's cache keys or a
/// printed pipeline.
struct ConvolutionHooks {
  /// Called on each `linalg.conv_3d_ndhwc_dhwcf` / `linalg.conv_3d_ncdhw_fcdhw`
  /// conv3d-from-linalg meets; false leaves the op untouched for the host's
  /// own lowering. Default: import every one (and, in the pipelines, refuse
  /// one that cannot be imported).
  std::function<bool(Operation *)> shouldConvert;
  /// The tile configuration of a convolution that carries none; a null
  /// attribute keeps the target's heuristic (and its sm80 fallback).
  /// Called by conv3d-select-config on the tensor form and by
  /// conv3d-implicit-gemm on memref convolutions still without one (the
  /// ImplicitGemmOptions::selectConfig hook). A returned configuration is
  /// checked as a forced `config=` is: one that does not fit the
  /// convolution, or names a kernel that cannot take it, is an error on
  /// the convolution. A configuration without a kernel (`kernel = cpu`)
  /// is for the target's own kernel.
  std::function<IGemmConfigAttr(ConvOp)> selectConfig;
};

/// conv3d-from-linalg restricted to the convolutions `hooks.shouldConvert`
/// accepts. Hosts add it before the pipelines below.
void buildConv3dImportPipeline(OpPassManager &pm,
                               const ConvolutionHooks &hooks = {});

/// The tensor-level graph passes: the import of linalg convolutions
/// (conv3d-from-linalg with `hooks.shouldConvert`; one it cannot import and
/// the hook does not keep is an error naming why, never left to upstream's
/// generic lowering), quant fusion, epilogue fusion, Q-slice decomposition
/// and config selection (`hooks.selectConfig` first). Every pipeline below
/// starts with it.
void buildConv3dGraphPipeline(OpPassManager &pm, const PipelineOptions &options,
                              const ConvolutionHooks &hooks = {});

/// One-shot bufferization (function boundaries with identity layouts) and
/// buffer deallocation.
void buildConv3dBufferizationPipeline(OpPassManager &pm,
                                      const PipelineOptions &options);

/// Lowering of loops, memrefs and scalar ops to the LLVM dialect for the
/// host JIT, after conv3d-check-allocations.
void buildConv3dHostToLLVMPipeline(OpPassManager &pm);

/// The CPU pipeline up to (not including) the LLVM conversion: conv3d ops
/// on tensors to loops on memrefs.
void buildConv3dCpuLoweringPipeline(OpPassManager &pm,
                                    const PipelineOptions &options,
                                    const ConvolutionHooks &hooks = {});

/// The whole CPU pipeline: conv3d ops on tensors to the LLVM dialect.
void buildConv3dCpuPipeline(OpPassManager &pm, const PipelineOptions &options,
                            const ConvolutionHooks &hooks = {});

/// The GPU pipeline up to (not including) the NVVM/LLVM conversion: conv3d
/// ops on tensors to gpu.launch kernels on memrefs.
void buildConv3dGpuLoweringPipeline(OpPassManager &pm,
                                    const PipelineOptions &options,
                                    const ConvolutionHooks &hooks = {});

/// The whole GPU pipeline: device code to a binary embedded in the module
/// (ptxas from `cudaHome`), host code to the LLVM dialect.
void buildConv3dGpuPipeline(OpPassManager &pm, const PipelineOptions &options,
                            const ConvolutionHooks &hooks = {});

/// The chip and PTX features code for `options` is generated with.
std::string gpuChipFor(const PipelineOptions &options);
std::string gpuPtxFeaturesFor(llvm::StringRef chip);

/// The CUDA toolkit directory for `options` (see PipelineOptions::cudaHome).
std::string cudaHomeFor(const PipelineOptions &options);
/// The toolkit files the GPU pipeline runs: ptxas (cubins) and libdevice
/// (the device code's math functions), under cudaHomeFor(options).
std::string ptxasPathFor(const PipelineOptions &options);
std::string libdevicePathFor(const PipelineOptions &options);
/// An error naming the toolkit directory when libdevice (and, if
/// `needsPtxas`, ptxas) is missing there: upstream's binary serialization
/// only reports it and goes on, leaving undefined calls in the binary.
llvm::Error verifyCudaToolkit(const PipelineOptions &options, bool needsPtxas);

/// Registers `conv3d-cpu-pipeline`, `conv3d-gpu-pipeline` and
/// `conv3d-graph-pipeline`.
void registerConv3dPipelines();

} // namespace mlir::conv3d

#endif // CONV3D_PIPELINES_PIPELINES_H
