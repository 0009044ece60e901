//===- EmptyLike.h - a tensor.empty shaped like a value ---------*- C++ -*-===//
//
// The destination of an elementwise op inserted before a convolution (the
// prologue and quantize prepasses): a tensor.empty with `value`'s sizes,
// dynamic ones included, and element type.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_TRANSFORMS_EMPTYLIKE_H
#define CONV3D_LIB_TRANSFORMS_EMPTYLIKE_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::conv3d {

inline Value createEmptyLike(OpBuilder &b, Location loc, Value value) {
  return tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value),
      cast<RankedTensorType>(value.getType()).getElementType());
}

} // namespace mlir::conv3d

#endif // CONV3D_LIB_TRANSFORMS_EMPTYLIKE_H
