//===- EpilogueStore.cpp - mma.sync accumulators to the output ------------===//
//
// The mma.sync fragments go to the shared staging tile (two adjacent
// columns per lane); the shared GPU epilogue (GPU/StagedEpilogue.cpp) then
// writes the output with coalesced 16-byte accesses.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

void mlir::conv3d::sm80::emitEpilogueStore(KernelContext &ctx,
                                           ArrayRef<Value> accs) {
  const SM80KernelPlan &plan = ctx.plan;
  KernelMath math = ctx.math();
  StagedTile tile{ctx.staging,
                  plan.stagingStride,
                  plan.tileM,
                  plan.tileN,
                  plan.outputVector,
                  ctx.tid,
                  plan.threads,
                  ctx.m0,
                  ctx.n0,
                  /*rowEnd=*/Value(),
                  ctx.split};
  for (int64_t mi = 0; mi < plan.mmaTilesM; ++mi)
    for (int64_t ni = 0; ni < plan.mmaTilesN; ++ni)
      for (int64_t e = 0; e < 4; e += 2) {
        auto [r, c] = SM80KernelPlan::accumulatorPosition(math, ctx.lane, e);
        Value row =
            math.add(math.add(ctx.warpRow, math.constant(mi * kMmaM)), r);
        Value col =
            math.add(math.add(ctx.warpCol, math.constant(ni * kMmaN)), c);
        size_t base = (mi * plan.mmaTilesN + ni) * 4 + e;
        stageAccumulatorPair(math, tile, row, col, accs[base], accs[base + 1]);
      }
  gpu::BarrierOp::create(ctx.b, ctx.loc);
  emitStagedEpilogue(math, tile, ctx.geometry, ctx.ops, ctx.mode,
                     ctx.activation, ctx.outElem);
}
