//===- LowerToSM90.cpp - conv3d-lower-to-sm90 -----------------------------===//
//
// Turns each implicit-GEMM grid loop whose configuration is for the sm90
// kernel into one gpu.launch of a warp-specialized kernel (grids configured
// for the sm80 kernel, the fallback conv3d-select-config chose, go to
// lowerGridToSM80):
//
//   host:  the input's rank-5 im2col TMA descriptor and the filter's tiled
//          one (conv3dTma*Descriptor, cached device copies); no launch if
//          either was refused (the run reports the driver's message)
//   setup: thread 0 initializes a full and an empty mbarrier per stage
//   warpgroup 0 (producer, setmaxnreg down): thread 0, for each K step t
//          (one filter tap x 64 channels):
//            wait empty[t % S] (the consumers released step t - S)
//            expect the step's bytes on full[t % S]
//            TMA im2col: tile_m output positions x 64 channels of the tap
//            TMA tile:   tile_n filters x 64 channels of the tap
//   warpgroups 1..G (consumers, setmaxnreg up), for each step t:
//            wait full[t % S]; wgmma m64nNk16 x 4 over the stage;
//            commit; wait for step t-1's wgmmas; release empty[(t-1) % S]
//   epilogue (consumers): accumulators -> f32 staging tile (its own shared
//          memory: the producer is already loading the next tile) -> the
//          shared staged epilogue
// The kernel is persistent: min(multiprocessors, tiles) blocks walk the
// tiles, the ring's position carried across them. Cooperative: both
// consumer warpgroups split every tile's rows. Ping-pong: each owns every
// other tile, their mainloops alternating (order barriers), so one's
// epilogue overlaps the other's wgmmas.
//
// The K steps are (tap, channel block) pairs with q outermost, so split-K
// ranges and the active depth slices of qslice_outer are contiguous step
// ranges (buildStepRange). Channels past C in the last block are TMA's
// out-of-bounds zeros on both operands.
//
//===----------------------------------------------------------------------===//

#include "../GPU/KernelCommon.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Conversion/SM90/SM90KernelPlan.h"
#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOSM90
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// CUtensorMapDataType and CUtensorMapSwizzle values.
constexpr int64_t kTmaFloat16 = 6, kTmaBFloat16 = 9, kTmaSwizzle128B = 3;

constexpr StringLiteral kIm2colDescriptorFn = "conv3dTmaIm2colDescriptor";
constexpr StringLiteral kTiledDescriptorFn = "conv3dTmaTiledDescriptor";
constexpr StringLiteral kSMCountFn = "conv3dMultiprocessorCount";

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
  Value smemBase = {};          ///< shared address, 1024-byte aligned
  Value smemShift = {};         ///< bytes from the dynamic base to smemBase
  Value dynamicSmem = {};       ///< memref<?xi8, workgroup>
  Value descA = {}, descB = {}; ///< generic pointers to the TMA descriptors

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

/// A tile's origin: (m0, n0) and its split-K index (i32). N tiles vary
/// fastest, so the blocks working at one time share input tiles in L2.
struct TileOrigin {
  Value m0, n0, split;
};

TileOrigin tileOrigin(SM90Kernel &k, Value tile) {
  KernelMath m = k.i32();
  Value tn = m.rem(tile, k.numNT);
  Value rest = m.div(tile, k.numNT);
  Value tm = m.rem(rest, k.numMT);
  return {m.mul(tm, k.plan.tileM), m.mul(tn, k.plan.tileN),
          k.plan.splitK > 1 ? m.div(rest, k.numMT) : Value()};
}

/// The step range [begin, end) of a tile (i32).
std::pair<Value, Value> stepRange(SM90Kernel &k, const TileOrigin &tile) {
  return buildStepRange(k.i32(), k.g, tile.m0, k.plan.tileM,
                        k.plan.stepsPerSlice, k.plan.totalSteps, k.plan.kOrder,
                        k.plan.splitK, tile.split);
}

/// The persistent loop over this block's tiles, carrying the count of K
/// steps done so far (the ring position) and the block-local tile index;
/// `body` emits one tile's work and returns its step count.
void forEachTile(SM90Kernel &k,
                 function_ref<Value(const TileOrigin &, Value, Value)> body) {
  OpBuilder &b = k.b;
  KernelMath m = k.i32();
  auto loop =
      scf::ForOp::create(b, k.loc, k.blockId, m.constant(k.numTiles),
                         k.gridSize, ValueRange{m.constant(0), m.constant(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value done = loop.getRegionIterArgs()[0];
  Value local = loop.getRegionIterArgs()[1];
  Value steps = body(tileOrigin(k, loop.getInductionVar()), done, local);
  scf::YieldOp::create(
      b, k.loc, ValueRange{m.add(done, steps), m.add(local, m.constant(1))});
}

/// Thread 0 of the producer warpgroup: the TMA loads of every step of every
/// tile of this block.
void emitProducer(SM90Kernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  const ConvGeometry &g = k.g;
  KernelMath m = k.i32();
  auto i16 = [&](Value v) {
    return arith::TruncIOp::create(b, loc, b.getI16Type(), v).getResult();
  };
  forEachTile(k, [&](const TileOrigin &tile, Value done, Value) {
    auto [begin, end] = stepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    // The tile's first output position and its input corner: TMA walks
    // the rows from there (W, then H, D and the batch), zeros in the halo
    // and past the last row.
    auto pos = g.decomposeM(m, tile.m0);
    std::array<Value, 3> corner;
    for (unsigned axis = 0; axis < 3; ++axis)
      corner[axis] = m.add(m.mul(pos[axis + 1], g.strides[axis]),
                           m.constant(-g.padLow[axis]));
    auto loop =
        scf::ForOp::create(b, loc, m.constant(0), numSteps, m.constant(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    auto [stage, phase] = k.stageAndPhase(m.add(done, t));
    // The empty barrier's phase before the first release counts as done.
    NVVM::MBarrierTryWaitParityOp::create(
        b, loc, k.emptyBarrier(stage),
        arith::XOrIOp::create(b, loc, phase, m.constant(1)), m.constant(0));
    Value full = k.fullBarrier(stage);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), full, m.constant(plan.stepBytes),
        NVVM::MemScopeKind::CTA, false, Value());
    Value step = m.add(begin, t);
    Value tap = m.div(step, plan.channelBlocks);
    Value c0 = m.mul(m.rem(step, plan.channelBlocks), kChannelBlock);
    auto qrs = delinearize<KernelMath, 3>(
        m, tap, {g.window[0], g.window[1], g.window[2]});
    // Coordinates and im2col offsets list the innermost dimension first.
    SmallVector<Value> aCoords = {c0, corner[kWidth], corner[kHeight],
                                  corner[kDepth], pos[0]};
    SmallVector<Value> offsets = {i16(m.mul(qrs[2], g.dilations[kWidth])),
                                  i16(m.mul(qrs[1], g.dilations[kHeight])),
                                  i16(m.mul(qrs[0], g.dilations[kDepth]))};
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, k.clusterPtr(k.aStage(stage)), k.descA, aCoords, full, offsets,
        Value(), Value(), NVVM::TMALoadMode::IM2COL, false, nullptr, Value());
    SmallVector<Value> bCoords = {c0, tap, tile.n0};
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, k.clusterPtr(k.bStage(stage)), k.descB, bCoords, full,
        ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE, false, nullptr,
        Value());
    return numSteps;
  });
}

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
  Value descTemplate = arith::ConstantIntOp::create(
      b, loc, b.getI64Type(),
      static_cast<int64_t>(SM90KernelPlan::descriptorTemplate()));
  auto descriptor = [&](Value offset) {
    // The aligned base + offset < 256 KiB: (address >> 4) fits the 14-bit
    // field.
    Value address = m.add(k.smemBase, offset);
    Value field =
        arith::ExtUIOp::create(b, loc, b.getI64Type(), m.div(address, 16));
    return arith::OrIOp::create(b, loc, descTemplate, field).getResult();
  };
  auto release = [&](Value cond, Value step) {
    auto ifOp = scf::IfOp::create(b, loc, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::MBarrierArriveOp::create(
        b, loc, Type(), k.emptyBarrier(k.stageAndPhase(step).first), Value());
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
               : arith::ExtUIOp::create(b, loc, k.indexType, v).getResult();
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

  forEachTile(k, [&](const TileOrigin &tile, Value done, Value local) {
    auto [begin, end] = stepRange(k, tile);
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
      NVVM::MBarrierTryWaitParityOp::create(b, loc, k.fullBarrier(stage), phase,
                                            m.constant(0));
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

    // The epilogue, one column chunk at a time through the staging tile.
    // wgmma's accumulator layout: warp w of a warpgroup owns rows
    // 16w..16w+15 of each m64 tile; per n8 column group, a lane holds
    // (lane/4, 2*(lane%4) + {0, 1}) and the same 8 rows below, as
    // mma.sync's m16n8 fragments.
    int64_t chunk = plan.tileN / plan.epilogueChunks;
    for (int64_t c = 0; c < plan.epilogueChunks; ++c) {
      StagedTile staged{staging,
                        plan.stagingStride,
                        plan.tileM,
                        chunk,
                        plan.outputVector,
                        toKernel(epilogueTid),
                        epilogueThreads,
                        toKernel(tile.m0),
                        toKernel(m.add(tile.n0, m.constant(c * chunk)))};
      // The previous pass (of this tile or the last) read the staging.
      consumerBarrier();
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
      emitStagedEpilogue(math, staged, k.g, k.ops, k.mode, k.activation,
                         k.outElem);
    }
    return numSteps;
  });
}

void buildKernel(SM90Kernel &k, gpu::LaunchOp launch) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  MLIRContext *ctx = b.getContext();
  KernelMath m = k.i32();
  auto toI32 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index)
        .getResult();
  };
  k.tid = toI32(launch.getThreadIds().x);
  k.blockId = toI32(launch.getBlockIds().x);
  k.gridSize = toI32(launch.getGridSize().x);

  // The ring's base, aligned to 1024 bytes (the 128-byte swizzle's atom).
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  k.dynamicSmem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      workgroup));
  Value raw = toI32(
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, k.dynamicSmem));
  Value aligned =
      arith::AndIOp::create(b, loc, m.add(raw, m.constant(kAlignmentSlack - 1)),
                            m.constant(~(kAlignmentSlack - 1)));
  k.smemBase = aligned;
  k.smemShift = m.sub(aligned, raw);

  // Descriptors travel as i64 kernel arguments.
  Type genericPtr = LLVM::LLVMPointerType::get(ctx);
  k.descA = LLVM::IntToPtrOp::create(b, loc, genericPtr, k.descA);
  k.descB = LLVM::IntToPtrOp::create(b, loc, genericPtr, k.descB);

  Value isThread0 = m.cmp(arith::CmpIPredicate::eq, k.tid, m.constant(0));
  {
    auto init = scf::IfOp::create(b, loc, isThread0, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    for (int64_t s = 0; s < plan.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, k.fullBarrier(m.constant(s)),
                                   m.constant(1), Value());
      NVVM::MBarrierInitOp::create(b, loc, k.emptyBarrier(m.constant(s)),
                                   m.constant(plan.warpsPerTile), Value());
    }
    if (plan.pingPong)
      for (int64_t group = 0; group < 2; ++group)
        NVVM::MBarrierInitOp::create(b, loc, k.orderBarrier(m.constant(group)),
                                     m.constant(4), Value());
    // The TMA unit (the async proxy) must see the initialized barriers.
    NVVM::FenceMbarrierInitOp::create(b, loc);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descA, Value(),
                             /*tensormap=*/true);
    NVVM::PrefetchOp::create(b, loc, nullptr, nullptr, k.descB, Value(),
                             /*tensormap=*/true);
  }
  gpu::BarrierOp::create(b, loc);

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
    emitProducer(k);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.elseBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, kConsumerRegisters,
                                   NVVM::SetMaxRegisterAction::increase);
    emitConsumer(k);
  }
}

/// Declares `name` as an external function of `module` (i64 arguments and
/// result; the runtime's wrappers) unless it exists.
func::FuncOp declareDescriptorFunction(ModuleOp module, StringRef name,
                                       int64_t numArgs) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = b.getI64Type();
  auto fn = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType(SmallVector<Type>(numArgs, i64), {i64}));
  fn.setPrivate();
  return fn;
}

/// The device address of a memref's first element (its offset applied), as
/// i64.
Value baseAddress(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  int64_t bytes =
      getElementTypeOrSelf(memref.getType()).getIntOrFloatBitWidth() / 8;
  Value offset = arith::MulIOp::create(
      b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value address = arith::AddIOp::create(b, loc, base, offset);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

} // namespace

LogicalResult mlir::conv3d::lowerGridToSM90(RewriterBase &rewriter,
                                            scf::ForallOp grid) {
  FailureOr<GridKernel> found = analyzeGrid(grid);
  if (failed(found))
    return grid.emitError("conv3d-lower-to-sm90: not an implicit-GEMM grid "
                          "loop produced by conv3d-implicit-gemm");
  GridKernel &kernel = *found;
  IGemmConfigAttr config = kernel.config;
  // conv3d-select-config gave convolutions the sm90 kernel cannot take an
  // sm80 configuration.
  if (config.getKernel() == Target::sm80)
    return lowerGridToSM80(rewriter, grid);
  if (config.getKernel() == Target::sm100)
    return grid.emitError()
           << "conv3d-lower-to-sm90: " << config << " is for the sm100 kernel";
  if (failed(checkGpuOperands(kernel, "sm90")))
    return failure();
  ConvGeometry g = kernel.geometry();
  Type inElem = kernel.inputElementType();
  Location loc = grid.getLoc();
  bool quantizes = kernel.im2col.getQuant().has_value();
  Value input = kernel.im2col.getInput(),
        filter = kernel.filterLoad.getFilter();
  std::optional<std::string> problem =
      getSM90KernelProblem(g, kernel.filterLayout(), inElem, quantizes);
  // TMA reads from 16-byte-aligned addresses with 16-byte strides.
  if (!problem && (elementAlignment(input) < 8 || elementAlignment(filter) < 8))
    problem = "TMA needs the input's and the filter's offsets and strides "
              "in multiples of 16 bytes";
  if (problem)
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;

  int64_t epilogueAlignment =
      std::min({elementAlignment(kernel.store.getOutput()),
                elementAlignment(kernel.store.getResidual()),
                elementAlignment(kernel.store.getBias())});
  SM90KernelPlan plan;
  if (std::optional<std::string> problem = SM90KernelPlan::build(
          g, config.getTileM(), config.getTileN(), config.getTileK(),
          config.getStages(), config.getWarpsM(), config.getWarpsN(),
          config.getKOrder(), config.getSplitK(), epilogueAlignment, plan,
          config.getSchedule()))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  FailureOr<KernelOperands> flat = flattenOperands(rewriter, loc, kernel);
  if (failed(flat))
    return grid.emitError("sm90 needs operands with static strides");
  KernelOperands &ops = *flat;
  bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, kChannelBlock);

  int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  int64_t numTiles = numMT * numNT * plan.splitK;
  // Tile indices and rows are i32 in the kernel.
  if (numTiles >= (int64_t(1) << 31) ||
      g.gemmM() + plan.tileM >= (int64_t(1) << 31))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << numTiles
           << " tiles or M = " << g.gemmM() << " do not fit 31 bits";

  // Host: the two descriptors (device copies, cached by the runtime).
  ModuleOp module = grid->getParentOfType<ModuleOp>();
  if (!module)
    return grid.emitError("conv3d-lower-to-sm90 needs an enclosing module "
                          "(for the descriptor functions)");
  func::FuncOp im2colFn =
      declareDescriptorFunction(module, kIm2colDescriptorFn, 23);
  func::FuncOp tiledFn =
      declareDescriptorFunction(module, kTiledDescriptorFn, 11);
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), v)
        .getResult();
  };
  int64_t dataType = inElem.isBF16() ? kTmaBFloat16 : kTmaFloat16;
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  SmallVector<Value> im2colArgs = {baseAddress(rewriter, loc, input),
                                   i64(dataType),
                                   i64(g.batch),
                                   i64(g.inputSize[0]),
                                   i64(g.inputSize[1]),
                                   i64(g.inputSize[2]),
                                   i64(g.channels),
                                   i64(ops.input.strides[0]),
                                   i64(ops.input.strides[1]),
                                   i64(ops.input.strides[2]),
                                   i64(ops.input.strides[3]),
                                   i64(lower[0]),
                                   i64(lower[1]),
                                   i64(lower[2]),
                                   i64(upper[0]),
                                   i64(upper[1]),
                                   i64(upper[2]),
                                   i64(g.strides[0]),
                                   i64(g.strides[1]),
                                   i64(g.strides[2]),
                                   i64(kChannelBlock),
                                   i64(plan.tileM),
                                   i64(kTmaSwizzle128B)};
  Value descA =
      func::CallOp::create(rewriter, loc, im2colFn, im2colArgs).getResult(0);
  // The FQRSC filter as an [F][Q*R*S][C] tensor (its (q, r, s, c)
  // dimensions collapse: flattenOperands checked it); a box is tile_n
  // filters x one tap x 64 channels.
  SmallVector<Value> tiledArgs = {baseAddress(rewriter, loc, filter),
                                  i64(dataType),
                                  i64(g.channels),
                                  i64(plan.taps),
                                  i64(g.filters),
                                  i64(g.channels * ops.filter.strides[0]),
                                  i64(ops.filter.strides[1]),
                                  i64(kChannelBlock),
                                  i64(1),
                                  i64(plan.tileN),
                                  i64(kTmaSwizzle128B)};
  Value descB =
      func::CallOp::create(rewriter, loc, tiledFn, tiledArgs).getResult(0);
  Value zero = i64(0);
  Value ready = arith::AndIOp::create(
      rewriter, loc,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, descA,
                            zero),
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, descB,
                            zero));
  auto launchIf = scf::IfOp::create(rewriter, loc, ready, false);
  rewriter.setInsertionPointToStart(launchIf.thenBlock());

  // Persistent: one block per multiprocessor (the device's count, from the
  // runtime), or one per tile when there are fewer.
  func::FuncOp smCountFn = declareDescriptorFunction(module, kSMCountFn, 0);
  Value smCount = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      func::CallOp::create(rewriter, loc, smCountFn, ValueRange{})
          .getResult(0));
  Value blocks = arith::MinUIOp::create(
      rewriter, loc, smCount,
      arith::ConstantIndexOp::create(rewriter, loc, numTiles));
  createKernelLaunch(rewriter, loc, blocks, plan.threads, plan.sharedBytes,
                     [&](gpu::LaunchOp launch) {
                       Type indexType = narrowIndices
                                            ? Type(rewriter.getI32Type())
                                            : Type(rewriter.getIndexType());
                       SM90Kernel k{rewriter,
                                    loc,
                                    plan,
                                    g,
                                    inElem,
                                    kernel.outputElementType(),
                                    ops,
                                    kernel.store.getMode(),
                                    kernel.store.getActivation(),
                                    indexType};
                       k.descA = descA;
                       k.descB = descB;
                       k.numMT = numMT;
                       k.numNT = numNT;
                       k.numTiles = numTiles;
                       buildKernel(k, launch);
                     });
  rewriter.eraseOp(grid);
  return success();
}

namespace {
struct LowerToSM90Pass
    : mlir::conv3d::impl::Conv3dLowerToSM90Base<LowerToSM90Pass> {
  void runOnOperation() override {
    if (failed(lowerConfiguredGrids(getOperation(), lowerGridToSM90)))
      signalPassFailure();
  }
};
} // namespace
