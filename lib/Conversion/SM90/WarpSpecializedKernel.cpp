//===- WarpSpecializedKernel.cpp - the sm90 kernel body
//--------------------===//
//
// The persistent, warp-specialized kernel of conv3d-lower-to-sm90 (the
// pipeline is described in LowerToSM90.cpp): thread 0 sets up the mbarrier
// ring; the producer warpgroup's first thread issues the TMA loads of every
// K step of every tile of its block (the shared producer,
// GPU/TmaKernel.h); the consumer warpgroups wait on the ring, issue the
// wgmmas, release the stages and run the staged epilogue.
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// The consumer warpgroups: per tile, the wgmma mainloop and the epilogue.
void emitConsumer(SM90Kernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  MLIRContext *ctx = b.getContext();
  KernelMath m = k.i32();
  Value consumerTid = m.sub(k.tid, m.constant(kWarpgroupThreads));
  Value group = m.div(consumerTid, kWarpgroupThreads);
  Value warp = m.rem(m.div(consumerTid, 32), 4);
  Value lane = m.rem(consumerTid, 32);
  Value isLane0 = m.cmp(arith::CmpIPredicate::eq, lane, m.constant(0));

  Type f32 = b.getF32Type();
  int64_t accsPerTile = plan.tileN / 2;
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(accsPerTile, f32));
  // This warpgroup's first A row in a stage (cooperative: its share of the
  // tile's rows; ping-pong: the whole tile is its own).
  Value groupRow =
      plan.pingPong ? m.constant(0) : m.mul(group, plan.mmaTilesM * kWgmmaM);
  Value rowBytes = m.mul(groupRow, kRowBytes);
  auto wgmmaType =
      k.inElem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  auto shape = NVVM::MMAShapeAttr::get(ctx, kWgmmaM, plan.tileN, kWgmmaK);
  Value descTemplate = k.wgmmaDescriptorTemplate();
  auto descriptor = [&](Value offset) {
    return k.wgmmaDescriptor(descTemplate, offset);
  };
  auto release = [&](Value cond, Value step) {
    auto ifOp = scf::IfOp::create(b, loc, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value empty = k.emptyBarrier(k.stageAndPhase(step).first);
    if (plan.clusterM == 1) {
      NVVM::MBarrierArriveOp::create(b, loc, Type(), empty, Value());
      return;
    }
    // Both producers of the cluster write into this block's stage (the
    // multicast filter halves): the release goes to both blocks' barriers.
    auto clusterScope =
        NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CLUSTER);
    for (int64_t rank = 0; rank < plan.clusterM; ++rank) {
      Value remote = NVVM::MapaOp::create(
          b, loc, LLVM::LLVMPointerType::get(ctx, 7), empty, m.constant(rank));
      NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                     clusterScope);
    }
  };
  // The threads that share a tile's epilogue sync on a named barrier:
  // both consumer warpgroups (id 1), or in ping-pong one (id 1 + group).
  int64_t epilogueThreads =
      kWarpgroupThreads * (plan.pingPong ? 1 : plan.consumerGroups);
  Value barrierId = plan.pingPong ? m.add(group, m.constant(1)) : m.constant(1);
  Value epilogueTid =
      plan.pingPong ? m.rem(consumerTid, kWarpgroupThreads) : consumerTid;
  auto consumerBarrier = [&] {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, barrierId,
                            m.constant(epilogueThreads), nullptr, Value());
  };
  KernelMath math = k.math();
  auto toKernel = [&](Value v) {
    return k.indexType.isInteger(32)
               ? v
               : arith::IndexCastUIOp::create(b, loc, k.indexType, v)
                     .getResult();
  };
  Value staging = memref::ViewOp::create(
      b, loc,
      MemRefType::get(
          {plan.tileM * plan.stagingStride}, f32, nullptr,
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)),
      k.dynamicSmem,
      math.toIndex(arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          m.add(m.add(k.smemShift, m.constant(plan.stagingOffset)),
                plan.pingPong ? m.mul(group, plan.stagingBytes)
                              : m.constant(0)))),
      ValueRange{});
  Value laneRow = m.div(lane, 4);
  Value laneCol = m.mul(m.rem(lane, 4), 2);
  // The thread that issues the TMA stores of the tiles it shares.
  Value isIssuer = m.cmp(arith::CmpIPredicate::eq, epilogueTid, m.constant(0));

  // NVFP4 in the tile (TileQuantization.cpp): the warpgroup quantizes the
  // rows it reads of step t + 1 while step t's wgmmas run, and its threads
  // meet on their own named barrier (kQuantBarrierBase + group) before the
  // wgmmas of a step read it. The full barrier's wait moves to the
  // quantization: every thread waits for the step it quantizes.
  bool quantizes = plan.quantBlockSize.has_value();
  Value groupTid = m.rem(consumerTid, kWarpgroupThreads);
  auto quantizeStep = [&](Value step) {
    auto [stage, phase] = k.stageAndPhase(step);
    NVVM::MBarrierTryWaitParityOp::create(b, loc, k.fullBarrier(stage), phase,
                                          m.constant(0));
    emitQuantizeStage(k, stage, groupRow, groupTid);
  };
  auto quantizedBarrier = [&] {
    NVVM::BarrierOp::create(b, loc, TypeRange{},
                            m.add(group, m.constant(kQuantBarrierBase)),
                            m.constant(kWarpgroupThreads), nullptr, Value());
  };

  forEachTile(k, [&](const TileOrigin &tile, Value done, Value local) {
    auto [begin, end] = tileStepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    // Ping-pong: this warpgroup takes every other tile; the steps of the
    // other's tiles still advance the ring position.
    OpBuilder::InsertionGuard tileGuard(b);
    if (plan.pingPong) {
      Value mine = m.cmp(arith::CmpIPredicate::eq, m.rem(local, 2), group);
      auto ifMine = scf::IfOp::create(b, loc, mine, false);
      b.setInsertionPointToStart(ifMine.thenBlock());
    }
    // Ping-pong: the mainloops alternate strictly. A warpgroup starts its
    // tile's mainloop only once the other finished the previous tile's:
    // its first full-barrier wait is then at most one ring phase ahead of
    // the barrier, which a parity wait needs to tell phases apart.
    if (plan.pingPong) {
      Value later = m.cmp(arith::CmpIPredicate::ugt, local, m.constant(0));
      auto ifLater = scf::IfOp::create(b, loc, later, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifLater.thenBlock());
      Value parity = m.bitAnd(m.div(m.sub(local, m.constant(1)), 2), 1);
      NVVM::MBarrierTryWaitParityOp::create(b, loc, k.orderBarrier(group),
                                            parity, m.constant(0));
    }
    if (quantizes)
      ifThen(b, loc, m.cmp(arith::CmpIPredicate::ugt, numSteps, m.constant(0)),
             [&] { quantizeStep(done); });
    SmallVector<Value> inits(plan.mmaTilesM,
                             LLVM::ZeroOp::create(b, loc, accType).getResult());
    auto loop = scf::ForOp::create(b, loc, m.constant(0), numSteps,
                                   m.constant(1), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      Value step = m.add(done, t);
      auto [stage, phase] = k.stageAndPhase(step);
      if (quantizes)
        quantizedBarrier();
      else
        NVVM::MBarrierTryWaitParityOp::create(b, loc, k.fullBarrier(stage),
                                              phase, m.constant(0));
      SmallVector<Value> accs(loop.getRegionIterArgs());
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      Value aBase = m.add(k.aStage(stage), rowBytes);
      Value bBase = k.bStage(stage);
      for (int64_t kk = 0; kk < kChannelBlock / kWgmmaK; ++kk) {
        // Each k16 slice is 32 bytes further along the swizzled rows.
        Value descB = descriptor(m.add(bBase, m.constant(kk * 32)));
        for (int64_t j = 0; j < plan.mmaTilesM; ++j) {
          Value descA = descriptor(
              m.add(aBase, m.constant(j * kWgmmaM * kRowBytes + kk * 32)));
          accs[j] = NVVM::WgmmaMmaAsyncOp::create(
              b, loc, accType, accs[j], descA, descB, shape, wgmmaType,
              wgmmaType, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
              NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
              NVVM::MMALayout::row, NVVM::MMALayout::col, nullptr);
        }
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      // Step t-1's wgmmas are done once at most this step's group is
      // pending: its stage goes back to the producer (one arrival per
      // consumer warp).
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      release(
          m.andI(m.cmp(arith::CmpIPredicate::ugt, t, m.constant(0)), isLane0),
          m.sub(step, m.constant(1)));
      // After the release: with 2 stages, step t + 1 lands in the stage
      // just released.
      if (quantizes)
        ifThen(b, loc, m.ult(m.add(t, m.constant(1)), numSteps),
               [&] { quantizeStep(m.add(step, m.constant(1))); });
      scf::YieldOp::create(b, loc, accs);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    if (plan.pingPong) {
      // The other warpgroup may start its mainloop (one arrival per warp).
      auto ifLane0 = scf::IfOp::create(b, loc, isLane0, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifLane0.thenBlock());
      NVVM::MBarrierArriveOp::create(
          b, loc, Type(), k.orderBarrier(m.sub(m.constant(1), group)), Value());
    }
    // The last step's stage goes back too: the producer is already loading
    // the next tile while this one's epilogue runs.
    release(m.andI(m.cmp(arith::CmpIPredicate::ugt, numSteps, m.constant(0)),
                   isLane0),
            m.sub(m.add(done, numSteps), m.constant(1)));

    Value stagingOffset =
        m.add(m.constant(plan.stagingOffset),
              plan.pingPong ? m.mul(group, plan.stagingBytes) : m.constant(0));
    if (plan.tmaStore) {
      SmallVector<Value> accs(loop.getResults());
      emitTmaStoreEpilogue(k, {accs, groupRow, warp, lane},
                           ValueRange{tile.m0, m.constant(0)}, tile.n0,
                           stagingOffset, isIssuer, consumerBarrier);
      return numSteps;
    }
    // The epilogue, one column chunk at a time through the staging tile.
    // wgmma's accumulator layout: warp w of a warpgroup owns rows
    // 16w..16w+15 of each m64 tile; per n8 column group, a lane holds
    // (lane/4, 2*(lane%4) + {0, 1}) and the same 8 rows below, as
    // mma.sync's m16n8 fragments.
    int64_t chunk = plan.tileN / plan.epilogueChunks;
    bool reduceInCluster = plan.splitCluster > 1;
    // The in-cluster reduction's rows end with the tile's own.
    Value tileRowEnd;
    if (reduceInCluster)
      tileRowEnd =
          toKernel(m.minU(tile.rowEnd ? tile.rowEnd : m.constant(k.g.gemmM()),
                          m.add(tile.m0, m.constant(plan.tileM))));
    for (int64_t c = 0; c < plan.epilogueChunks; ++c) {
      // This block's staged chunks so far (the cluster barriers' phases).
      Value iteration =
          reduceInCluster
              ? m.add(m.mul(local, plan.epilogueChunks), m.constant(c))
              : Value();
      StagedTile staged{staging,
                        plan.stagingStride,
                        plan.tileM,
                        chunk,
                        plan.outputVector,
                        toKernel(epilogueTid),
                        epilogueThreads,
                        toKernel(tile.m0),
                        toKernel(m.add(tile.n0, m.constant(c * chunk))),
                        tile.rowEnd ? toKernel(tile.rowEnd) : Value(),
                        tile.split ? toKernel(tile.split) : Value()};
      // The previous pass (of this tile or the last) read the staging;
      // with the in-cluster reduction, every block of the cluster did.
      consumerBarrier();
      if (reduceInCluster)
        emitSplitClusterStagingWait(k, iteration);
      for (int64_t j = 0; j < plan.mmaTilesM; ++j) {
        Value tileRow =
            m.add(groupRow, m.add(m.constant(j * kWgmmaM), m.mul(warp, 16)));
        Value acc = loop.getResult(j);
        for (int64_t i = 0; i < accsPerTile; i += 2) {
          int64_t column = (i / 4) * 8;
          if (column / chunk != c)
            continue;
          Value row = m.add(m.add(tileRow, laneRow), m.constant(i % 4 ? 8 : 0));
          Value col = m.add(m.constant(column - c * chunk), laneCol);
          Value first = LLVM::ExtractValueOp::create(b, loc, acc, i);
          Value second = LLVM::ExtractValueOp::create(b, loc, acc, i + 1);
          stageAccumulatorPair(math, staged, toKernel(row), toKernel(col),
                               first, second);
        }
      }
      consumerBarrier();
      if (reduceInCluster)
        staged =
            emitSplitClusterReduction(k, staged, stagingOffset, tileRowEnd,
                                      iteration, isIssuer, consumerBarrier);
      emitStagedEpilogue(math, staged, k.g, k.ops, k.mode, k.activation,
                         k.outElem);
    }
    return numSteps;
  });
  if (plan.tmaStore)
    emitTmaStoreDrain(k, isIssuer);
}

} // namespace

void mlir::conv3d::sm90::buildSM90Kernel(SM90Kernel &k, gpu::LaunchOp launch) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  emitTmaKernelPrologue(k, launch);
  // The persistent loop walks the clusters' tile pairs (cluster_m = 2) or
  // tiles (split-K reduced in the cluster).
  if (int64_t clusterSize = plan.clusterM * plan.splitCluster;
      clusterSize > 1) {
    k.ctaRank = NVVM::ClusterId::create(b, loc, b.getI32Type());
    k.blockId = m.div(k.blockId, clusterSize);
    k.gridSize = m.div(k.gridSize, clusterSize);
  }
  // The output's descriptor travels as an i64 kernel argument too.
  if (k.descC)
    k.descC = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), k.descC);

  Value isThread0 = m.cmp(arith::CmpIPredicate::eq, k.tid, m.constant(0));
  {
    auto init = scf::IfOp::create(b, loc, isThread0, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    for (int64_t s = 0; s < plan.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, k.fullBarrier(m.constant(s)),
                                   m.constant(1), Value());
      NVVM::MBarrierInitOp::create(
          b, loc, k.emptyBarrier(m.constant(s)),
          m.constant(plan.warpsPerTile * plan.clusterM), Value());
    }
    // The halo mainloop's A ring (after the B ring's barriers).
    for (int64_t s = 0; plan.halo && s < plan.aStages; ++s) {
      NVVM::MBarrierInitOp::create(
          b, loc, k.sharedPtr(m.constant(plan.aBarrierOffset + 8 * s)),
          m.constant(1), Value());
      NVVM::MBarrierInitOp::create(
          b, loc,
          k.sharedPtr(m.constant(plan.aBarrierOffset + 8 * (plan.aStages + s))),
          m.constant(plan.warpsPerTile), Value());
    }
    if (plan.pingPong)
      for (int64_t group = 0; group < 2; ++group)
        NVVM::MBarrierInitOp::create(b, loc, k.orderBarrier(m.constant(group)),
                                     m.constant(4), Value());
    // The in-cluster reduction's barriers: one arrival per block.
    if (plan.splitCluster > 1)
      for (Value barrier : {splitReadyBarrier(k), splitFreeBarrier(k)})
        NVVM::MBarrierInitOp::create(b, loc, barrier,
                                     m.constant(plan.splitCluster), Value());
    // The TMA unit (the async proxy) must see the initialized barriers.
    NVVM::FenceMbarrierInitOp::create(b, loc);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descA, Value(),
                             /*tensormap=*/true);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descB, Value(),
                             /*tensormap=*/true);
    if (k.descC)
      NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descC, Value(),
                               /*tensormap=*/true);
  }
  // In a cluster, the peer's barriers must be initialized before this
  // block's producer multicasts into them or its consumers arrive on them.
  bool clustered = plan.clusterM * plan.splitCluster > 1;
  auto barrierAll = [&] {
    if (!clustered) {
      gpu::BarrierOp::create(b, loc);
      return;
    }
    UnitAttr aligned = b.getUnitAttr();
    NVVM::ClusterArriveOp::create(b, loc, aligned);
    NVVM::ClusterWaitOp::create(b, loc, aligned);
  };
  barrierAll();

  Value isProducer =
      m.cmp(arith::CmpIPredicate::ult, k.tid, m.constant(kWarpgroupThreads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
    auto issuer = scf::IfOp::create(b, loc, isThread0, false);
    b.setInsertionPointToStart(issuer.thenBlock());
    if (plan.halo)
      emitHaloProducer(k);
    else
      emitTmaProducer(k);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.elseBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, kConsumerRegisters,
                                   NVVM::SetMaxRegisterAction::increase);
    if (plan.halo)
      emitHaloConsumer(k);
    else
      emitConsumer(k);
  }
  // A block may exit only once its peers no longer multicast into its
  // shared memory, read its staging or arrive on its barriers.
  if (clustered)
    barrierAll();
}
