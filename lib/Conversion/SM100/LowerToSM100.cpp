//===- LowerToSM100.cpp - conv3d-lower-to-sm100 ---------------------------===//
//
// Turns each implicit-GEMM grid loop whose configuration is for the sm100
// kernel into one gpu.launch of a warp-specialized tcgen05 kernel for
// sm_100a (grids configured for the sm80 kernel, the fallback
// conv3d-select-config chose, go to lowerGridToSM80):
//
//   host:    the TMA descriptors and the persistent launch of the shared
//            TMA layer (GPU/TmaKernel.h), exactly as for sm90
//   setup:   thread 0 initializes the ring's full/empty mbarriers and the
//            accumulator buffers' full/empty ones; the MMA warp allocates
//            the TMEM columns
//   warp 0:  the shared TMA producer (thread 0)
//   warp 1:  tcgen05.mma kind::f16 into TMEM, tcgen05.commit to the stage's
//            empty barrier and, per tile, to the accumulator's full one
//   warps 2-5: tcgen05.ld 32x32b from TMEM into the staging tile, then the
//            shared staged epilogue
// tile_m = 256 runs cta_group::2 over 2-CTA clusters (SM100KernelPlan.h).
// SM100KernelPlan.h describes the kernel, Tcgen05Kernel.cpp the hand-offs.
// No sm_100 GPU has run this code: it is generated, assembled by ptxas and
// checked structurally and by a host-side model of the plan.
//
//===----------------------------------------------------------------------===//

#include "SM100Kernel.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOSM100
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;

LogicalResult mlir::conv3d::lowerGridToSM100(RewriterBase &rewriter,
                                             scf::ForallOp grid) {
  FailureOr<GridKernel> found = analyzeTmaGrid(grid, Target::sm100);
  if (failed(found))
    return failure();
  GridKernel &kernel = *found;
  IGemmConfigAttr config = kernel.config;
  // conv3d-select-config gave convolutions the sm100 kernel cannot take an
  // sm80 configuration.
  if (config.getKernel() == Target::sm80)
    return lowerGridToSM80(rewriter, grid);
  ConvGeometry g = kernel.geometry();
  Type inElem = kernel.inputElementType();
  Location loc = grid.getLoc();
  int64_t epilogueAlignment = epilogueAlignmentOf(kernel);
  SM100KernelPlan plan;
  if (std::optional<std::string> problem = getSM100Family().plan(
          kernel.problem(), config, epilogueAlignment, plan))
    return grid.emitError()
           << "cannot lower " << config << " to the sm100 kernel: " << *problem;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  FailureOr<KernelOperands> flat = flattenOperands(rewriter, loc, kernel);
  if (failed(flat))
    return grid.emitError("sm100 needs operands with static strides");
  KernelOperands &ops = *flat;
  bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, kChannelBlock);

  int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  int64_t numTiles = numMT * numNT * plan.splitK;
  // Tile indices and rows are i32 in the kernel.
  if (std::optional<std::string> problem =
          tileIndexProblem(g, plan.tileM, numTiles))
    return grid.emitError()
           << "cannot lower " << config << " to the sm100 kernel: " << *problem;

  if (failed(createTmaLaunch(
          rewriter, grid, "conv3d-lower-to-sm100", kernel, ops, kTmemLanes,
          plan.tileN / plan.ctaGroup, numTiles, kThreads, plan.sharedBytes,
          /*outputStore=*/std::nullopt,
          [&](gpu::LaunchOp launch, const TmaDescriptors &descriptors) {
            Type indexType = narrowIndices ? Type(rewriter.getI32Type())
                                           : Type(rewriter.getIndexType());
            SM100Kernel k(rewriter, loc, plan, g, inElem,
                          kernel.outputElementType(), ops,
                          kernel.store.getMode(), kernel.store.getActivation(),
                          indexType);
            k.descA = descriptors.input;
            k.descB = descriptors.filter;
            k.numMT = numMT;
            k.numNT = numNT;
            k.numTiles = numTiles;
            buildSM100Kernel(k, launch);
          },
          plan.ctaGroup)))
    return failure();
  rewriter.eraseOp(grid);
  return success();
}

namespace {
struct LowerToSM100Pass
    : mlir::conv3d::impl::Conv3dLowerToSM100Base<LowerToSM100Pass> {
  void runOnOperation() override {
    if (failed(lowerConfiguredGrids(getOperation(), lowerGridToSM100)))
      signalPassFailure();
  }
};
} // namespace
