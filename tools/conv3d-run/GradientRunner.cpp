//===- GradientRunner.cpp - conv3d-run --kind=dgrad|wgrad -----------------===//
//
// A gradient spec: the output gradient and the filter (dgrad) or the input
// (wgrad) from .npy files or fresh random data (and dgrad's pre-activation
// with --activation), the destination poisoned
// (NaN) or random when accumulated onto, one compiled run, and the check
// against the float64 reference gradients (lib/Reference), as the forward
// is checked against referenceConv.
//
//===----------------------------------------------------------------------===//

#include "Runners.h"

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Reference/ReferenceGradients.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"

#include <cmath>

using namespace mlir::conv3d;
using namespace conv3d_run;

int conv3d_run::runGradient(const RunRequest &request) {
  const ConvSpec &spec = request.spec;
  bool dgrad = spec.kind == ConvKind::dgrad;
  uint64_t seed = request.seed;

  // The two operands of the gradient, given or fresh random values.
  auto gradOutput =
      loadOrRandom(request.gradOutputPath, "grad_output", spec.inputType,
                   spec.outputShape(), seed + 8, 1.0);
  if (!gradOutput)
    return fail(llvm::toString(gradOutput.takeError()));
  llvm::Expected<HostTensor> other =
      dgrad ? loadOrRandom(request.filterPath, "filter", spec.inputType,
                           spec.filterShape(), seed + 1,
                           1.0 / std::sqrt(double(spec.geometry.gemmK())))
            : loadOrRandom(request.inputPath, "input", spec.inputType,
                           spec.inputShape(), seed, 1.0);
  if (!other)
    return fail(llvm::toString(other.takeError()));
  // dgrad through an activation: the pre-activation, of either sign.
  llvm::Expected<HostTensor> preActivation =
      spec.hasResidual
          ? loadOrRandom(request.preActivationPath, "pre-activation",
                         spec.residualType(), spec.resultShape(), seed + 3, 1.0)
          : HostTensor();
  if (!preActivation)
    return fail(llvm::toString(preActivation.takeError()));
  llvm::Expected<HostTensor> initOr =
      initialOutput(spec, spec.resultShape(), seed + 4);
  if (!initOr)
    return fail(llvm::toString(initOr.takeError()));
  HostTensor init = std::move(*initOr);

  Engine engine(request.cache);
  progress(request, "compiling " + spec.describe());
  llvm::Expected<std::shared_ptr<const CompiledConv>> conv =
      engine.compile(spec, request.options);
  if (!conv)
    return fail(llvm::toString(conv.takeError()));
  Measurement m;
  m.compileMillis = (*conv)->getStats().totalMillis;
  m.compileSource = (*conv)->getStats().source;

  HostTensor result = init;
  HostConvBuffers buffers;
  buffers.gradOutput = &*gradOutput;
  (dgrad ? buffers.filter : buffers.input) = &*other;
  buffers.residual = spec.hasResidual ? &*preActivation : nullptr;
  buffers.output = &result;
  HostRunTiming timing;
  timing.repeat = request.repeat;
  if (llvm::Error error = runWithHostBuffers(**conv, buffers, &timing))
    return fail(llvm::toString(std::move(error)));
  m.runMillis = timing.medianMillis;

  if (request.check) {
    progress(request, "checking against the reference gradient");
    const HostTensor *start = spec.accumulate ? &init : nullptr;
    std::vector<double> reference =
        dgrad
            ? referenceConvBackwardData(
                  spec.geometry, spec.filterLayout, *gradOutput, *other, start,
                  spec.hasResidual ? &*preActivation : nullptr, spec.activation)
            : referenceConvBackwardFilter(spec.geometry, spec.filterLayout,
                                          *other, *gradOutput, start);
    m.recordCheck(relativeL2Error(reference, result), spec.checkTolerance());
  }
  return finishRun(request, m, result);
}
