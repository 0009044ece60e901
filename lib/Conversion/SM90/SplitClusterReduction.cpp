//===- SplitClusterReduction.cpp - split-K reduced inside a cluster -------===//
//
// Split-K without a workspace (SM90KernelPlan::splitCluster): the split_k
// blocks of a thread-block cluster compute one output tile, block r taking
// the K steps of split r. Their partial sums meet in distributed shared
// memory instead of in global memory, per staged column chunk:
//
//   every block   stages its f32 partial sums (the epilogue's staging tile)
//                 and arrives on every block's `ready` mbarrier (release,
//                 cluster scope), then waits on its own
//   block r       reads rows [r*R, r*R + R) of every block's staging, in
//                 split order 0, 1, ..., S-1, adds them, and writes the sums
//                 into those rows of its own staging (no other block reads
//                 them: block p reads only rows p*R...)
//   every block   arrives on every block's `free` mbarrier once its reads
//                 are done, and applies the epilogue to its R rows (the
//                 shared staged epilogue); before it stages the next chunk,
//                 it waits on its own `free` barrier
//
// The sums are ((p0 + p1) + p2) + ... in split order, as conv3d.epilogue adds
// the workspace slabs of the unfused form, so both give the same bits, and
// the result does not depend on which block finishes first. The splits of a
// small-M convolution fill the machine without a second kernel, a zeroed or
// written workspace, or atomics (issue 21).
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

Value mlir::conv3d::sm90::splitReadyBarrier(SM90Kernel &k) {
  return k.sharedPtr(k.i32Const(k.plan.splitBarrierOffset));
}

Value mlir::conv3d::sm90::splitFreeBarrier(SM90Kernel &k) {
  return k.sharedPtr(k.i32Const(k.plan.splitBarrierOffset + 8));
}

/// One arrival on `barrier` of every block of the cluster (release at
/// cluster scope: the staging writes or reads before it, ordered by the
/// consumers' barrier, are visible to whoever sees the phase complete).
static void arriveOnEveryBlock(SM90Kernel &k, Value barrier) {
  OpBuilder &b = k.b;
  MLIRContext *ctx = b.getContext();
  auto clusterScope =
      NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CLUSTER);
  for (int64_t rank = 0; rank < k.plan.splitCluster; ++rank) {
    Value remote =
        NVVM::MapaOp::create(b, k.loc, LLVM::LLVMPointerType::get(ctx, 7),
                             barrier, k.i32Const(rank));
    NVVM::MBarrierArriveOp::create(b, k.loc, Type(), remote, Value(),
                                   clusterScope);
  }
}

/// Waits for phase parity `parity` of this block's `barrier`, then fences
/// at cluster scope, so that what the other blocks wrote or read before
/// their arrivals is ordered before what this thread does next.
static void waitForCluster(SM90Kernel &k, Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(k.b, k.loc, barrier, parity,
                                        k.i32Const(0));
  NVVM::FenceScClusterOp::create(k.b, k.loc);
}

void mlir::conv3d::sm90::emitSplitClusterStagingWait(SM90Kernel &k,
                                                     Value iteration) {
  KernelMath m = k.i32();
  ifThen(k.b, k.loc, m.cmp(arith::CmpIPredicate::ugt, iteration, m.constant(0)),
         [&] {
           Value previous = m.bitAnd(m.sub(iteration, m.constant(1)), 1);
           waitForCluster(k, splitFreeBarrier(k), previous);
         });
}

StagedTile mlir::conv3d::sm90::emitSplitClusterReduction(
    SM90Kernel &k, const StagedTile &staged, Value stagingOffset,
    Value tileRowEnd, Value iteration, Value isIssuer,
    function_ref<void()> barrier) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  MLIRContext *ctx = b.getContext();
  const SM90KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  KernelMath math = k.math();

  // Every block's chunk is staged once all have arrived.
  ifThen(b, loc, isIssuer,
         [&] { arriveOnEveryBlock(k, splitReadyBarrier(k)); });
  waitForCluster(k, splitReadyBarrier(k), m.bitAnd(iteration, 1));

  // This block's rows of the tile: [rowBegin, rowBegin + rows), the last
  // block's share cut at the tile's end.
  int64_t rowsPerBlock = plan.splitRowsPerBlock;
  Value rowBegin = m.mul(k.ctaRank, rowsPerBlock);
  Value inTile = m.ult(rowBegin, m.constant(plan.tileM));
  Value rows = m.select(
      inTile,
      m.minU(m.constant(rowsPerBlock), m.sub(m.constant(plan.tileM), rowBegin)),
      m.constant(0));

  // Four floats (16 bytes) a thread at a time: the staging's rows are
  // chunk + 4 floats, chunk a multiple of 8.
  constexpr int64_t kVector = 4;
  int64_t perRow = staged.tileN / kVector;
  Value base =
      m.add(stagingOffset, m.mul(m.mul(rowBegin, staged.stagingStride), 4));
  auto vectorType = VectorType::get({kVector}, b.getF32Type());
  auto remoteType = LLVM::LLVMPointerType::get(ctx, 7);
  // The consumer threads of this block share the work; the staged tile's
  // thread index and count are theirs.
  Value tid = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                           math.toIndex(staged.tid));
  auto loop = scf::ForOp::create(b, loc, tid, m.mul(rows, perRow),
                                 m.constant(staged.threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value u = loop.getInductionVar();
    Value row = m.div(u, perRow);
    Value col = m.mul(m.rem(u, perRow), kVector);
    Value offset =
        m.add(base, m.mul(m.add(m.mul(row, staged.stagingStride), col), 4));
    Value local = k.sharedPtr(offset);
    Value sum;
    for (int64_t split = 0; split < plan.splitCluster; ++split) {
      Value remote =
          NVVM::MapaOp::create(b, loc, remoteType, local, k.i32Const(split));
      Value part = LLVM::LoadOp::create(b, loc, vectorType, remote, 16);
      sum = sum ? arith::AddFOp::create(b, loc, sum, part).getResult() : part;
    }
    LLVM::StoreOp::create(b, loc, sum, local, 16);
  }
  // The other blocks may overwrite their staging once every block has read
  // it; this block's sums are in its own staging, read by its epilogue.
  barrier();
  ifThen(b, loc, isIssuer, [&] { arriveOnEveryBlock(k, splitFreeBarrier(k)); });

  StagedTile mine = staged;
  mine.staging = memref::ViewOp::create(
      b, loc,
      MemRefType::get(
          {rowsPerBlock * staged.stagingStride}, b.getF32Type(), nullptr,
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)),
      k.dynamicSmem,
      arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                 m.add(k.smemShift, base)),
      ValueRange{});
  mine.tileM = rowsPerBlock;
  mine.m0 = math.add(staged.m0, math.fromIndex(arith::IndexCastOp::create(
                                    b, loc, b.getIndexType(), rowBegin)));
  // Rows past the tile (the last block's share may overrun it) or past the
  // tile's own rows are not stored.
  mine.rowEnd = tileRowEnd;
  mine.split = Value();
  return mine;
}
