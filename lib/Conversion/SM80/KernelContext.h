//===- KernelContext.h - shared state of the sm80 kernel emitter -*- C++
//-*-===//
//
// Internal to lib/Conversion/SM80. The emitter builds one kernel inside a
// gpu.launch: the operand loaders (OperandLoaders.cpp), the warp-level MMA
// (WarpMma.cpp), the epilogue (EpilogueStore.cpp) and the pipelined K loop
// (LowerToSM80.cpp) share this context.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_SM80_KERNELCONTEXT_H
#define CONV3D_LIB_CONVERSION_SM80_KERNELCONTEXT_H

#include "conv3d/Conversion/SM80/SM80KernelPlan.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::conv3d::sm80 {

/// IRIndexMath (the ConvGeometry decompositions) plus the operations the
/// SM80KernelPlan layout templates and the loaders need; the IR counterpart
/// of ScalarLayoutMath. Values have type `type`: i32 when every tensor of
/// the kernel has fewer than 2^31 elements (half the registers of 64-bit
/// math), else `index` (64-bit addressing). toIndex() converts for memory
/// accesses.
struct KernelMath : IRIndexMath {
  KernelMath(OpBuilder &b, Location loc, Type type)
      : IRIndexMath{b, loc, type} {}

  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  using IRIndexMath::mul;
  Value mul(Value x, Value y) const {
    return arith::MulIOp::create(b, loc, x, y);
  }
  Value bitXor(Value x, Value y) const {
    return arith::XOrIOp::create(b, loc, x, y);
  }
  Value bitAnd(Value x, int64_t c) const {
    return arith::AndIOp::create(b, loc, x, constant(c));
  }
  Value minU(Value x, Value y) const {
    return arith::MinUIOp::create(b, loc, x, y);
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value cmp(arith::CmpIPredicate pred, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  }
  Value ult(Value x, Value y) const {
    return cmp(arith::CmpIPredicate::ult, x, y);
  }
  Value andI(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  /// 0 <= x < bound for a possibly negative value.
  Value inRange(Value x, int64_t bound) const {
    return andI(cmp(arith::CmpIPredicate::sge, x, constant(0)),
                cmp(arith::CmpIPredicate::slt, x, constant(bound)));
  }
  Value trueValue() const {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  }
  /// `x` as an `index` (for memref indices and loop bounds of that type).
  Value toIndex(Value x) const {
    if (x.getType().isIndex())
      return x;
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  }
  /// An `index` value in this math's type.
  Value fromIndex(Value x) const {
    if (type.isIndex())
      return x;
    return arith::IndexCastOp::create(b, loc, type, x);
  }
};

/// A global-memory operand seen as a flat 1-D memref, with the element
/// strides of its logical dimensions (so subviews work too).
struct FlatOperand {
  Value memref;
  SmallVector<int64_t> strides;

  explicit operator bool() const { return static_cast<bool>(memref); }
};

struct KernelOperands {
  FlatOperand input;    ///< NDHWC
  FlatOperand filter;   ///< strides = {k, n}: the K x F view's strides
  FlatOperand output;   ///< NDHWF
  FlatOperand bias;     ///< [F], optional
  FlatOperand residual; ///< NDHWF, optional
  Value amax;           ///< f32, with input quantization
  std::array<int64_t, 5> outputShape;
};

/// Values and facts every part of the kernel uses.
struct KernelContext {
  KernelContext(OpBuilder &b, Location loc, const SM80KernelPlan &plan,
                const ConvGeometry &geometry, Type inElem, Type outElem,
                KernelOperands ops, StoreMode mode, Activation activation,
                Type indexType)
      : b(b), loc(loc), plan(plan), geometry(geometry), inElem(inElem),
        outElem(outElem), ops(std::move(ops)), mode(mode),
        activation(activation), indexType(indexType) {}

  OpBuilder &b;
  Location loc;
  const SM80KernelPlan &plan;
  const ConvGeometry &geometry;
  Type inElem, outElem;
  KernelOperands ops;
  StoreMode mode = StoreMode::overwrite;
  Activation activation = Activation::none;
  /// i32 or index; see KernelMath.
  Type indexType;

  // Per-thread and per-block values, set up at the top of the kernel.
  Value tid, lane;
  Value warpRow, warpCol; ///< tile-relative origin of this warp's tile
  Value m0, n0;           ///< origin of this block's tile in the GEMM
  Value smemA, smemB;     ///< the operand rings (1-D, workgroup space)
  Value staging;          ///< the epilogue's f32 tile (aliases the rings)

  KernelMath math() const { return {b, loc, indexType}; }
};

//===--- The parts (one file each)
//-----------------------------------------===//

/// Loads one operand tile per K step into a ring stage, with cp.async or
/// through registers. Per-thread row facts are computed once at
/// construction (outside the K loop).
class OperandLoader {
public:
  virtual ~OperandLoader() = default;
  /// Whether this operand uses cp.async (else registers).
  virtual bool isAsync() const = 0;
  /// cp.async of the tile at K offset `k0` (valid k < kLimit; nothing is
  /// read when `stepValid` is false) into ring stage `stage`; returns the
  /// async tokens.
  virtual SmallVector<Value> issueAsync(Value k0, Value kLimit, Value stepValid,
                                        Value stage) = 0;
  /// Register path: global loads of the tile (zeros outside the operand).
  virtual SmallVector<Value> loadToRegisters(Value k0, Value kLimit,
                                             Value stepValid) = 0;
  /// Register path: (quantization and) stores of loaded values to `stage`.
  virtual void storeFromRegisters(ArrayRef<Value> values, Value stage) = 0;
  /// SM80KernelPlan::quantizeInShared: quantizes the landed tile of
  /// `stage` in place (the caller orders it between barriers).
  virtual void quantizeStage(Value stage) {}
};

std::unique_ptr<OperandLoader> createInputLoader(KernelContext &ctx);
std::unique_ptr<OperandLoader> createFilterLoader(KernelContext &ctx);

/// The warp's MMAs over one ring stage: returns the updated accumulators
/// (mmaTilesM x mmaTilesN x 4 f32, row-major over tiles).
SmallVector<Value> emitWarpMma(KernelContext &ctx, Value stage,
                               ArrayRef<Value> accumulators);

/// Writes the accumulators through the shared staging tile to the output,
/// applying the epilogue (or adding atomically), with 16-byte accesses where
/// F allows.
void emitEpilogueStore(KernelContext &ctx, ArrayRef<Value> accumulators);

} // namespace mlir::conv3d::sm80

#endif // CONV3D_LIB_CONVERSION_SM80_KERNELCONTEXT_H
