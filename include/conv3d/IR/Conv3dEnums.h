//===- Conv3dEnums.h - conv3d enumerations ----------------------*- C++ -*-===//
//
// Plain enums (filter layout, activation, K order, store mode) shared by the
// IR, the geometry type and the runtime; no MLIR IR headers needed.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_CONV3DENUMS_H
#define CONV3D_IR_CONV3DENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>

#include "conv3d/IR/Conv3dEnums.h.inc"

namespace mlir::conv3d {

/// Whether `activation` is a derivative epilogue (`relu_backward`,
/// `silu_backward`, `gelu_tanh_backward`): `(acc + bias) * act'(residual)`.
inline bool isActivationDerivative(Activation activation) {
  return activation == Activation::relu_backward ||
         activation == Activation::silu_backward ||
         activation == Activation::gelu_tanh_backward;
}

/// The derivative epilogue of a forward activation (none stays none), and
/// back: the forward activation a derivative epilogue differentiates.
inline Activation derivativeOf(Activation forward) {
  switch (forward) {
  case Activation::relu:
    return Activation::relu_backward;
  case Activation::silu:
    return Activation::silu_backward;
  case Activation::gelu_tanh:
    return Activation::gelu_tanh_backward;
  default:
    return forward;
  }
}
inline Activation forwardOf(Activation derivative) {
  switch (derivative) {
  case Activation::relu_backward:
    return Activation::relu;
  case Activation::silu_backward:
    return Activation::silu;
  case Activation::gelu_tanh_backward:
    return Activation::gelu_tanh;
  default:
    return derivative;
  }
}

} // namespace mlir::conv3d

#endif // CONV3D_IR_CONV3DENUMS_H
