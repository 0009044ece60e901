//===- HaloMainloop.cpp - the sm90 kernel's halo mainloop -----------------===//
//
// mainloop = halo (SM90KernelPlan::halo). The im2col mainloop loads, for
// each filter tap, the tile's rows gathered for that tap: a 3x3 window in H
// and W reads each input pixel nine times from L2, and a narrow N tile (F
// = 96 is one tile) gives those reads too few MMAs to hide behind. Here a
// tile is tile_m / 64 output rows of 64 consecutive output columns at one
// (n, d); for each depth tap q and channel block, one tiled TMA load brings
// the input patch all of the tile's (r, s) taps read (zeros outside the
// input, TMA's out-of-bounds fill, which is the zero padding), and the
// consumers read tap (r, s)'s A operand at patch row (i + r * dil_h) *
// columns + s * dil_w for output row i. The filter rows of each tap come
// through their own ring, one B step per tap; the A ring's stage of a
// patch is released once its last tap's wgmmas are done.
//
//   producer thread, per tile, per A step (q, channel block):
//     wait aEmpty; expect the patch; TMA tile load of the patch
//     per (r, s): wait bEmpty; expect; TMA tile load of the filter rows
//   consumers, per A step: wait aFull; per (r, s): wait bFull;
//     wgmma m64nNk16 per output row and k16; commit; wait for the last
//     step's group; release its B stage (and, at a new A step, the last
//     patch's stage)
//   epilogue: the TMA-store epilogue over the rank-5 NDHWF view of the
//     output (boxes of 64 columns x tile_m / 64 rows: ragged edges clip)
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// A halo tile's origin (i32): its first filter, first output column and
/// row, output depth and batch index.
struct HaloTile {
  Value n0, w0, h0, d, n;
};

/// Tiles in the order N tile, W, H, (n, d): the blocks working at one time
/// read neighbouring patches, which share rows in L2.
HaloTile haloTile(SM90Kernel &k, Value index) {
  KernelMath m = k.i32();
  const ConvGeometry &g = k.g;
  const SM90KernelPlan &plan = k.plan;
  auto [nd, th, tw, tn] = delinearize<KernelMath, 4>(
      m, index,
      {g.batch * g.outputSize(kDepth),
       ceilDiv(g.outputSize(kHeight), plan.haloOutRows),
       ceilDiv(g.outputSize(kWidth), kWgmmaM), k.numNT});
  int64_t depth = g.outputSize(kDepth);
  return {m.mul(tn, plan.tileN), m.mul(tw, kWgmmaM),
          m.mul(th, plan.haloOutRows), m.rem(nd, depth), m.div(nd, depth)};
}

/// The A ring: stage offsets and barriers (the B ring is the TmaKernel's).
struct PatchRing {
  SM90Kernel &k;

  Value stage(Value s) const { return k.i32().mul(s, k.plan.aStageBytes); }
  Value full(Value s) const {
    KernelMath m = k.i32();
    return k.sharedPtr(m.add(m.constant(k.plan.aBarrierOffset), m.mul(s, 8)));
  }
  Value empty(Value s) const {
    KernelMath m = k.i32();
    return k.sharedPtr(m.add(
        m.constant(k.plan.aBarrierOffset + 8 * k.plan.aStages), m.mul(s, 8)));
  }
  /// (stage, phase parity) of A step t.
  std::pair<Value, Value> stageAndPhase(Value t) const {
    KernelMath m = k.i32();
    return {m.rem(t, k.plan.aStages), m.bitAnd(m.div(t, k.plan.aStages), 1)};
  }
};

/// B stage `s`'s offset: the B ring follows the A ring's aStages.
Value filterStage(SM90Kernel &k, Value s) {
  KernelMath m = k.i32();
  return m.add(m.constant(k.plan.aStages * k.plan.aStageBytes),
               m.mul(s, k.plan.bStageBytes));
}

/// Waits until the mbarrier's phase with parity `parity` completed.
void waitParity(SM90Kernel &k, Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(k.b, k.loc, barrier, parity,
                                        k.i32().constant(0));
}

void expectBytes(SM90Kernel &k, Value barrier, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      k.b, k.loc, Type(), barrier, k.i32().constant(bytes),
      NVVM::MemScopeKind::CTA, false, Value());
}

void tileLoad(SM90Kernel &k, Value destination, Value descriptor,
              ArrayRef<Value> coordinates, Value barrier) {
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      k.b, k.loc, k.clusterPtr(destination), descriptor, coordinates, barrier,
      ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE, false,
      NVVM::CTAGroupKindAttr(), Value());
}

/// Runs `body` in `scf.for iv = 0 to count` carrying `inits`; returns the
/// loop's results.
SmallVector<Value>
forLoop(SM90Kernel &k, int64_t count, ValueRange inits,
        function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  KernelMath m = k.i32();
  auto loop = scf::ForOp::create(k.b, k.loc, m.constant(0), m.constant(count),
                                 m.constant(1), inits);
  OpBuilder::InsertionGuard guard(k.b);
  // Without iter_args the builder added an empty scf.yield.
  if (inits.empty())
    loop.getBody()->getTerminator()->erase();
  k.b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> results =
      body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(k.b, k.loc, results);
  return SmallVector<Value>(loop.getResults());
}

} // namespace

void mlir::conv3d::sm90::emitHaloProducer(SM90Kernel &k) {
  const SM90KernelPlan &plan = k.plan;
  const ConvGeometry &g = k.g;
  KernelMath m = k.i32();
  PatchRing patches{k};
  int64_t patchBytes = plan.haloRows * plan.haloColumns * plan.operandRowBytes;
  int64_t filterBytes = plan.tileN * plan.operandRowBytes;
  forEachTile(k, [&](const TileOrigin &origin, Value done, Value local) {
    HaloTile tile = haloTile(k, origin.index);
    // The patch's corner: out-of-bounds coordinates (the padding) read
    // zeros.
    Value w = m.sub(tile.w0, m.constant(g.padLow[kWidth]));
    Value h = m.sub(tile.h0, m.constant(g.padLow[kHeight]));
    Value d =
        m.sub(m.mul(tile.d, g.strides[kDepth]), m.constant(g.padLow[kDepth]));
    Value aDone = m.mul(local, plan.aSteps);
    forLoop(k, plan.aSteps, {}, [&](Value a, ValueRange) {
      Value q = m.div(a, plan.channelBlocks);
      Value c0 = m.mul(m.rem(a, plan.channelBlocks), plan.haloChannels);
      auto [stage, phase] = patches.stageAndPhase(m.add(aDone, a));
      // The empty barrier's phase before the first release counts as done.
      waitParity(k, patches.empty(stage), m.bitXor(phase, m.constant(1)));
      expectBytes(k, patches.full(stage), patchBytes);
      tileLoad(k, patches.stage(stage), k.descA,
               {c0, w, h, m.add(d, m.mul(q, g.dilations[kDepth])), tile.n},
               patches.full(stage));
      Value firstTap = m.mul(q, plan.tapsPerAStep);
      Value stepBase = m.add(done, m.mul(a, plan.tapsPerAStep));
      forLoop(k, plan.tapsPerAStep, {}, [&](Value u, ValueRange) {
        auto [bStage, bPhase] = k.stageAndPhase(m.add(stepBase, u));
        waitParity(k, k.emptyBarrier(bStage), m.bitXor(bPhase, m.constant(1)));
        expectBytes(k, k.fullBarrier(bStage), filterBytes);
        tileLoad(
            k, filterStage(k, bStage), k.descB,
            {c0, m.add(firstTap, u), tile.n0, m.constant(0), m.constant(0)},
            k.fullBarrier(bStage));
        return SmallVector<Value>();
      });
      return SmallVector<Value>();
    });
    return m.constant(plan.totalSteps);
  });
}

void mlir::conv3d::sm90::emitHaloConsumer(SM90Kernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  const ConvGeometry &g = k.g;
  MLIRContext *ctx = b.getContext();
  KernelMath m = k.i32();
  PatchRing patches{k};
  Value consumerTid = m.sub(k.tid, m.constant(kWarpgroupThreads));
  Value group = m.div(consumerTid, kWarpgroupThreads);
  Value warp = m.rem(m.div(consumerTid, 32), 4);
  Value lane = m.rem(consumerTid, 32);
  Value isLane0 = m.cmp(arith::CmpIPredicate::eq, lane, m.constant(0));
  Value isIssuer = m.cmp(arith::CmpIPredicate::eq, consumerTid, m.constant(0));

  Type f32 = b.getF32Type();
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(plan.tileN / 2, f32));
  auto wgmmaType =
      k.inElem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  auto shape = NVVM::MMAShapeAttr::get(ctx, kWgmmaM, plan.tileN, kWgmmaK);
  int64_t rowBytes = plan.operandRowBytes;
  Value descTemplate = k.wgmmaDescriptorTemplate(rowBytes);
  // This warpgroup's output rows of the tile: mmaTilesM of them, one m64
  // wgmma each; their first tile row (64 per output row).
  Value groupOutRow = m.mul(group, plan.mmaTilesM);
  Value groupRow = m.mul(groupOutRow, kWgmmaM);
  int64_t consumerThreads = kWarpgroupThreads * plan.consumerGroups;
  auto consumerBarrier = [&] {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, m.constant(1),
                            m.constant(consumerThreads), nullptr, Value());
  };
  auto arriveIf = [&](Value cond, Value barrier) {
    ifThen(b, loc, m.andI(cond, isLane0), [&] {
      NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
    });
  };

  forEachTile(k, [&](const TileOrigin &origin, Value done, Value local) {
    HaloTile tile = haloTile(k, origin.index);
    Value aDone = m.mul(local, plan.aSteps);
    SmallVector<Value> inits(plan.mmaTilesM,
                             LLVM::ZeroOp::create(b, loc, accType).getResult());
    SmallVector<Value> accs =
        forLoop(k, plan.aSteps, inits, [&](Value a, ValueRange aAccs) {
          auto [stage, phase] = patches.stageAndPhase(m.add(aDone, a));
          waitParity(k, patches.full(stage), phase);
          Value patch = m.add(patches.stage(stage),
                              m.mul(groupOutRow, plan.haloColumns * rowBytes));
          Value stepBase = m.add(done, m.mul(a, plan.tapsPerAStep));
          return forLoop(
              k, plan.tapsPerAStep, aAccs, [&](Value u, ValueRange uAccs) {
                Value step = m.add(stepBase, u);
                auto [bStage, bPhase] = k.stageAndPhase(step);
                waitParity(k, k.fullBarrier(bStage), bPhase);
                // Tap (r, s) reads the patch r * dil_h rows and s * dil_w
                // columns further.
                Value r = m.div(u, g.window[2]);
                Value s = m.rem(u, g.window[2]);
                Value shift = m.mul(
                    m.add(m.mul(r, g.dilations[kHeight] * plan.haloColumns),
                          m.mul(s, g.dilations[kWidth])),
                    rowBytes);
                Value aBase = m.add(patch, shift);
                Value bBase = filterStage(k, bStage);
                SmallVector<Value> next(uAccs);
                NVVM::WgmmaFenceAlignedOp::create(b, loc);
                for (int64_t kk = 0; kk < plan.haloChannels / kWgmmaK; ++kk) {
                  // Each k16 slice is 32 bytes further along the rows.
                  Value descB = k.wgmmaDescriptor(
                      descTemplate, m.add(bBase, m.constant(kk * 32)));
                  for (int64_t j = 0; j < plan.mmaTilesM; ++j) {
                    Value descA = k.wgmmaDescriptor(
                        descTemplate,
                        m.add(aBase,
                              m.constant(j * plan.haloColumns * rowBytes +
                                         kk * 32)));
                    next[j] = NVVM::WgmmaMmaAsyncOp::create(
                        b, loc, accType, next[j], descA, descB, shape,
                        wgmmaType, wgmmaType, NVVM::WGMMATypes::f32,
                        NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
                        NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
                        NVVM::MMALayout::col, nullptr);
                  }
                }
                NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
                // The previous step's wgmmas are done once at most this
                // step's group is pending: its filter stage goes back to the
                // producer, and at a new A step so does the last patch.
                NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
                Value first = m.cmp(arith::CmpIPredicate::eq, u, m.constant(0));
                Value laterA =
                    m.cmp(arith::CmpIPredicate::ugt, a, m.constant(0));
                Value notFirstStep =
                    arith::OrIOp::create(
                        b, loc, laterA,
                        m.cmp(arith::CmpIPredicate::ugt, u, m.constant(0)))
                        .getResult();
                arriveIf(
                    notFirstStep,
                    k.emptyBarrier(
                        k.stageAndPhase(m.sub(step, m.constant(1))).first));
                arriveIf(m.andI(first, laterA),
                         patches.empty(patches
                                           .stageAndPhase(m.sub(m.add(aDone, a),
                                                                m.constant(1)))
                                           .first));
                return next;
              });
        });
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    // The last filter stage and patch go back too: the producer is already
    // loading the next tile while this one's epilogue runs.
    Value always = m.trueValue();
    arriveIf(always,
             k.emptyBarrier(
                 k.stageAndPhase(m.add(done, m.constant(plan.totalSteps - 1)))
                     .first));
    arriveIf(
        always,
        patches.empty(
            patches.stageAndPhase(m.add(aDone, m.constant(plan.aSteps - 1)))
                .first));
    emitTmaStoreEpilogue(k, {accs, groupRow, warp, lane},
                         ValueRange{tile.w0, tile.h0, tile.d, tile.n}, tile.n0,
                         m.constant(plan.stagingOffset), isIssuer,
                         consumerBarrier);
    return m.constant(plan.totalSteps);
  });
  emitTmaStoreDrain(k, isIssuer);
}

std::array<Value, 3> mlir::conv3d::sm90::emitHaloDescriptors(
    OpBuilder &b, Location loc, ModuleOp module, const GridKernel &kernel,
    const KernelOperands &ops, const SM90KernelPlan &plan) {
  const ConvGeometry g = kernel.geometry();
  ArrayRef<int64_t> in = ops.input.strides, out = ops.output.strides;
  int64_t taps = g.window[0] * g.window[1] * g.window[2];
  // The NDHWC input, innermost first; a box is a patch of one channel
  // block.
  Value input = emitTiled5dDescriptor(
      b, loc, module, kernel.im2col.getInput(),
      {g.channels, g.inputSize[kWidth], g.inputSize[kHeight],
       g.inputSize[kDepth], g.batch},
      {in[3], in[2], in[1], in[0]},
      {plan.haloChannels, plan.haloColumns, plan.haloRows, 1, 1},
      plan.operandRowBytes);
  // The FQRSC filter as [F][Q*R*S][C] (flattenOperands checked that its
  // (q, r, s, c) dimensions collapse); a box is tile_n filters x one tap x
  // one channel block.
  int64_t kStride = ops.filter.strides[0], fStride = ops.filter.strides[1];
  Value filter = emitTiled5dDescriptor(
      b, loc, module, kernel.filterLoad.getFilter(),
      {g.channels, taps, g.filters, 1, 1},
      {g.channels * kStride, fStride, g.filters * fStride, g.filters * fStride},
      {plan.haloChannels, 1, plan.tileN, 1, 1}, plan.operandRowBytes);
  // The NDHWF output; a box is tile_m / 64 rows of 64 columns x one store
  // box of channels (stores past an edge are clipped).
  Value output = emitTiled5dDescriptor(
      b, loc, module, kernel.store.getOutput(),
      {g.filters, g.outputSize(kWidth), g.outputSize(kHeight),
       g.outputSize(kDepth), g.batch},
      {out[3], out[2], out[1], out[0]},
      {plan.storeBoxColumns, kWgmmaM, plan.haloOutRows, 1, 1},
      plan.storeBoxColumns * 2);
  return {input, filter, output};
}
