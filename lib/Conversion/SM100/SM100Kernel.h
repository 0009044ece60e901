//===- SM100Kernel.h - the sm100 kernel emitter's shared state --*- C++ -*-===//
//
// Internal to lib/Conversion/SM100. LowerToSM100.cpp builds the host side
// (the TMA descriptors and the persistent launch, GPU/TmaKernel.h) and
// hands the launch to buildSM100Kernel (Tcgen05Kernel.cpp), which emits the
// kernel: the barriers and the TMEM allocation, the TMA producer warp (the
// shared producer), the MMA warp and the epilogue warps.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_SM100_SM100KERNEL_H
#define CONV3D_LIB_CONVERSION_SM100_SM100KERNEL_H

#include "../GPU/TmaKernel.h"

#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"
#include "conv3d/Target/SM100/SM100KernelPlan.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::conv3d::sm100 {

struct SM100Kernel : PlannedTmaKernel<SM100KernelPlan> {
  /// The TMEM address tcgen05.alloc returned (i32: lane << 16 | column).
  Value tmemBase = {};

  /// The block-scaled kernel (real NVFP4): its plan (`plan` is its
  /// `kernel`), the TMA descriptors of the activation's and the filter's
  /// scales (descA and descB are those of the packed codes) and the f32
  /// product of the two global scales the epilogue multiplies the
  /// accumulators by. Null for kind::f16.
  const nvfp4::BlockScaledPlan *blockScaled = nullptr;
  Value descAScales = {}, descBScales = {};
  Value accumulatorScale = {};

  SM100Kernel(OpBuilder &b, Location loc, const SM100KernelPlan &plan,
              const ConvGeometry &g, Type inElem, Type outElem,
              const KernelOperands &ops, StoreMode mode, Activation activation,
              Type indexType)
      : PlannedTmaKernel(b, loc, plan, ringOf(plan), g, inElem, outElem, ops,
                         mode, activation, indexType) {}

  static TmaRing ringOf(const SM100KernelPlan &plan) {
    TmaRing ring = planRing(plan);
    ring.fullBarrierOffset = plan.fullBarrierOffset(0);
    ring.emptyBarrierOffset = plan.emptyBarrierOffset(0);
    ring.ctaGroup = plan.ctaGroup;
    return ring;
  }

  /// The accumulator-full (MMA -> epilogue) and accumulator-empty (epilogue
  /// -> MMA) barriers of accumulator buffer `buffer` (i32).
  Value accFullBarrier(Value buffer) const {
    KernelMath m = i32();
    return sharedPtr(
        m.add(m.constant(plan.accFullBarrierOffset(0)), m.mul(buffer, 8)));
  }
  Value accEmptyBarrier(Value buffer) const {
    KernelMath m = i32();
    return sharedPtr(
        m.add(m.constant(plan.accEmptyBarrierOffset(0)), m.mul(buffer, 8)));
  }
  /// (buffer, phase parity) of the block-local tile `local`.
  std::pair<Value, Value> bufferAndPhase(Value local) const {
    KernelMath m = i32();
    return {m.rem(local, plan.accumulatorBuffers),
            m.bitAnd(m.div(local, plan.accumulatorBuffers), 1)};
  }
  /// The cta_group of every tcgen05 operation of the kernel.
  NVVM::CTAGroupKind ctaGroup() const {
    return plan.ctaGroup == 2 ? NVVM::CTAGroupKind::CTA_2
                              : NVVM::CTAGroupKind::CTA_1;
  }
  /// A tensor-memory pointer to `address` (i32).
  Value tmemPtr(Value address) const {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 6), address);
  }
};

inline void fence(SM100Kernel &k, NVVM::Tcgen05FenceKind kind) {
  NVVM::Tcgen05FenceOp::create(k.b, k.loc, kind);
}

inline void waitParity(SM100Kernel &k, Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(k.b, k.loc, barrier, parity,
                                        k.i32Const(0));
}

/// The MMA warp's tile loop, for both kernels: per tile, wait for its
/// accumulator buffer to be free; per K step t (i32), wait for the stage's
/// TMA bytes and call `step(stage, t, accumulator)`, which issues the
/// step's work and commits the stage back; after the last step one elected
/// thread (`leader`) commits the accumulator to the epilogue (at once for a
/// tile without steps, whose epilogue writes zeros).
void emitMmaTileLoop(
    SM100Kernel &k, Value leader,
    function_ref<void(Value stage, Value t, Value accumulator)> step);

/// The block-scaled kernel's producer (one thread): per K step the four
/// TMA loads of SM100BlockScaledTma.h into the stage (BlockScaledKernel.cpp).
void emitBlockScaledProducer(SM100Kernel &k);

/// The block-scaled kernel's MMA warp (every lane; `lane` its lane id):
/// per K step the scale rows permuted into atoms in shared memory, then one
/// elected thread's tcgen05.cp of the atoms to TMEM, the four
/// tcgen05.mma.block_scale and the commits (BlockScaledKernel.cpp).
void emitBlockScaledMma(SM100Kernel &k, Value lane);

/// Emits the kernel into `launch`'s body (`k` carries the host's values:
/// descriptors, tiles, operands).
void buildSM100Kernel(SM100Kernel &k, gpu::LaunchOp launch);

} // namespace mlir::conv3d::sm100

#endif // CONV3D_LIB_CONVERSION_SM100_SM100KERNEL_H
