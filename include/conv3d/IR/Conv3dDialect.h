//===- Conv3dDialect.h - conv3d dialect -------------------------*- C++ -*-===//

#ifndef CONV3D_IR_CONV3DDIALECT_H
#define CONV3D_IR_CONV3DDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "conv3d/IR/Conv3dDialect.h.inc"

#endif // CONV3D_IR_CONV3DDIALECT_H
