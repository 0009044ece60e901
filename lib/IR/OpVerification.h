//===- OpVerification.h - checks shared by the op verifiers -----*- C++ -*-===//

#ifndef CONV3D_LIB_IR_OPVERIFICATION_H
#define CONV3D_LIB_IR_OPVERIFICATION_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "conv3d/IR/Conv3dEnums.h"

#include <array>

namespace mlir::conv3d::detail {

/// Checks that `value` is ranked with `rank` dimensions; names it `name`.
LogicalResult verifyRank(Operation *op, Value value, StringRef name,
                         int64_t rank);

/// Checks the tensor/memref consistency of a destination-style op: all
/// shaped operands are tensors (one result of the init's type) or all are
/// memrefs (no result).
LogicalResult verifyDpsForm(Operation *op, Value init);

/// Checks that an attribute array has `size` entries.
LogicalResult verifyArraySize(Operation *op, ArrayRef<int64_t> values,
                              StringRef name, size_t size);

/// Checks that the static sizes of `actual` match `expected` where both are
/// static; names `what` in the message.
LogicalResult verifyShapeMatches(Operation *op, ArrayRef<int64_t> actual,
                                 ArrayRef<int64_t> expected, StringRef what);

/// Checks the operands of an elementwise DPS op that keeps its input's type
/// (conv3d.quantize, conv3d.prologue): a bf16, f16 or f32 input and outs of
/// the same element type.
LogicalResult verifySameComputeType(Operation *op, Value input, Value init);

/// Checks an optional per-filter bias (rank 1, F elements, f32 or
/// `outElemType`).
LogicalResult verifyBias(Operation *op, Value bias, int64_t filters,
                         Type outElemType);

/// Checks an optional residual (the output's shape, f32 or `outElemType`)
/// and the epilogue's `activation`: a derivative (`*_backward`) reads the
/// pre-activation as the residual operand, so it needs one.
LogicalResult verifyResidual(Operation *op, Value residual,
                             ArrayRef<int64_t> outShape, Type outElemType,
                             Activation activation);

/// Checks an optional history operand against the NDHWC `input`: rank 5,
/// the same N, H, W and C (where static) and the same element type.
LogicalResult verifyHistory(Operation *op, Value history, Value input);

/// Checks an optional input prologue: `gamma` and `beta` (rank 1, C
/// elements, bf16/f16/f32), `beta` and `eps` only with `gamma`, `eps`
/// present with `gamma`, finite and positive. `quantized` says whether the
/// input is NVFP4-quantized (which a prologue cannot be combined with).
LogicalResult verifyPrologue(Operation *op, Value gamma, Value beta,
                             std::optional<APFloat> eps, Activation activation,
                             int64_t channels, bool quantized);

/// Checks that the static sizes of `value`'s shape multiply to at most
/// 2^62 elements (the bound every lowering's int64 index arithmetic is safe
/// under; larger products used to overflow into zero-trip loops or fail in
/// a later reshape). Dynamic sizes are skipped.
LogicalResult verifyElementCount(Operation *op, Value value, StringRef name);

/// The per-axis attribute `values` (strides, dilations) as an array; missing
/// entries (an attribute of the wrong size, which the verifier names) are 1.
inline std::array<int64_t, 3> toArray3(ArrayRef<int64_t> values) {
  std::array<int64_t, 3> result = {1, 1, 1};
  for (unsigned i = 0; i < 3 && i < values.size(); ++i)
    result[i] = values[i];
  return result;
}

/// The per-side padding attribute as an array; missing entries are 0.
inline std::array<int64_t, 6> toArray6(ArrayRef<int64_t> values) {
  std::array<int64_t, 6> result = {0, 0, 0, 0, 0, 0};
  for (unsigned i = 0; i < 6 && i < values.size(); ++i)
    result[i] = values[i];
  return result;
}

/// Formats a shape as `AxBxC` with `?` for dynamic sizes.
std::string formatShape(ArrayRef<int64_t> shape);

} // namespace mlir::conv3d::detail

#endif // CONV3D_LIB_IR_OPVERIFICATION_H
