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

#include "../GPU/KernelCommon.h"

#include "conv3d/Target/SM80/SM80KernelPlan.h"

namespace mlir::conv3d::sm80 {

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
  /// The input prologue's activation (after the RMS norm, if any).
  Activation inputActivation = Activation::none;
  /// i32 or index; see KernelMath.
  Type indexType;

  // Per-thread and per-block values, set up at the top of the kernel.
  Value tid, lane;
  Value warpRow, warpCol; ///< tile-relative origin of this warp's tile
  Value m0, n0;           ///< origin of this block's tile in the GEMM
  Value split;            ///< split-K index (null without split-K)
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
  /// SM80KernelPlan::prologueInShared: applies the input prologue in place
  /// to the chunks of `stage` this thread copied for the K step (k0,
  /// kLimit, stepValid), once they landed.
  virtual void transformStage(Value stage, Value k0, Value kLimit,
                              Value stepValid) {}
};

std::unique_ptr<OperandLoader> createInputLoader(KernelContext &ctx);
std::unique_ptr<OperandLoader> createFilterLoader(KernelContext &ctx);

/// The warp's MMAs over one ring stage: returns the updated accumulators
/// (mmaTilesM x mmaTilesN x 4 f32, row-major over tiles).
SmallVector<Value> emitWarpMma(KernelContext &ctx, Value stage,
                               ArrayRef<Value> accumulators);

/// Writes the accumulators through the shared staging tile to the output
/// (the shared GPU epilogue).
void emitEpilogueStore(KernelContext &ctx, ArrayRef<Value> accumulators);

} // namespace mlir::conv3d::sm80

#endif // CONV3D_LIB_CONVERSION_SM80_KERNELCONTEXT_H
