//===- ScalarEmitters.h - scalar IR for quantization and epilogues -*- C++
//-*-===//
//
// The one IR implementation of the element-level math of the dialect, used by
// every lowering (the linalg reference, the CPU tile loops and the GPU
// kernels), so that they agree bit for bit where the math is exact:
//
// - NVFP4 fake quantization (spec/nvfp4.md): E4M3 and E2M1 rounding written
//   with exact f32 operations only (power-of-two scaling, roundeven,
//   min/max), no fused multiply-add, no approximate division.
// - The epilogue `cast(act(acc + bias) + residual)`.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_SCALAREMITTERS_H
#define CONV3D_IR_SCALAREMITTERS_H

#include "conv3d/IR/Conv3dEnums.h"

#include "mlir/IR/Builders.h"

namespace mlir::conv3d {

/// Rounds an f32 value in [0, 448] to the nearest E4M3 value (ties to even,
/// subnormals down to 2^-9, values at most half of 2^-9 to zero).
Value emitRoundToE4M3(OpBuilder &b, Location loc, Value s);

/// Rounds a non-negative f32 value to the nearest of {0, .5, 1, 1.5, 2, 3, 4,
/// 6} (ties to the even code); values >= 6 become 6 and NaN stays NaN.
Value emitRoundToE2M1(OpBuilder &b, Location loc, Value a);

/// The f32 value of the E2M1 code in the low 4 bits of the i8 `code` (sign
/// in bit 3, magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6), built from its bits.
Value emitDecodeE2M1(OpBuilder &b, Location loc, Value code);

/// The f32 value of the E4M3 (FN) bits `bits` (i8): normals 2^(e-7) (1 +
/// m/8), subnormals m 2^-9; 0x7F and 0xFF are NaN.
Value emitDecodeE4M3(OpBuilder &b, Location loc, Value bits);

/// The per-block quantities of NVFP4, derived from the block's maximum
/// magnitude (over non-NaN values) and the tensor's amax.
struct NVFP4BlockScale {
  Value scale;     ///< s8 * gs (f32)
  Value inverse;   ///< 1 / scale, correctly rounded (f32)
  Value zeroBlock; ///< i1: amax == 0 or s8 == 0; the block quantizes to 0
};
NVFP4BlockScale emitNVFP4BlockScale(OpBuilder &b, Location loc, Value blockMax,
                                    Value amax);

/// The fake-quantized value of `value` (any float type) in f32, before the
/// rounding to the compute type.
Value emitNVFP4Quantize(OpBuilder &b, Location loc, Value value,
                        const NVFP4BlockScale &scale);

/// One whole NVFP4 block held in registers: its maximum, scale and the
/// quantized values, each rounded to `elementType`.
SmallVector<Value> emitNVFP4QuantizeBlock(OpBuilder &b, Location loc,
                                          ArrayRef<Value> elements, Value amax,
                                          Type elementType);

/// One whole NVFP4 block held as vectors of consecutive elements (in block
/// order, e.g. the 16-byte chunks a kernel read from shared memory): the
/// vectors with their elements replaced by emitNVFP4QuantizeBlock's.
SmallVector<Value> emitNVFP4QuantizeVectors(OpBuilder &b, Location loc,
                                            ArrayRef<Value> vectors, Value amax,
                                            Type elementType);

/// The parts of emitNVFP4QuantizeVectors for a block that is not held in
/// registers at once (a kernel reading it twice, chunk by chunk): the
/// maximum magnitude over `vector`'s elements folded into `acc` (f32, start
/// at 0), and `vector`'s elements quantized with the block's `scale` and
/// rounded to `elementType` as emitNVFP4QuantizeBlock rounds them.
Value emitAbsMaxUpdateVector(OpBuilder &b, Location loc, Value acc,
                             Value vector);
Value emitNVFP4QuantizeVector(OpBuilder &b, Location loc, Value vector,
                              const NVFP4BlockScale &scale, Type elementType);

/// `maxnum(acc, |value|)` for the block-maximum reduction (NaN ignored).
Value emitAbsMaxUpdate(OpBuilder &b, Location loc, Value acc, Value value);

/// Extends or truncates a float value to `type` (round to nearest even).
Value emitFloatCast(OpBuilder &b, Location loc, Value value, Type type);

/// The activation function on an f32 value.
Value emitActivation(OpBuilder &b, Location loc, Value x,
                     Activation activation);

/// The derivative of the forward activation `forward` (relu, silu,
/// gelu_tanh) at the f32 pre-activation `z`, in f32.
Value emitActivationDerivative(OpBuilder &b, Location loc, Value z,
                               Activation forward);

/// `cast(act(acc + bias) + residual)` on f32 `acc`; `bias` and `residual`
/// are optional (null) and of any float type; the result has `outType`.
/// With a derivative `activation` (`*_backward`):
/// `cast((acc + bias) * act'(residual))`, `residual` required.
Value emitEpilogue(OpBuilder &b, Location loc, Value acc, Value bias,
                   Value residual, Activation activation, Type outType);

/// `rsqrt(sumSquares / channels + eps)`: the RMS norm scale of a voxel from
/// the f32 sum of the squares of its `channels` values.
Value emitRmsNormScale(OpBuilder &b, Location loc, Value sumSquares,
                       int64_t channels, float eps);

/// The input prologue on one input value `x` (any float type):
/// `cast(act(x * normScale * gamma + beta))` computed in f32, where the norm
/// terms are present when `normScale` (f32) is: `gamma` is then required and
/// `beta` optional (any float type). The result has `outType`.
Value emitInputPrologue(OpBuilder &b, Location loc, Value x, Value normScale,
                        Value gamma, Value beta, Activation activation,
                        Type outType);

/// emitInputPrologue on each element of the 1-D vector `x`, with `gamma` and
/// `beta` vectors of the same length (the channels of `x`); the result has
/// the type of `x`.
Value emitInputPrologueVector(OpBuilder &b, Location loc, Value x,
                              Value normScale, Value gamma, Value beta,
                              Activation activation);

} // namespace mlir::conv3d

#endif // CONV3D_IR_SCALAREMITTERS_H
