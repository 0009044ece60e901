//===- ReferenceGradients.h - naive reference conv gradients ----*- C++ -*-===//
//
// The data and weight gradients of a 3-D convolution (and so the transposed
// convolution, the data gradient with its own spec) in double, by direct
// loops over the forward's taps: every forward multiply-add
// y[n,o,f] += x[n, o*s - pad + t*dil, c] * w[t, c, f] is scattered back into
// dx (from dy and w) or dw (from x and dy). It shares nothing with the
// compiler's stride-phase and forward-convolution rewrites; ConvGeometry
// gives only the sizes.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_REFERENCE_REFERENCEGRADIENTS_H
#define CONV3D_REFERENCE_REFERENCEGRADIENTS_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dEnums.h"
#include "conv3d/Support/HostTensor.h"

#include <vector>

namespace mlir::conv3d {

/// dx = init + dgrad(dy, w): `gradOutput` the forward's output shape
/// (NDHWF), `filter` in `layout`, `init` (optional, null for zeros) the
/// forward input's shape. With a forward `activation` (relu, silu,
/// gelu_tanh), dx is multiplied by its derivative at `preActivation` (the
/// input's shape). Returns the NDHWC input gradient, row-major.
std::vector<double> referenceConvBackwardData(
    const ConvGeometry &forward, FilterLayout layout,
    const HostTensor &gradOutput, const HostTensor &filter,
    const HostTensor *init = nullptr, const HostTensor *preActivation = nullptr,
    Activation activation = Activation::none);

/// dw = init + wgrad(x, dy): `input` NDHWC, `gradOutput` NDHWF, `init`
/// (optional) the filter's shape. Returns the filter gradient in `layout`.
std::vector<double> referenceConvBackwardFilter(
    const ConvGeometry &forward, FilterLayout layout, const HostTensor &input,
    const HostTensor &gradOutput, const HostTensor *init = nullptr);

} // namespace mlir::conv3d

#endif // CONV3D_REFERENCE_REFERENCEGRADIENTS_H
