//===- Tcgen05Kernel.cpp - the sm100 kernel body --------------------------===//
//
// The persistent, warp-specialized kernel of conv3d-lower-to-sm100 (the
// roles are described in SM100KernelPlan.h). The hand-offs:
//   full[s]      producer -> MMA: expect_tx by the producer, completed by
//                the two TMA loads (1 arrival)
//   empty[s]     MMA -> producer: tcgen05.commit after the step's MMAs
//                (1 arrival: the commit arrives once they have read the
//                stage)
//   accFull[b]   MMA -> epilogue: tcgen05.commit after the tile's last
//                step (1 arrival, once every MMA into buffer b is done)
//   accEmpty[b]  epilogue -> MMA: every epilogue thread once its
//                tcgen05.ld of buffer b completed (128 arrivals)
// A barrier's phase parity for its n-th use is (n / uses per cycle) & 1;
// the waits that release resources (empty, accEmpty) start one phase ahead,
// so their first wait passes. tcgen05 work is ordered around each
// thread-synchronizing hand-off of TMEM with tcgen05.fence: before_thread_sync
// ahead of the arrival or barrier, after_thread_sync behind the wait.
//
// cta_group::2 (a CTA pair per 256-row tile): the producers of both CTAs
// complete their loads on the even CTA's full barrier (which alone expects
// both CTAs' bytes), the even CTA's MMA warp alone issues and its commits
// arrive on both CTAs' barriers, and the epilogues of both arrive on the
// even CTA's accumulator-empty barrier (256 arrivals); cluster barriers
// stand for the CTA barriers at the start and the end.
//
// TMEM: the MMA warp allocates plan.tmemColumns columns at the start (the
// address comes back through shared memory, read by every warp after a CTA
// barrier) and relinquishes the right to allocate more; after the roles are
// done, a CTA barrier, then the same warp frees them.
//
//===----------------------------------------------------------------------===//

#include "SM100Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;

namespace {

/// The mask of the CTAs a commit arrives on: both of the pair, or none
/// (this CTA only).
Value commitMask(SM100Kernel &k) {
  if (k.plan.ctaGroup == 1)
    return Value();
  return arith::ConstantIntOp::create(k.b, k.loc, k.b.getI16Type(), 0b11);
}

/// A barrier of all threads: of the CTA, or of the CTA pair's cluster.
void barrierAll(SM100Kernel &k) {
  if (k.plan.ctaGroup == 1) {
    gpu::BarrierOp::create(k.b, k.loc);
    return;
  }
  UnitAttr aligned = k.b.getUnitAttr();
  NVVM::ClusterArriveOp::create(k.b, k.loc, aligned);
  NVVM::ClusterWaitOp::create(k.b, k.loc, aligned);
}

/// The MMA warp: per tile, wait for its accumulator buffer to be free, then
/// per K step wait for the stage, issue the 4 k16 MMAs (the first of the
/// tile overwrites the accumulator) and commit the stage back; after the
/// last step commit the accumulator to the epilogue. One elected thread
/// issues (the commits track the MMAs of the thread that issues them).
void emitMma(SM100Kernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM100KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  Value leader = NVVM::ElectSyncOp::create(b, loc, b.getI1Type(), Value());
  Type i64 = b.getI64Type();
  Value idesc = k.i32Const(plan.instructionDescriptor(k.inElem.isBF16()));
  Value descTemplate = arith::ConstantIntOp::create(
      b, loc, i64, static_cast<int64_t>(SM100KernelPlan::descriptorTemplate()));
  auto descriptor = [&](Value offset) {
    // The aligned base + offset < 256 KiB: (address >> 4) fits the 14-bit
    // field.
    Value address = m.add(k.smemBase, offset);
    Value field = arith::ExtUIOp::create(b, loc, i64, m.div(address, 16));
    return arith::OrIOp::create(b, loc, descTemplate, field).getResult();
  };
  Value trueValue = m.trueValue();
  emitMmaTileLoop(k, leader, [&](Value stage, Value t, Value accumulator) {
    ifThen(k.b, k.loc, leader, [&] {
      Value aBase = k.aStage(stage), bBase = k.bStage(stage);
      Value accumulate = m.cmp(arith::CmpIPredicate::ne, t, m.constant(0));
      for (int64_t kk = 0; kk < kChannelBlock / kMmaK; ++kk) {
        // Each k16 slice is 32 bytes further along the swizzled rows.
        Value descA = descriptor(m.add(aBase, m.constant(kk * 32)));
        Value descB = descriptor(m.add(bBase, m.constant(kk * 32)));
        NVVM::Tcgen05MMAOp::create(
            b, loc, NVVM::Tcgen05MMAKind::F16, k.ctaGroup(),
            NVVM::Tcgen05MMACollectorOp::DISCARD, /*aShift=*/false, accumulator,
            descA, descB, idesc, kk == 0 ? accumulate : trueValue, Value(),
            Value());
      }
      NVVM::Tcgen05CommitOp::create(b, loc, k.emptyBarrier(stage),
                                    commitMask(k), k.ctaGroup());
    });
  });
}

/// The words of a tcgen05.ld, read again through an empty volatile asm
/// after its tcgen05.wait::ld. LLVM sees the words as defined by the load
/// and may move register copies of them above the wait (the f32x2 packing
/// of the block-scaled epilogue's multiply did), while the PTX ISA lets
/// nothing read them before it; the asm, ordered after the wait, hands out
/// the same registers (tied operands) only there. Inline asm because no
/// NVVM op ties registers to the wait.
Value wordsAfterWait(SM100Kernel &k, Value words) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  int64_t count = cast<VectorType>(words.getType()).getNumElements();
  SmallVector<Value> inputs;
  std::string constraints;
  for (int64_t i = 0; i < count; ++i) {
    inputs.push_back(vector::ExtractOp::create(b, loc, words, i));
    constraints += "=r,";
  }
  for (int64_t i = 0; i < count; ++i)
    constraints += std::to_string(i) + (i + 1 < count ? "," : "");
  Type i32 = b.getI32Type();
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(count, i32));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, type, inputs, b.getStringAttr(""), b.getStringAttr(constraints),
      b.getUnitAttr(), UnitAttr(),
      LLVM::TailCallKindAttr::get(b.getContext(), LLVM::TailCallKind::None),
      LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> outputs;
  for (int64_t i = 0; i < count; ++i)
    outputs.push_back(
        LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
  return vector::FromElementsOp::create(b, loc, words.getType(), outputs);
}

/// The epilogue warps: per tile, wait for the accumulator, read it from
/// TMEM chunk by chunk into the staging tile (a row per thread), hand the
/// buffer back after the last read and run the shared staged epilogue.
void emitEpilogue(SM100Kernel &k, Value warp, Value lane) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM100KernelPlan &plan = k.plan;
  MLIRContext *ctx = b.getContext();
  KernelMath m = k.i32();
  Type f32 = b.getF32Type();
  // A warp reaches the TMEM lanes 32 (warp % 4) .. + 31 only; lane i holds
  // the tile's row i.
  Value laneBase = m.mul(m.rem(warp, 4), kWarpThreads);
  Value row = m.add(laneBase, lane);
  // A CTA pair: this CTA's 128 rows of the tile.
  Value rowOffset =
      k.plan.ctaGroup == 2 ? m.mul(k.ctaRank, kTmemLanes) : Value();
  Value epilogueTid =
      m.sub(k.tid, m.constant(kFirstEpilogueWarp * kWarpThreads));
  KernelMath math = k.math();
  auto toKernel = [&](Value v) {
    return k.indexType.isInteger(32)
               ? v
               : arith::IndexCastUIOp::create(b, loc, k.indexType, v)
                     .getResult();
  };
  auto epilogueBarrier = [&] {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, m.constant(kEpilogueBarrierId),
                            m.constant(kEpilogueThreads), nullptr, Value());
  };
  Value staging = memref::ViewOp::create(
      b, loc,
      MemRefType::get(
          {plan.tileM * plan.stagingStride}, f32, nullptr,
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)),
      k.dynamicSmem,
      math.toIndex(arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          m.add(k.smemShift, m.constant(plan.stagingOffset)))),
      ValueRange{});
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  auto loadType = VectorType::get({plan.loadColumns}, b.getI32Type());
  Value laneAddress = m.add(k.tmemBase, m.mul(laneBase, 1 << 16));

  forEachTile(k, [&](const TileOrigin &tile, Value, Value local) {
    auto [begin, end] = tileStepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    Value hasSteps = m.cmp(arith::CmpIPredicate::ugt, numSteps, m.constant(0));
    auto [buffer, accPhase] = k.bufferAndPhase(local);
    waitParity(k, k.accFullBarrier(buffer), accPhase);
    fence(k, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Value bufferAddress = m.add(laneAddress, m.mul(buffer, plan.tileN));
    for (int64_t c = 0; c < plan.epilogueChunks; ++c) {
      StagedTile staged{
          staging,
          plan.stagingStride,
          kTmemLanes,
          plan.chunkColumns,
          plan.outputVector,
          toKernel(epilogueTid),
          kEpilogueThreads,
          toKernel(rowOffset ? m.add(tile.m0, rowOffset) : tile.m0),
          toKernel(m.add(tile.n0, m.constant(c * plan.chunkColumns))),
          /*rowEnd=*/Value(),
          tile.split ? toKernel(tile.split) : Value()};
      // The previous pass (of this tile or the last) read the staging.
      epilogueBarrier();
      for (int64_t j = 0; j < plan.chunkColumns; j += plan.loadColumns) {
        int64_t column = c * plan.chunkColumns + j;
        Value values = NVVM::Tcgen05LdOp::create(
            b, loc, loadType, /*pack=*/false,
            NVVM::Tcgen05LdStShape::SHAPE_32X32B,
            k.tmemPtr(m.add(bufferAddress, m.constant(column))), Value());
        NVVM::Tcgen05WaitOp::create(b, loc, NVVM::Tcgen05WaitKind::LOAD);
        // Both kernels: nothing else keeps LLVM from reading the words
        // before the wait.
        values = wordsAfterWait(k, values);
        bool lastRead = c + 1 == plan.epilogueChunks &&
                        j + plan.loadColumns == plan.chunkColumns;
        if (lastRead) {
          // Every read of the buffer is done: the MMA warp may reuse it.
          fence(k, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
          Value accEmpty = k.accEmptyBarrier(buffer);
          if (plan.ctaGroup == 1) {
            NVVM::MBarrierArriveOp::create(b, loc, Type(), accEmpty, Value());
          } else {
            // The even CTA's MMA warp waits for both CTAs' epilogues.
            Value leaders =
                NVVM::MapaOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 7),
                                     accEmpty, m.constant(0));
            NVVM::MBarrierArriveOp::create(
                b, loc, Type(), leaders, Value(),
                NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CLUSTER));
          }
        }
        for (int64_t i = 0; i < plan.loadColumns; i += 2) {
          auto element = [&](int64_t index) {
            Value word = vector::ExtractOp::create(b, loc, values, index);
            Value value = arith::BitcastOp::create(b, loc, f32, word);
            // Block-scaled: the accumulator holds sum(qA sA qB sB); the
            // global scales gsA gsB multiply it once.
            if (k.accumulatorScale)
              value = arith::MulFOp::create(b, loc, value, k.accumulatorScale);
            // A tile without K steps never wrote its accumulator.
            return arith::SelectOp::create(b, loc, hasSteps, value, zero)
                .getResult();
          };
          Value first = element(i), second = element(i + 1);
          stageAccumulatorPair(math, staged, toKernel(row),
                               toKernel(m.constant(j + i)), first, second);
        }
      }
      epilogueBarrier();
      emitStagedEpilogue(math, staged, k.g, k.ops, k.mode, k.activation,
                         k.outElem);
    }
    return numSteps;
  });
}

} // namespace

void mlir::conv3d::sm100::emitMmaTileLoop(
    SM100Kernel &k, Value leader,
    function_ref<void(Value stage, Value t, Value accumulator)> step) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  KernelMath m = k.i32();
  forEachTile(k, [&](const TileOrigin &tile, Value done, Value local) {
    auto [begin, end] = tileStepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    // Not structured bindings: the commit's lambda captures the buffer.
    Value buffer, accPhase;
    std::tie(buffer, accPhase) = k.bufferAndPhase(local);
    waitParity(k, k.accEmptyBarrier(buffer),
               arith::XOrIOp::create(b, loc, accPhase, m.constant(1)));
    fence(k, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Value accumulator =
        k.tmemPtr(m.add(k.tmemBase, m.mul(buffer, k.plan.tileN)));
    auto loop =
        scf::ForOp::create(b, loc, m.constant(0), numSteps, m.constant(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      auto [stage, phase] = k.stageAndPhase(m.add(done, t));
      waitParity(k, k.fullBarrier(stage), phase);
      step(stage, t, accumulator);
    }
    // Arrives once every MMA issued so far (the tile's) is done; at once
    // for a tile without steps, whose epilogue writes zeros.
    ifThen(k.b, k.loc, leader, [&] {
      NVVM::Tcgen05CommitOp::create(b, loc, k.accFullBarrier(buffer),
                                    commitMask(k), k.ctaGroup());
    });
    return numSteps;
  });
}

void mlir::conv3d::sm100::buildSM100Kernel(SM100Kernel &k,
                                           gpu::LaunchOp launch) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM100KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  emitTmaKernelPrologue(k, launch);
  // The scale maps travel as i64 kernel arguments, as the code maps do.
  for (Value *descriptor : {&k.descAScales, &k.descBScales})
    if (*descriptor)
      *descriptor = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext()), *descriptor);
  Value isLeader;
  if (plan.ctaGroup == 2) {
    // A CTA pair per tile: the persistent loop walks clusters.
    k.ctaRank = NVVM::ClusterId::create(b, loc, b.getI32Type());
    k.blockId = m.div(k.blockId, 2);
    k.gridSize = m.div(k.gridSize, 2);
    isLeader = m.cmp(arith::CmpIPredicate::eq, k.ctaRank, m.constant(0));
  }
  Value warp = m.div(k.tid, kWarpThreads);
  Value lane = m.rem(k.tid, kWarpThreads);
  auto isWarp = [&](int64_t role) {
    return m.cmp(arith::CmpIPredicate::eq, warp, m.constant(role));
  };
  Value isThread0 = m.cmp(arith::CmpIPredicate::eq, k.tid, m.constant(0));
  ifThen(k.b, k.loc, isThread0, [&] {
    for (int64_t s = 0; s < plan.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, k.fullBarrier(m.constant(s)),
                                   m.constant(1), Value());
      NVVM::MBarrierInitOp::create(b, loc, k.emptyBarrier(m.constant(s)),
                                   m.constant(1), Value());
    }
    for (int64_t buffer = 0; buffer < plan.accumulatorBuffers; ++buffer) {
      NVVM::MBarrierInitOp::create(b, loc, k.accFullBarrier(m.constant(buffer)),
                                   m.constant(1), Value());
      NVVM::MBarrierInitOp::create(
          b, loc, k.accEmptyBarrier(m.constant(buffer)),
          m.constant(kEpilogueThreads * plan.ctaGroup), Value());
    }
    // The TMA unit and the tensor cores (the async proxy) must see the
    // initialized barriers.
    NVVM::FenceMbarrierInitOp::create(b, loc);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descA, Value(),
                             /*tensormap=*/true);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descB, Value(),
                             /*tensormap=*/true);
    for (Value descriptor : {k.descAScales, k.descBScales})
      if (descriptor)
        NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, descriptor, Value(),
                                 /*tensormap=*/true);
  });
  Value tmemSlot = k.sharedPtr(m.constant(plan.tmemSlotOffset));
  Value columns = m.constant(plan.tmemColumns);
  ifThen(k.b, k.loc, isWarp(kMmaWarp), [&] {
    NVVM::Tcgen05AllocOp::create(b, loc, tmemSlot, columns, k.ctaGroup());
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc, k.ctaGroup());
  });
  // Every barrier of the CTA (or pair) is initialized before any TMA or
  // commit may signal it.
  fence(k, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  barrierAll(k);
  fence(k, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  k.tmemBase = LLVM::LoadOp::create(b, loc, b.getI32Type(), tmemSlot);

  auto producer = scf::IfOp::create(b, loc, isWarp(kProducerWarp), true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(producer.thenBlock());
    ifThen(k.b, k.loc, isThread0, [&] {
      if (k.blockScaled)
        emitBlockScaledProducer(k);
      else
        emitTmaProducer(k);
    });
    b.setInsertionPointToStart(producer.elseBlock());
    auto mma = scf::IfOp::create(b, loc, isWarp(kMmaWarp), true);
    b.setInsertionPointToStart(mma.thenBlock());
    // The pair's odd CTA issues no MMA (the even one's cover both).
    if (k.blockScaled)
      emitBlockScaledMma(k, lane);
    else if (isLeader)
      ifThen(k.b, k.loc, isLeader, [&] { emitMma(k); });
    else
      emitMma(k);
    b.setInsertionPointToStart(mma.elseBlock());
    emitEpilogue(k, warp, lane);
  }

  // Every role is done with TMEM (the epilogue waited for its last loads):
  // the allocating warp frees it.
  // (A pair also waits for its peer: the last remote arrivals and commits
  // land in shared memory that must outlive them.)
  fence(k, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  barrierAll(k);
  ifThen(k.b, k.loc, isWarp(kMmaWarp), [&] {
    fence(k, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    NVVM::Tcgen05DeallocOp::create(b, loc, k.tmemPtr(k.tmemBase), columns,
                                   k.ctaGroup());
  });
}
