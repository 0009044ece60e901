//===- IndexMath.h - index arithmetic that emits IR -------------*- C++ -*-===//
//
// The IR counterpart of ScalarIndexMath: instantiating the ConvGeometry
// decomposition templates with it emits `arith` ops on `index` values (or on
// another integer type), so passes and kernels use the very formulas the
// reference and runtime use.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_INDEXMATH_H
#define CONV3D_IR_INDEXMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::conv3d {

struct IRIndexMath {
  using Value = mlir::Value;
  OpBuilder &b;
  Location loc;
  /// The integer type of the values (null: `index`).
  Type type = {};

  Value constant(int64_t c) const {
    if (!type)
      return arith::ConstantIndexOp::create(b, loc, c);
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, c));
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value mul(Value x, int64_t c) const {
    if (c == 1)
      return x;
    return arith::MulIOp::create(b, loc, x, constant(c));
  }
  Value div(Value x, int64_t c) const {
    if (c == 1)
      return x;
    return arith::DivUIOp::create(b, loc, x, constant(c));
  }
  Value rem(Value x, int64_t c) const {
    if (c == 1)
      return constant(0);
    return arith::RemUIOp::create(b, loc, x, constant(c));
  }
  Value smin(Value x, Value y) const {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value smax(Value x, Value y) const {
    return arith::MaxSIOp::create(b, loc, x, y);
  }
};

} // namespace mlir::conv3d

#endif // CONV3D_IR_INDEXMATH_H
