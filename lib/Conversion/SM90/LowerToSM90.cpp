//===- LowerToSM90.cpp - conv3d-lower-to-sm90 -----------------------------===//
//
// Turns each implicit-GEMM grid loop whose configuration is for the sm90
// kernel into one gpu.launch of a warp-specialized kernel (grids configured
// for the sm80 kernel, the fallback conv3d-select-config chose, go to
// lowerGridToSM80):
//
//   host:  the input's rank-5 im2col TMA descriptor and the filter's tiled
//          one (conv3dTma*Descriptor, cached device copies); no launch if
//          either was refused (the run reports the driver's message).
//          Where rank 5's limits do not hold (ConvGeometry::
//          chooseTmaIm2colForm), a rank-4 descriptor of the input's depth
//          slices: tiles then stay in one output depth slice, their steps
//          are the depth taps inside the input, and each load names its
//          input slice (GPU/TmaKernel.h)
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
//            [NVFP4 in the tile: then wait full[(t+1) % S] and quantize
//            the warpgroup's rows of that stage in place, fence.proxy.async;
//            step t+1 starts on the warpgroup's named barrier instead of
//            the full wait (TileQuantization.cpp)]
//   epilogue (consumers): accumulators -> f32 staging tile (its own shared
//          memory: the producer is already loading the next tile) -> the
//          shared staged epilogue; or, for an overwritten dense 16-bit
//          output without residual and N tiles of whole 64-column boxes,
//          the epilogue applied in registers -> a 16-bit swizzled staging
//          tile -> TMA stores of the output's third descriptor, issued by
//          one thread while the consumers go on with the next tile
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

#include "SM90Kernel.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOSM90
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// Whether the output can take the TMA-store epilogue: a tile overwritten
/// with no residual to read (no accumulate, no split-K partial sums), in a
/// 16-bit type, whose (n, d, h, w) dimensions collapse into one of 16-byte
/// rows: the dense [M][F] matrix a tiled descriptor describes.
bool outputTakesTmaStore(const GridKernel &kernel) {
  StoreOutputTileOp store = kernel.store;
  if (store.getMode() != StoreMode::overwrite || store.getResidual())
    return false;
  Value output = store.getOutput();
  auto type = cast<MemRefType>(output.getType());
  Type elem = type.getElementType();
  SmallVector<int64_t> strides;
  int64_t offset;
  if ((!elem.isBF16() && !elem.isF16()) || type.getRank() != 5 ||
      !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || strides[4] != 1 ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return false;
  for (int64_t d = 0; d < 3; ++d)
    if (std::optional<int64_t> collapsed =
            llvm::checkedMul(strides[d + 1], type.getDimSize(d + 1));
        !collapsed || strides[d] != *collapsed)
      return false;
  return strides[3] % 8 == 0 && elementAlignment(output) >= 8;
}

/// Split-K whose partial sums the kernel can reduce in a cluster: the
/// grid's workspace (an allocation it writes through StoreMode::partial)
/// is read only by the conv3d.epilogue that follows the grid, and freed
/// after it. That epilogue then runs in the kernel (SM90KernelPlan::
/// splitCluster) and the workspace goes away.
struct SplitEpilogue {
  EpilogueOp epilogue;
  memref::AllocOp workspace;
  memref::DeallocOp dealloc;
};

std::optional<SplitEpilogue> findSplitEpilogue(const GridKernel &kernel) {
  StoreOutputTileOp store = kernel.store;
  if (store.getMode() != StoreMode::partial)
    return std::nullopt;
  auto alloc = store.getOutput().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return std::nullopt;
  SplitEpilogue found{{}, alloc, {}};
  for (Operation *user : alloc->getUsers()) {
    if (user == store)
      continue;
    if (auto epilogue = dyn_cast<EpilogueOp>(user);
        epilogue && !found.epilogue && epilogue.getSum() == alloc.getResult())
      found.epilogue = epilogue;
    else if (auto dealloc = dyn_cast<memref::DeallocOp>(user);
             dealloc && !found.dealloc)
      found.dealloc = dealloc;
    else
      return std::nullopt;
  }
  // The epilogue must directly follow the grid (nothing in between may
  // read its operands or the output before the kernel has written them).
  if (!found.epilogue || found.epilogue->getPrevNode() != kernel.grid ||
      !found.epilogue.hasPureBufferSemantics())
    return std::nullopt;
  return found;
}

/// Once the kernel reduced the splits and applied the epilogue: the
/// epilogue, the workspace and what still reads it (its free, and the flat
/// view the operand analysis made of it, now dead) go.
void eraseWorkspace(RewriterBase &rewriter, const SplitEpilogue &split) {
  rewriter.eraseOp(split.epilogue);
  if (split.dealloc)
    rewriter.eraseOp(split.dealloc);
  // The views of the workspace, dead now, last ones first.
  SetVector<Operation *> views;
  getForwardSlice(split.workspace->getResult(0), &views);
  for (Operation *op : llvm::reverse(views))
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
  // Every remaining user reads the workspace for real: keep it then.
  if (split.workspace->use_empty())
    rewriter.eraseOp(split.workspace);
}

} // namespace

LogicalResult mlir::conv3d::lowerGridToSM90(RewriterBase &rewriter,
                                            scf::ForallOp grid) {
  FailureOr<GridKernel> found = analyzeTmaGrid(grid, Target::sm90);
  if (failed(found))
    return failure();
  GridKernel &kernel = *found;
  IGemmConfigAttr config = kernel.config;
  // conv3d-select-config gave convolutions the sm90 kernel cannot take an
  // sm80 configuration.
  if (config.getKernel() == Target::sm80)
    return lowerGridToSM80(rewriter, grid);
  ConvGeometry g = kernel.geometry();
  Type inElem = kernel.inputElementType();
  Location loc = grid.getLoc();
  int64_t epilogueAlignment = epilogueAlignmentOf(kernel);
  // analyzeTmaGrid checked that one of the two forms applies.
  std::string why;
  TmaIm2colForm form =
      g.chooseTmaIm2colForm(2, why).value_or(TmaIm2colForm::volume);
  // Per depth slice, the last tile of a slice is short, and a 2-block
  // cluster pads a slice of odd tiles with one that stores nothing: TMA
  // stores whole tiles, so only slices of whole tiles and clusters take them.
  bool tmaStore = outputTakesTmaStore(kernel) &&
                  (form == TmaIm2colForm::volume ||
                   g.tmaTilesPerSlice(config.getTileM(), config.getClusterM()) *
                           config.getTileM() ==
                       g.outputSliceSize());
  const SM90Family &family =
      config.getMainloop() == Mainloop::halo
          ? static_cast<const SM90Family &>(getSM90HaloFamily())
          : getSM90Im2colFamily();
  // Split-K over a cluster of blocks reduces in the kernel where it can;
  // otherwise each split stores into its workspace slab.
  std::optional<SplitEpilogue> splitEpilogue = findSplitEpilogue(kernel);
  if (splitEpilogue && SM90KernelPlan::splitClusterProblem(
                           config.getSplitK(), config.getSchedule(),
                           config.getClusterM(), config.getMainloop()))
    splitEpilogue.reset();
  if (splitEpilogue) {
    EpilogueOp epilogue = splitEpilogue->epilogue;
    epilogueAlignment = std::min({elementAlignment(epilogue.getInit()),
                                  elementAlignment(epilogue.getResidual()),
                                  elementAlignment(epilogue.getBias())});
  }
  SM90KernelPlan plan;
  if (std::optional<std::string> problem = family.plan(
          kernel.problem(), config, epilogueAlignment,
          config.getMainloop() == Mainloop::halo ? outputTakesTmaStore(kernel)
                                                 : tmaStore,
          plan, /*reduceSplitsInCluster=*/splitEpilogue.has_value()))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  FailureOr<KernelOperands> flat = flattenOperands(rewriter, loc, kernel);
  if (failed(flat))
    return grid.emitError("sm90 needs operands with static strides");
  KernelOperands &ops = *flat;
  // The in-cluster reduction writes the epilogue's destination.
  StoreMode mode = kernel.store.getMode();
  Activation activation = kernel.store.getActivation();
  Type outElem = kernel.outputElementType();
  if (splitEpilogue) {
    EpilogueOp epilogue = splitEpilogue->epilogue;
    FailureOr<FlatOperand> output =
        flattenOperand(rewriter, loc, epilogue.getInit());
    FailureOr<FlatOperand> bias =
        flattenOperand(rewriter, loc, epilogue.getBias());
    FailureOr<FlatOperand> residual =
        flattenOperand(rewriter, loc, epilogue.getResidual());
    if (failed(output) || failed(bias) || failed(residual))
      return grid.emitError("sm90 needs operands with static strides");
    ops.output = *output;
    ops.bias = *bias;
    ops.residual = *residual;
    mode =
        epilogue.getOverwrite() ? StoreMode::overwrite : StoreMode::accumulate;
    activation = epilogue.getActivation();
    outElem = getElementTypeOrSelf(epilogue.getInit().getType());
  }
  bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, kChannelBlock);

  int64_t numMT = g.tmaRowTiles(plan.tileM, form, plan.clusterM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  // With clusters of two blocks, the persistent loop walks pairs of M tiles
  // (over M, an odd count ends with a tile past the last row; per depth
  // slice, pairs stay in one slice: tmaTilesPerSlice). Halo tiles are output
  // rows of 64 columns at each (n, d).
  int64_t numTiles =
      plan.halo ? g.batch * g.outputSize(kDepth) *
                      ceilDiv(g.outputSize(kHeight), plan.haloOutRows) *
                      ceilDiv(g.outputSize(kWidth), kWgmmaM) * numNT
                : ceilDiv(numMT, plan.clusterM) * numNT *
                      (plan.splitCluster > 1 ? 1 : plan.splitK);
  // Tile indices and rows are i32 in the kernel.
  if (std::optional<std::string> problem =
          tileIndexProblem(g, plan.tileM, numTiles))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;
  auto buildKernel = [&](gpu::LaunchOp launch,
                         const TmaDescriptors &descriptors) {
    Type indexType = narrowIndices ? Type(rewriter.getI32Type())
                                   : Type(rewriter.getIndexType());
    SM90Kernel k(rewriter, loc, plan, g, inElem, outElem, ops, mode, activation,
                 indexType);
    k.descA = descriptors.input;
    k.descB = descriptors.filter;
    k.descC = descriptors.output;
    k.descHistory = descriptors.history;
    // The halo mainloop has its own tile order and tiled loads.
    if (!plan.halo) {
      k.ring.form = form;
      k.ring.batchSlices = inputBatchSlices(g, ops);
      if (k.descHistory)
        k.ring.historyBatchSlices = historyBatchSlices(g, ops);
      k.sliceTiles = g.tmaTilesPerSlice(plan.tileM, plan.clusterM);
    }
    k.numMT = numMT;
    k.numNT = numNT;
    k.numTiles = numTiles;
    buildSM90Kernel(k, launch);
  };

  if (plan.halo) {
    ModuleOp module = grid->getParentOfType<ModuleOp>();
    if (!module)
      return grid.emitError("conv3d-lower-to-sm90 needs an enclosing module "
                            "(for the descriptor functions)");
    std::array<Value, 3> descriptors =
        emitHaloDescriptors(rewriter, loc, module, kernel, ops, plan);
    if (failed(createPersistentLaunch(
            rewriter, grid, descriptors, numTiles, plan.threads,
            plan.sharedBytes, [&](gpu::LaunchOp launch) {
              buildKernel(launch, {descriptors[0], descriptors[1],
                                   descriptors[2], Value()});
            })))
      return failure();
    rewriter.eraseOp(grid);
    return success();
  }

  // Host: the descriptors (device copies, cached by the runtime): input,
  // filter and, for the TMA-store epilogue, the output; and the persistent
  // launch.
  std::optional<TmaOutputStore> outputStore;
  if (plan.tmaStore)
    outputStore = TmaOutputStore{ops.output.strides[3], plan.storeBoxColumns};
  if (failed(createTmaLaunch(
          rewriter, grid, "conv3d-lower-to-sm90", kernel, ops, plan.tileM,
          plan.tileN / plan.clusterM, numTiles, plan.threads, plan.sharedBytes,
          outputStore, buildKernel, plan.clusterM * plan.splitCluster, form)))
    return failure();
  rewriter.eraseOp(grid);
  if (splitEpilogue)
    eraseWorkspace(rewriter, *splitEpilogue);
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
