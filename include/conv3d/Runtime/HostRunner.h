//===- HostRunner.h - run a compiled convolution on host tensors -*- C++
//-*-===//
//
// For tools and tests that hold their data in host memory: runs a compiled
// convolution on HostTensors, copying to and from device memory for GPU
// targets, and optionally times repeated runs (host clock on the CPU, CUDA
// events on one stream on GPUs).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_HOSTRUNNER_H
#define CONV3D_RUNTIME_HOSTRUNNER_H

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"

namespace mlir::conv3d {

struct HostConvBuffers {
  const HostTensor *input = nullptr;
  /// The filter's values: what the convolution reads, or with
  /// spec.packedFilter what the reference reads (the values the packed
  /// filter decodes to; the convolution reads `packedFilter`).
  const HostTensor *filter = nullptr;
  /// With spec.packedFilter: the codes and scales of Engine::quantizeFilter
  /// (uploaded for GPU targets) and the amax they were packed with.
  const Engine::PackedNVFP4 *packedFilter = nullptr;
  float filterAmax = 0.0f;
  const HostTensor *bias = nullptr;      ///< when the spec has a bias
  const HostTensor *residual = nullptr;  ///< when the spec has a residual
  const HostTensor *history = nullptr;   ///< when the spec has history frames
  const HostTensor *normGamma = nullptr; ///< when the spec has an RMS norm
  const HostTensor *normBeta = nullptr;  ///< when the norm has a beta
  float amax = 0.0f;
  /// dgrad and wgrad: the output's gradient (dgrad leaves `input` null,
  /// wgrad `filter`).
  const HostTensor *gradOutput = nullptr;
  /// In: the destination's initial contents (accumulated onto, or poison).
  /// Out: the result of the first run.
  HostTensor *output = nullptr;
};

struct HostRunTiming {
  /// Timed runs after the checked one (each starts from the same initial
  /// output); 0 runs only once.
  int repeat = 0;
  /// Median of the timed runs, in milliseconds.
  double medianMillis = 0;
};

/// The reference problem of `spec` on `buffers` (before the run): `init`
/// holds the output's initial contents, used when the spec accumulates.
ReferenceConvProblem referenceProblem(const ConvSpec &spec,
                                      const HostConvBuffers &buffers,
                                      const HostTensor *init);

/// Runs `conv` once on `buffers` (and `timing.repeat` more times, timed).
llvm::Error runWithHostBuffers(const CompiledConv &conv,
                               const HostConvBuffers &buffers,
                               HostRunTiming *timing = nullptr);

/// Host buffers made ready once (copied to the device for GPU targets) so
/// that several compiled convolutions of one spec run on the same data
/// without copying it again: what the tuner times its candidates on. The
/// host tensors must outlive the session.
class ConvRunSession {
public:
  static llvm::Expected<std::unique_ptr<ConvRunSession>>
  create(Target target, const HostConvBuffers &buffers);
  ~ConvRunSession();

  /// Runs `conv` once from the output's initial contents (downloaded into
  /// `result` when given), then `repeat` more times, timed; returns their
  /// median in milliseconds (0 without timed runs).
  llvm::Expected<double> run(const CompiledConv &conv, int repeat,
                             HostTensor *result);

private:
  ConvRunSession();
  struct Device;
  HostConvBuffers buffers;
  HostTensor initialOutput;
  ConvArgs args;
  std::unique_ptr<Device> device;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_HOSTRUNNER_H
