//===- ConvSpec.h - what a caller asks the engine to compile ----*- C++ -*-===//
//
// A convolution as the C++ API, conv3d-run and the benchmark drivers describe
// it: geometry (the one ConvGeometry type), data types, layout, epilogue and
// quantization; plus the compile options that choose how it is lowered.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_CONVSPEC_H
#define CONV3D_RUNTIME_CONVSPEC_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Support/ElementType.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::conv3d {

struct ConvSpec {
  /// What the spec computes. The geometry is always the forward
  /// convolution's; dgrad reads the output gradient (outputShape()) and the
  /// filter and writes the input's gradient (inputShape()), wgrad reads the
  /// input and the output gradient and writes the filter's gradient
  /// (filterShape()). `outputType` is the type of what is written; the
  /// gradients take no epilogue, quantization, history or prologue, except
  /// dgrad's `activation` with `hasResidual`: the result is multiplied by
  /// the forward activation's derivative at the pre-activation, which is
  /// the residual operand (the input's shape, `residualType()`).
  ConvKind kind = ConvKind::fprop;
  ConvGeometry geometry;
  FilterLayout filterLayout = FilterLayout::qrscf;
  ElementType inputType = ElementType::bf16; ///< input and filter
  ElementType outputType = ElementType::bf16;
  /// Epilogue: a per-filter f32 bias, an activation, a residual of the
  /// output's type and shape.
  bool hasBias = false;
  Activation activation = Activation::none;
  bool hasResidual = false;
  /// The output buffer's contents are accumulated onto (result = out + conv)
  /// instead of being overwritten.
  bool accumulate = false;
  /// NVFP4 fake quantization of the input operand (blocks along K of each
  /// output position; spec/nvfp4.md). The amax is given at run time.
  std::optional<int64_t> inputQuantBlockSize;
  /// Real NVFP4 filter (`filter_quant`, nvfp4-mode=real): the filter
  /// operand is the FQRSC filter packed by Engine::quantizeFilter, i8 codes
  /// (packedFilterShape) with their E4M3 scales (filterScalesShape) and the
  /// filter amax, given at run time.
  bool packedFilter = false;
  /// Cached frames preceding the input along depth: `geometry.historyDepth`
  /// (Dh, counted in geometry.inputSize[0], which is the depth of
  /// concat(history, input)); 0 means no history operand.
  /// Input prologue (applied to input voxels, not to the history): an RMS
  /// norm over the channels with an f32 scale per channel (`hasNorm`), an
  /// f32 shift per channel (`hasNormBeta`) and `normEps`, then
  /// `inputActivation`.
  bool hasNorm = false;
  bool hasNormBeta = false;
  float normEps = 1e-6f;
  Activation inputActivation = Activation::none;

  /// Whether the input is transformed as it is loaded.
  bool hasPrologue() const {
    return hasNorm || inputActivation != Activation::none;
  }

  /// The relative L2 error a correct result may have against the float64
  /// reference: defaultTolerance(outputType), and with a prologue on a
  /// 16-bit input at least a tenth of that input type's tolerance. The
  /// transformed input is rounded to the input type, and the kernel's f32
  /// transform (approximate rsqrt and exp on GPUs) flips some of those
  /// roundings against the float64 reference's: measured 2.2e-5 with an f32
  /// output on the H100 (one case of 100), over the f32 tolerance 2e-5; a
  /// tenth allows about 1% of the inputs one ulp off, and a wrong tap or
  /// channel still errs by 1e-2 and up.
  double checkTolerance() const;

  /// The first problem with the spec, as an error naming it.
  llvm::Error validate() const;
  /// A canonical one-line description, used in logs and cache keys.
  std::string describe() const;

  /// The input operand's shape (without the history frames).
  std::vector<int64_t> inputShape() const;
  /// The history operand's shape (N x Dh x H x W x C).
  std::vector<int64_t> historyShape() const;
  std::vector<int64_t> filterShape() const;
  /// With packedFilter: F x Q x R x S x C/2 codes and F x Q x R x S x C/16
  /// scale bytes.
  std::vector<int64_t> packedFilterShape() const;
  std::vector<int64_t> filterScalesShape() const;
  std::vector<int64_t> outputShape() const;
  /// The shape of what the spec writes: the output (fprop), the input's
  /// gradient (dgrad) or the filter's (wgrad).
  std::vector<int64_t> resultShape() const;
  /// The residual operand's element type: the output's, or for dgrad (the
  /// pre-activation, a forward activation like the output gradient) the
  /// input's.
  ElementType residualType() const {
    return kind == ConvKind::dgrad ? inputType : outputType;
  }
};

/// The parameters of the function the engine compiles for a spec.
enum class ConvParameter {
  Input,
  Filter,       ///< with packedFilter: the i8 codes
  FilterScales, ///< with packedFilter: the i8 E4M3 scales
  FilterAmax,   ///< with packedFilter: f32
  Bias,
  Residual,
  Amax,
  Output,
  History,    ///< N x Dh x H x W x C, the input's element type
  NormGamma,  ///< C f32 values
  NormBeta,   ///< C f32 values
  GradOutput, ///< dgrad, wgrad: the output's gradient (NDHWF, input type)
};

/// The parameters of `spec`'s function, in order: the one place the
/// calling convention is written down (buildConvModule, the JIT signature
/// and CompiledConv::run follow it).
llvm::SmallVector<ConvParameter, 9> convParameters(const ConvSpec &spec);

/// What a buffer parameter of a spec's function holds: a row-major,
/// contiguous tensor of `shape` whose elements take `elementBytes` bytes.
struct ConvBufferExtent {
  std::vector<int64_t> shape;
  size_t elementBytes = 0;
};

/// The buffer `parameter` passes for `spec`; none for the scalars (amax,
/// filter amax). With convParameters, the calling convention.
std::optional<ConvBufferExtent> convBufferExtent(const ConvSpec &spec,
                                                 ConvParameter parameter);

/// The parameter's name in messages: "input", "filter", "filter scales",
/// "bias", "residual", "output", "history", "norm gamma", "norm beta"...
llvm::StringRef convParameterName(ConvParameter parameter);

/// An error naming `parameter` and both extents when a buffer of `shape`
/// with elements of `elementBytes` bytes is not the one `spec` passes for
/// it (convBufferExtent).
llvm::Error checkConvBuffer(const ConvSpec &spec, ConvParameter parameter,
                            llvm::ArrayRef<int64_t> shape, size_t elementBytes);

/// How a spec is compiled: the pipeline options (target, lowering, tile
/// configuration, Q-slice strategy, quantization placement).
using CompileOptions = PipelineOptions;

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_CONVSPEC_H
