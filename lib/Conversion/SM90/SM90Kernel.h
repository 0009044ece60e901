//===- SM90Kernel.h - the sm90 kernel emitter's shared state ---*- C++ -*-===//
//
// Internal to lib/Conversion/SM90. LowerToSM90.cpp builds the host side (the
// TMA descriptors and the persistent launch, GPU/TmaKernel.h) and hands the
// launch to buildSM90Kernel (WarpSpecializedKernel.cpp), which emits the
// kernel: the mbarrier ring's setup, the TMA producer warpgroup (the shared
// producer) and the wgmma consumer warpgroups with their epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H
#define CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H

#include "../GPU/TmaKernel.h"

#include "conv3d/Conversion/SM90/SM90KernelPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::conv3d::sm90 {

/// Everything the kernel's parts share: the TMA kernel layer's state plus
/// the plan and what the consumers' epilogue needs.
struct SM90Kernel : TmaKernel {
  const SM90KernelPlan &plan;
  Type inElem, outElem;
  const KernelOperands &ops;
  StoreMode mode;
  Activation activation;
  Type indexType;

  SM90Kernel(OpBuilder &b, Location loc, const SM90KernelPlan &plan,
             const ConvGeometry &g, Type inElem, Type outElem,
             const KernelOperands &ops, StoreMode mode, Activation activation,
             Type indexType)
      : TmaKernel(b, loc, g, ringOf(plan)), plan(plan), inElem(inElem),
        outElem(outElem), ops(ops), mode(mode), activation(activation),
        indexType(indexType) {}

  static TmaRing ringOf(const SM90KernelPlan &plan) {
    TmaRing ring;
    ring.tileM = plan.tileM;
    ring.tileN = plan.tileN;
    ring.stages = plan.stages;
    ring.aStageBytes = plan.aStageBytes;
    ring.bStageBytes = plan.bStageBytes;
    ring.stepBytes = plan.stepBytes;
    ring.fullBarrierOffset = plan.barrierOffset;
    ring.emptyBarrierOffset = plan.barrierOffset + 8 * plan.stages;
    ring.channelBlocks = plan.channelBlocks;
    ring.stepsPerSlice = plan.stepsPerSlice;
    ring.totalSteps = plan.totalSteps;
    ring.kOrder = plan.kOrder;
    ring.splitK = plan.splitK;
    return ring;
  }

  KernelMath math() const { return {b, loc, indexType}; }

  /// Ping-pong: the barrier consumer warpgroup `group` waits on before its
  /// mainloop (the other one arrives when its own mainloop is done).
  Value orderBarrier(Value group) const {
    KernelMath m = i32();
    return sharedPtr(m.add(m.constant(plan.barrierOffset + 16 * plan.stages),
                           m.mul(group, 8)));
  }
};

/// Emits the kernel into `launch`'s body (`k` carries the host's values:
/// descriptors, tiles, operands).
void buildSM90Kernel(SM90Kernel &k, gpu::LaunchOp launch);

} // namespace mlir::conv3d::sm90

#endif // CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H
