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

#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::conv3d::sm90 {

/// Everything the kernel's parts share: the TMA kernel layer's state plus
/// the plan and what the consumers' epilogue needs.
struct SM90Kernel : PlannedTmaKernel<SM90KernelPlan> {
  SM90Kernel(OpBuilder &b, Location loc, const SM90KernelPlan &plan,
             const ConvGeometry &g, Type inElem, Type outElem,
             const KernelOperands &ops, StoreMode mode, Activation activation,
             Type indexType)
      : PlannedTmaKernel(b, loc, plan, ringOf(plan), g, inElem, outElem, ops,
                         mode, activation, indexType) {}

  /// With plan.tmaStore: a generic pointer to the output's TMA descriptor
  /// (descA and descB, of the TmaKernel, are the input's and the filter's).
  Value descC = {};

  static TmaRing ringOf(const SM90KernelPlan &plan) {
    TmaRing ring = planRing(plan);
    ring.fullBarrierOffset = plan.barrierOffset;
    ring.emptyBarrierOffset = plan.barrierOffset + 8 * plan.stages;
    ring.multicastB = plan.clusterM;
    ring.splitCluster = plan.splitCluster;
    return ring;
  }

  /// The address-independent bits of the wgmma descriptors of K-major
  /// swizzled operands with rows of `rowBytes` (128 or 64), as an i64
  /// constant (made once, where every descriptor of the kernel part can use
  /// it).
  Value wgmmaDescriptorTemplate(int64_t rowBytes = kRowBytes) const {
    return arith::ConstantIntOp::create(
        b, loc, b.getI64Type(),
        static_cast<int64_t>(SM90KernelPlan::descriptorTemplate(rowBytes)));
  }
  /// The wgmma descriptor of the operand at shared offset `offset` (i32):
  /// `descTemplate` | (address >> 4).
  Value wgmmaDescriptor(Value descTemplate, Value offset) const {
    KernelMath m = i32();
    // The aligned base + offset < 256 KiB: (address >> 4) fits the 14-bit
    // field.
    Value address = m.add(smemBase, offset);
    Value field =
        arith::ExtUIOp::create(b, loc, b.getI64Type(), m.div(address, 16));
    return arith::OrIOp::create(b, loc, descTemplate, field).getResult();
  }

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

/// One consumer warpgroup's accumulators of a tile (i32 values).
struct AccumulatorFragments {
  /// One wgmma accumulator struct per m64 sub-tile.
  ArrayRef<Value> accs;
  /// The warpgroup's first row in the tile, its warp (0-3) and lane.
  Value groupRow, warp, lane;
};

/// The TMA-store epilogue of a tile of columns from n0 (TmaStoreEpilogue.cpp):
/// the epilogue applied in registers, the 16-bit results written to the
/// staging tile at shared offset `staging`, stored by the thread where
/// `isIssuer` holds, each box at the output descriptor's coordinates
/// (its first column, then `rowCoordinates`: {m0, 0} for the [M][F]
/// matrix, {w0, h0, d, n} for the halo mainloop's rank-5 NDHWF view).
/// `barrier` syncs the threads that share the tile.
void emitTmaStoreEpilogue(SM90Kernel &k, const AccumulatorFragments &fragments,
                          ValueRange rowCoordinates, Value n0, Value staging,
                          Value isIssuer, function_ref<void()> barrier);

/// The halo mainloop (plan.halo, HaloMainloop.cpp): the producer thread's
/// loads of the input patches and filter taps, and the consumer
/// warpgroups' wgmmas over them and the TMA-store epilogue.
void emitHaloProducer(SM90Kernel &k);
void emitHaloConsumer(SM90Kernel &k);
/// The halo mainloop's host side: the TMA descriptors of the input
/// (patches), the filter (tap x channel block boxes) and the output (the
/// TMA-store boxes over its rank-5 view), made at run time.
std::array<Value, 3> emitHaloDescriptors(OpBuilder &b, Location loc,
                                         ModuleOp module,
                                         const GridKernel &kernel,
                                         const KernelOperands &ops,
                                         const SM90KernelPlan &plan);
/// NVFP4 quantization in the tile (plan.quantBlockSize): quantizes in place
/// the A rows [groupRow, groupRow + plan.quantRows) of stage `stage`, which
/// must have landed, the calling thread being `groupTid` (0-127) of the
/// consumer warpgroup that reads those rows; then fences its writes for the
/// async proxy. The caller syncs the warpgroup before its wgmmas read them
/// (TileQuantization.cpp).
void emitQuantizeStage(SM90Kernel &k, Value stage, Value groupRow,
                       Value groupTid);

/// The in-cluster split-K reduction of one staged column chunk
/// (plan.splitCluster, SplitClusterReduction.cpp). Every block of the
/// cluster has staged its partial sums of the chunk in `staged` (and synced
/// its consumer threads); this block announces it to the cluster, waits for
/// the others, adds the rows it owns from every block's staging in split
/// order into its own staging, tells every block it is done reading theirs,
/// and returns its rows as a staged tile for the epilogue. `iteration`
/// counts this block's staged chunks (the barriers' phases); `isIssuer` is
/// the one consumer thread that signals; `barrier` syncs the consumers.
StagedTile emitSplitClusterReduction(SM90Kernel &k, const StagedTile &staged,
                                     Value stagingOffset, Value tileRowEnd,
                                     Value iteration, Value isIssuer,
                                     function_ref<void()> barrier);
/// Before a block overwrites its staging with the next chunk's partial
/// sums: waits until every block of the cluster has read the previous one
/// (no-op for the first chunk, iteration 0).
void emitSplitClusterStagingWait(SM90Kernel &k, Value iteration);
/// The ready and free mbarriers of the in-cluster reduction.
Value splitReadyBarrier(SM90Kernel &k);
Value splitFreeBarrier(SM90Kernel &k);

/// Waits, in the issuing thread, until the last TMA stores are written.
void emitTmaStoreDrain(SM90Kernel &k, Value isIssuer);

} // namespace mlir::conv3d::sm90

#endif // CONV3D_LIB_CONVERSION_SM90_SM90KERNEL_H
