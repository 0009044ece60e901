//===- SM90Kernel.h - the sm90 kernel emitter's shared state ---*- C++ -*-===//
//
// Internal to lib/Conversion/SM90. LowerToSM90.cpp builds the host side (the
// TMA descriptors and the persistent launch) and hands the launch to
// buildSM90Kernel (WarpSpecializedKernel.cpp), which emits the kernel: the
// mbarrier ring's setup, the TMA producer warpgroup and the wgmma consumer
// warpgroups with their epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H
#define CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H

#include "../GPU/KernelCommon.h"

#include "conv3d/Conversion/SM90/SM90KernelPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::conv3d::sm90 {

/// Everything the kernel's parts share.
struct SM90Kernel {
  OpBuilder &b;
  Location loc;
  const SM90KernelPlan &plan;
  const ConvGeometry &g;
  Type inElem, outElem;
  const KernelOperands &ops;
  StoreMode mode;
  Activation activation;
  Type indexType;

  int64_t numMT = 0, numNT = 0, numTiles = 0;

  // Set up at the top of the kernel (i32).
  Value tid = {}, blockId = {}, gridSize = {};
  Value smemBase = {};    ///< shared address, 1024-byte aligned
  Value smemShift = {};   ///< bytes from the dynamic base to smemBase
  Value dynamicSmem = {}; ///< memref<?xi8, workgroup>
  /// Generic pointers to the TMA descriptors: input (im2col), filter and,
  /// with plan.tmaStore, the output.
  Value descA = {}, descB = {}, descC = {};

  KernelMath math() const { return {b, loc, indexType}; }
  KernelMath i32() const { return {b, loc, b.getI32Type()}; }

  Value i32Const(int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  /// A shared pointer to byte `offset` (i32) of the aligned region.
  Value sharedPtr(Value offset) const {
    Value address = arith::AddIOp::create(b, loc, smemBase, offset);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
  }
  /// A shared::cluster pointer (the TMA destination's address space) to
  /// byte `offset`: this CTA's shared window is part of its cluster's.
  Value clusterPtr(Value offset) const {
    return LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
        sharedPtr(offset));
  }
  Value fullBarrier(Value stage) const {
    KernelMath m = i32();
    return sharedPtr(m.add(m.constant(plan.barrierOffset), m.mul(stage, 8)));
  }
  Value emptyBarrier(Value stage) const {
    KernelMath m = i32();
    return sharedPtr(m.add(m.constant(plan.barrierOffset + 8 * plan.stages),
                           m.mul(stage, 8)));
  }
  /// Ping-pong: the barrier consumer warpgroup `group` waits on before its
  /// mainloop (the other one arrives when its own mainloop is done).
  Value orderBarrier(Value group) const {
    KernelMath m = i32();
    return sharedPtr(m.add(m.constant(plan.barrierOffset + 16 * plan.stages),
                           m.mul(group, 8)));
  }
  /// i32 shared offsets of A and B stage `stage`.
  Value aStage(Value stage) const { return i32().mul(stage, plan.aStageBytes); }
  Value bStage(Value stage) const {
    KernelMath m = i32();
    return m.add(m.constant(plan.stages * plan.aStageBytes),
                 m.mul(stage, plan.bStageBytes));
  }
  /// (stage, phase parity) of K step t.
  std::pair<Value, Value> stageAndPhase(Value t) const {
    KernelMath m = i32();
    return {m.rem(t, plan.stages), m.bitAnd(m.div(t, plan.stages), 1)};
  }
};

/// Emits the kernel into `launch`'s body (`k` carries the host's values:
/// descriptors, tiles, operands).
void buildSM90Kernel(SM90Kernel &k, gpu::LaunchOp launch);

/// One consumer warpgroup's accumulators of a tile (i32 values).
struct AccumulatorFragments {
  /// One wgmma accumulator struct per m64 sub-tile.
  ArrayRef<Value> accs;
  /// The warpgroup's first row in the tile, its warp (0-3) and lane.
  Value groupRow, warp, lane;
};

/// The TMA-store epilogue of a tile at (m0, n0) (TmaStoreEpilogue.cpp):
/// the epilogue applied in registers, the 16-bit results written to the
/// staging tile at shared offset `staging`, stored by the thread where
/// `isIssuer` holds. `barrier` syncs the threads that share the tile.
void emitTmaStoreEpilogue(SM90Kernel &k, const AccumulatorFragments &fragments,
                          Value m0, Value n0, Value staging, Value isIssuer,
                          function_ref<void()> barrier);
/// Waits, in the issuing thread, until the last TMA stores are written.
void emitTmaStoreDrain(SM90Kernel &k, Value isIssuer);

} // namespace mlir::conv3d::sm90

#endif // CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H
