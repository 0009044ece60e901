//===- ReferenceConv.h - naive reference 3-D convolution --------*- C++ -*-===//
//
// The convolution the compiler's output is checked against: direct nested
// loops in double over an NDHWC input and a QRSCF or FQRSC filter, with the
// fused epilogue (init, bias, activation, residual) and the optional NVFP4
// fake quantization of the input operand. It deliberately shares nothing
// with the compiler's implicit-GEMM formulation; ConvGeometry is used only
// for the output sizes.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_REFERENCE_REFERENCECONV_H
#define CONV3D_REFERENCE_REFERENCECONV_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::conv3d {

struct ReferenceConvProblem {
  ConvGeometry geometry;
  FilterLayout filterLayout = FilterLayout::qrscf;
  const HostTensor *input = nullptr;    // NDHWC
  const HostTensor *filter = nullptr;   // QRSCF or FQRSC, C/groups channels
  const HostTensor *bias = nullptr;     // [F], optional
  const HostTensor *residual = nullptr; // output shape, optional
  /// Output shape; the accumulator starts from it. Null means overwrite
  /// (the accumulator starts at 0).
  const HostTensor *init = nullptr;
  Activation activation = Activation::none;
  /// When set, the input operand is NVFP4 fake-quantized (spec/nvfp4.md)
  /// along the GEMM K order in blocks of this size, with this amax.
  std::optional<int64_t> inputQuantBlockSize;
  float inputQuantAmax = 0.f;
  /// Whether the fake-quantized input values are rounded to the input's
  /// element type, as fake quantization consumes them. Real NVFP4 (the
  /// block-scaled kernel, a packed filter) multiplies the decoded values
  /// themselves: false, and the filter given as their f32 values.
  bool roundQuantizedInput = true;
  /// Frames preceding the input along depth (N x Dh x H x W x C), optional:
  /// the convolution reads concat(history, input). `geometry` describes the
  /// concatenation (its inputSize[0] and historyDepth count the history).
  const HostTensor *history = nullptr;
  /// The input prologue, applied to every input voxel (not to history
  /// frames, not to the halo): with `normGamma` ([C]), x * rsqrt(mean_c(x^2)
  /// + normEps) * gamma[c] (+ normBeta[c]), then `inputActivation`; the
  /// result is rounded to the input's element type, as the convolution
  /// consumes it.
  const HostTensor *normGamma = nullptr;
  const HostTensor *normBeta = nullptr;
  double normEps = 0.0;
  Activation inputActivation = Activation::none;
};

/// `activation` of `x` in double (the reference's, and the host's wherever
/// it applies one, as the causal stream does to its cached frames).
double referenceActivation(Activation activation, double x);

/// The derivative of the forward activation `forward` (relu, silu,
/// gelu_tanh) at `z`, in double: the factor of a derivative epilogue
/// (`*_backward`), whose result is `(acc + bias) * act'(residual)`.
double referenceActivationDerivative(Activation forward, double z);

/// y = act(acc + bias) + residual with acc = init + conv(input, filter), in
/// double, as an NDHWF row-major vector before any rounding to the output
/// type. Inconsistent shapes in `problem` are a fatal error.
std::vector<double> referenceConv(const ReferenceConvProblem &problem);

/// The rows `rows` of referenceConv's result (row m holds the F outputs of
/// output voxel m, as in referenceIm2colRow), computed without the rest:
/// the check of outputs too large for the whole reference samples rows.
std::vector<double> referenceConvRows(const ReferenceConvProblem &problem,
                                      llvm::ArrayRef<int64_t> rows);

/// Row `m` of the implicit im2col matrix, m = ((n*Do + do)*Ho + ho)*Wo + wo:
/// K = Q*R*S*C input values in the order k = ((q*R + r)*S + s)*C + c, with
/// 0 for positions in the padding halo (values of the history where the
/// depth index lies in it; the prologue applied to input voxels).
std::vector<float> referenceIm2colRow(const ReferenceConvProblem &problem,
                                      int64_t m);

/// The same row as the convolution consumes it: when
/// problem.inputQuantBlockSize is set, NVFP4 fake-quantized in blocks along
/// k (the last block zero-filled past K) and each value rounded to the
/// input's element type (problem.roundQuantizedInput); otherwise
/// referenceIm2colRow.
std::vector<float>
referenceQuantizedIm2colRow(const ReferenceConvProblem &problem, int64_t m);

/// ||output - reference|| / ||reference|| over all elements (the absolute
/// norm ||output - reference|| when the reference is all zeros). Returns
/// +inf if any output is NaN or infinite where the reference is finite, or
/// differs in kind (NaN vs. +-inf vs. finite) where the reference is not;
/// `nonFinite`, when given, receives the number of such elements.
double relativeL2Error(const std::vector<double> &reference,
                       const HostTensor &output, int64_t *nonFinite = nullptr);

/// The relative L2 error accepted for a convolution whose output has type
/// `outputType`.
double defaultTolerance(ElementType outputType);

} // namespace mlir::conv3d

#endif // CONV3D_REFERENCE_REFERENCECONV_H
