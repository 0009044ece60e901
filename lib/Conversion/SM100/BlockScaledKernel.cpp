//===- BlockScaledKernel.cpp - the real-NVFP4 sm100 mainloop --------------===//
//
// The producer and the MMA warp of the block-scaled sm100 kernel
// (tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16); the setup,
// the TMEM allocation, the barriers and the epilogue are the kind::f16
// kernel's (Tcgen05Kernel.cpp), with the epilogue multiplying by the global
// scales. The layouts are SM100BlockScaledPlan.h's and the TMA maps
// SM100BlockScaledTma.h's; the schedule model (SM100ScheduleModelTest.cpp)
// replays both. Per K step (one filter tap x 256 channels):
//
//   producer   expect_tx of the four boxes' bytes on full[s], then the
//              im2col loads of the activation's codes and scales and the
//              tiled loads of the filter's codes and scales into stage s;
//   MMA warp   wait full[s]; every lane reads its scale rows (rows lane +
//              32 i, 16 bytes each, of the A and B scale areas) into
//              registers, bar.warp.sync, writes each row's word of MMA kk
//              to its place in MMA kk's atom (scaleWordAtomOffset: every
//              word read before any is written, so in place),
//              fence.proxy.async (tcgen05.cp reads through the async
//              proxy) and bar.warp.sync; then the elected thread copies
//              each MMA's atoms to TMEM (tcgen05.cp 32x128b.warpx4), issues
//              the four K = 64 MMAs and commits stage s back to the
//              producer.
//
// The scale columns of TMEM are rewritten every step while the previous
// step's MMAs may still read them. This relies on the PTX ISA's ordering of
// tcgen05.cp and tcgen05.mma issued by one thread (they execute in issue
// order, the "pipelined" pairs of the tcgen05 memory consistency section);
// NVIDIA's CuTe DSL block-scaled GEMMs do the same (one TMEM region for the
// scale factors, copied from the stage before each k-block's MMAs).
// No sm_100 GPU has run this code: it is generated and assembled only.
//
// All of it is MLIR 22 NVVM ops (nvvm.tcgen05.cp, nvvm.tcgen05.mma
// .block_scale, nvvm.tcgen05.commit, nvvm.fence.proxy, nvvm.bar.warp.sync,
// the TMA and mbarrier ops); no inline PTX.
//
//===----------------------------------------------------------------------===//

#include "SM100Kernel.h"

#include "conv3d/Target/SM100/SM100BlockScaledTma.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

namespace {

/// The i32 shared offset of `stage`'s area of `bytes` a stage from
/// `offset0` (stage 0's).
Value stageArea(SM100Kernel &k, int64_t offset0, int64_t bytes, Value stage) {
  KernelMath m = k.i32();
  return m.add(m.constant(offset0), m.mul(stage, bytes));
}

Value aScaleArea(SM100Kernel &k, Value stage) {
  return stageArea(k, k.blockScaled->aScalesOffset(0),
                   k.blockScaled->aScaleStageBytes, stage);
}

Value bScaleArea(SM100Kernel &k, Value stage) {
  return stageArea(k, k.blockScaled->bScalesOffset(0),
                   k.blockScaled->bScaleStageBytes, stage);
}

/// The scale rows of a stage's area at `area` (i32 offset) for a tile of
/// `rows` GEMM rows, as this lane holds them: rows lane + 32 i. Lanes past
/// the tile's rows (rows not a multiple of 32, e.g. tile_n = 16) read the
/// tile's last row, not bytes the TMA box never wrote, and later write it
/// to the atoms' unused lanes, inside the area (32 ceil(rows / 32) natural
/// rows fit ceil(rows / 128) atoms of every MMA), which the MMA never reads.
SmallVector<Value> readScaleRows(SM100Kernel &k, Value lane, Value area,
                                 int64_t rows) {
  KernelMath m = k.i32();
  auto rowType = VectorType::get({4}, k.b.getI32Type());
  SmallVector<Value> words;
  for (int64_t i = 0; i < ceilDiv(rows, kAtomLanes); ++i) {
    Value row = m.add(lane, m.constant(i * kAtomLanes));
    if ((i + 1) * kAtomLanes > rows)
      row = arith::MinUIOp::create(k.b, k.loc, row, m.constant(rows - 1));
    Value address = k.sharedPtr(m.add(area, m.mul(row, kAtomRowBytes)));
    words.push_back(LLVM::LoadOp::create(k.b, k.loc, rowType, address,
                                         /*alignment=*/kAtomRowBytes));
  }
  return words;
}

/// Writes the rows `readScaleRows` returned into the atoms of each MMA:
/// word kk of row r to BlockScaledPlan::scaleWordAtomOffset(r, kk, rows).
/// With r = lane + 32 i that is (kk * atoms + i / 4) * 512 + lane * 16 +
/// (i % 4) * 4.
void writeScaleAtoms(SM100Kernel &k, Value lane, Value area, int64_t rows,
                     ArrayRef<Value> rowWords) {
  KernelMath m = k.i32();
  Value laneOffset = m.add(area, m.mul(lane, kAtomRowBytes));
  for (auto [i, words] : llvm::enumerate(rowWords)) {
    for (int64_t kk = 0; kk < kMmasPerStep; ++kk) {
      // Row lane + 32 i's word lies lane * 16 bytes past row 32 i's.
      int64_t offset = BlockScaledPlan::scaleWordAtomOffset(
          int64_t(i) * kAtomLanes, kk, rows);
      Value word = vector::ExtractOp::create(k.b, k.loc, words, kk);
      LLVM::StoreOp::create(k.b, k.loc, word,
                            k.sharedPtr(m.add(laneOffset, m.constant(offset))),
                            /*alignment=*/4);
    }
  }
}

} // namespace

void mlir::conv3d::sm100::emitBlockScaledProducer(SM100Kernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const BlockScaledPlan &bs = *k.blockScaled;
  const SM100KernelPlan &plan = k.plan;
  const ConvGeometry &g = k.g;
  KernelMath m = k.i32();
  auto i16 = [&](Value v) {
    return arith::TruncIOp::create(b, loc, b.getI16Type(), v).getResult();
  };
  forEachTile(k, [&](const TileOrigin &tile, Value done, Value) {
    auto [begin, end] = tileStepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    // The tile's first output position: TMA walks its rows from there.
    auto pos = g.decomposeM(m, tile.m0);
    auto loop =
        scf::ForOp::create(b, loc, m.constant(0), numSteps, m.constant(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    auto [stage, phase] = k.stageAndPhase(m.add(done, t));
    // The empty barrier's phase before the first release counts as done.
    waitParity(k, k.emptyBarrier(stage),
               arith::XOrIOp::create(b, loc, phase, m.constant(1)));
    Value full = k.fullBarrier(stage);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), full, m.constant(plan.stepBytes),
        NVVM::MemScopeKind::CTA, false, Value());
    Value step = m.add(begin, t);
    Value tap = m.div(step, bs.channelBlocks);
    Value block = m.rem(step, bs.channelBlocks);
    auto qrs = delinearize<KernelMath, 3>(
        m, tap, {g.window[0], g.window[1], g.window[2]});
    auto loadCoords = g.tmaIm2colLoadCoords(m, TmaIm2colForm::volume, pos,
                                            {qrs[0], qrs[1], qrs[2]}, 0);
    const auto &coords = loadCoords.first;
    const auto &tapOffsets = loadCoords.second;
    SmallVector<Value> offsets;
    for (Value offset : ArrayRef(tapOffsets).take_front(3))
      offsets.push_back(i16(offset));
    // Dimension 0 is bytes: 128 of codes and 16 of scales a channel block.
    Value codesColumn = m.mul(block, BlockScaledTmaPlan::codesColumn(1));
    Value scalesColumn = m.mul(block, BlockScaledTmaPlan::scalesColumn(1));
    auto im2col = [&](Value descriptor, Value column, Value destination) {
      SmallVector<Value> at = {column};
      at.append(coords.begin(), coords.begin() + 4);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, k.clusterPtr(destination), descriptor, at, full, offsets,
          Value(), Value(), NVVM::TMALoadMode::IM2COL, false,
          NVVM::CTAGroupKindAttr(), Value());
    };
    auto tiled = [&](Value descriptor, Value column, Value destination) {
      SmallVector<Value> at = {column, tap, tile.n0};
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, k.clusterPtr(destination), descriptor, at, full, ValueRange{},
          Value(), Value(), NVVM::TMALoadMode::TILE, false,
          NVVM::CTAGroupKindAttr(), Value());
    };
    im2col(k.descA, codesColumn, k.aStage(stage));
    im2col(k.descAScales, scalesColumn, aScaleArea(k, stage));
    tiled(k.descB, codesColumn, k.bStage(stage));
    tiled(k.descBScales, scalesColumn, bScaleArea(k, stage));
    return numSteps;
  });
}

void mlir::conv3d::sm100::emitBlockScaledMma(SM100Kernel &k, Value lane) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  MLIRContext *ctx = b.getContext();
  const BlockScaledPlan &bs = *k.blockScaled;
  KernelMath m = k.i32();
  Type i64 = b.getI64Type();
  Value leader = NVVM::ElectSyncOp::create(b, loc, b.getI1Type(), Value());
  Value idesc = k.i32Const(bs.instructionDescriptor());
  // The descriptors' address-independent bits; the kernel ORs in
  // address >> 4 (the aligned base + offset < 256 KiB fits 14 bits).
  auto descriptorFrom = [&](uint64_t bits) {
    Value constant =
        arith::ConstantIntOp::create(b, loc, i64, static_cast<int64_t>(bits));
    return [&, constant](Value offset) {
      Value address = m.add(k.smemBase, offset);
      Value field = arith::ExtUIOp::create(b, loc, i64, m.div(address, 16));
      return arith::OrIOp::create(b, loc, constant, field).getResult();
    };
  };
  auto codesDescriptor = descriptorFrom(SM100KernelPlan::descriptorTemplate());
  auto atomDescriptor = descriptorFrom(BlockScaledPlan::scaleAtomDescriptor(0));
  Value allLanes = m.constant(-1);
  Value trueValue = m.trueValue();
  auto tmemColumn = [&](int64_t column) {
    return k.tmemPtr(m.add(k.tmemBase, m.constant(column)));
  };
  int64_t bAtoms = ceilDiv(bs.tileN, kAtomRows);

  // cta_group::1: the commits take no multicast mask.
  emitMmaTileLoop(k, leader, [&](Value stage, Value t, Value accumulator) {
    // The natural scale rows the TMA boxes delivered into the atoms
    // tcgen05.cp reads, by the whole warp.
    Value aArea = aScaleArea(k, stage), bArea = bScaleArea(k, stage);
    SmallVector<Value> aRows = readScaleRows(k, lane, aArea, bs.tileM);
    SmallVector<Value> bRows = readScaleRows(k, lane, bArea, bs.tileN);
    NVVM::SyncWarpOp::create(b, loc, allLanes);
    writeScaleAtoms(k, lane, aArea, bs.tileM, aRows);
    writeScaleAtoms(k, lane, bArea, bs.tileN, bRows);
    // tcgen05.cp reads shared memory through the async proxy.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    NVVM::SyncWarpOp::create(b, loc, allLanes);
    ifThen(k.b, k.loc, leader, [&] {
      auto copyAtom = [&](int64_t column, Value atom) {
        NVVM::Tcgen05CpOp::create(
            b, loc,
            NVVM::Tcgen05CpShapeAttr::get(ctx,
                                          NVVM::Tcgen05CpShape::SHAPE_32x128b),
            NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1),
            NVVM::Tcgen05CpMulticastAttr::get(ctx,
                                              NVVM::Tcgen05CpMulticast::WARPX4),
            NVVM::Tcgen05CpSrcFormatAttr(), tmemColumn(column),
            atomDescriptor(atom));
      };
      for (int64_t kk = 0; kk < kMmasPerStep; ++kk) {
        copyAtom(bs.aScaleTmemColumn(kk),
                 m.add(aArea, m.constant(BlockScaledPlan::scaleAtomBase(
                                  kk, 0, ceilDiv(bs.tileM, kAtomRows)))));
        for (int64_t a = 0; a < bAtoms; ++a)
          copyAtom(bs.bScaleTmemColumn(kk) + 4 * a,
                   m.add(bArea, m.constant(BlockScaledPlan::scaleAtomBase(
                                    kk, a, bAtoms))));
      }
      Value aBase = k.aStage(stage), bBase = k.bStage(stage);
      Value accumulate = m.cmp(arith::CmpIPredicate::ne, t, m.constant(0));
      for (int64_t kk = 0; kk < kMmasPerStep; ++kk) {
        // MMA kk reads the 32 bytes (64 FP4 codes) at +32 kk of the
        // swizzled rows, as kind::f16's k16 slices do.
        NVVM::Tcgen05MMABlockScaleOp::create(
            b, loc, NVVM::MMABlockScaleKind::MXF4NVF4,
            NVVM::CTAGroupKind::CTA_1, NVVM::Tcgen05MMABlockScale::BLOCK16,
            NVVM::Tcgen05MMACollectorOp::DISCARD, accumulator,
            codesDescriptor(m.add(aBase, m.constant(kk * kMmaBytes))),
            codesDescriptor(m.add(bBase, m.constant(kk * kMmaBytes))), idesc,
            kk == 0 ? accumulate : trueValue,
            tmemColumn(bs.aScaleTmemColumn(kk)),
            tmemColumn(bs.bScaleTmemColumn(kk)));
      }
      NVVM::Tcgen05CommitOp::create(b, loc, k.emptyBarrier(stage), Value(),
                                    k.ctaGroup());
    });
  });
}
