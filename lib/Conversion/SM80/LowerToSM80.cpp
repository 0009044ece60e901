//===- LowerToSM80.cpp - conv3d-lower-to-sm80 -----------------------------===//
//
// Turns each implicit-GEMM grid loop (an scf.forall carrying
// conv3d.igemm_config) into one gpu.launch: a block per grid iteration, the
// operands and the epilogue read off the loop's tile ops, the K loop
// rebuilt as an S-stage software pipeline:
//
//   prologue: cp.async the tiles of steps 0 .. S-2 into stages 0 .. S-2
//   [in-place NVFP4 or input prologue: wait for step 0; barrier;
//    transform stage 0]
//   for t in steps:
//     wait until step t's copies landed (in place: step t+1's);
//     barrier
//     cp.async step t+S-1 into stage (t+S-1) % S
//     [register path: load step t+1 into registers]
//     ldmatrix + mma.sync over stage t % S
//     [register path: (quantize or apply the input prologue and) store
//      step t+1 to stage (t+1) % S]
//     [in-place NVFP4 or input prologue: transform stage (t+1) % S]
//   drain; barrier; epilogue through shared memory
//
// A grouped convolution's grid (conv3d-implicit-gemm's group dimension)
// becomes more blocks: each computes its group (N tiles vary fastest, then
// groups, then M tiles), clones the grid body's views of that group's
// channels, filters and output columns, and runs the dense kernel of
// C/G channels and F/G filters on them.
//
// The barrier at the top of step t also guarantees that every warp is done
// with stage (t-1) % S before it is refilled, and that the quantization of
// stage t % S (done in step t-1) is visible to the MMAs.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Transforms/Passes.h"
#include "conv3d/Transforms/TileSchedule.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOSM80
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

namespace {

/// Builds the kernel body inside the launch: `numGroups` x `numMT` x
/// `numNT` tiles (x the splits).
void buildKernel(KernelContext &ctx, gpu::LaunchOp launch, int64_t numMT,
                 int64_t numNT, int64_t numGroups) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const SM80KernelPlan &plan = ctx.plan;
  KernelMath math = ctx.math();

  ctx.tid = math.fromIndex(launch.getThreadIds().x);
  ctx.lane = math.rem(ctx.tid, sm80::kWarpSize);
  Value warp = math.div(ctx.tid, sm80::kWarpSize);
  ctx.warpRow = math.mul(math.div(warp, plan.warpsN), plan.warpTileM);
  ctx.warpCol = math.mul(math.rem(warp, plan.warpsN), plan.warpTileN);
  // N tiles vary fastest: consecutive blocks share an input tile in L2.
  // Then the groups (blockGroup): the groups of an M tile read the same
  // input voxels, different channels of the same lines.
  Value block = math.fromIndex(launch.getBlockIds().x);
  Value tn = math.rem(block, numNT);
  Value rest = math.div(block, numNT * numGroups);
  Value tm = math.rem(rest, numMT);
  Value split = plan.splitK > 1 ? math.div(rest, numMT) : Value();
  ctx.split = split;
  ctx.m0 = math.mul(tm, plan.tileM);
  ctx.n0 = math.mul(tn, plan.tileN);

  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value dynamic = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      workgroup));
  auto view = [&](int64_t byteOffset, int64_t elements, Type elem) {
    return memref::ViewOp::create(
               b, loc, MemRefType::get({elements}, elem, nullptr, workgroup),
               dynamic, math.toIndex(math.constant(byteOffset)), ValueRange{})
        .getResult();
  };
  ctx.smemA = view(0, plan.stages * plan.aTile.elements(), ctx.inElem);
  ctx.smemB = view(plan.stages * plan.aStageBytes,
                   plan.stages * plan.bTile.elements(), ctx.inElem);
  ctx.staging = view(0, plan.tileM * plan.stagingStride, b.getF32Type());

  KSchedule schedule =
      buildKSchedule(math, ctx.geometry, ctx.m0, plan.tileM, plan.tileK,
                     plan.kOrder, plan.splitK, split);
  std::unique_ptr<OperandLoader> loaders[2] = {createInputLoader(ctx),
                                               createFilterLoader(ctx)};
  bool anyAsync = loaders[0]->isAsync() || loaders[1]->isAsync();
  auto stepValid = [&](Value t) { return math.ult(t, schedule.numSteps); };
  auto issueAsync = [&](Value t, Value stage) {
    SmallVector<Value> tokens;
    auto [k0, limit] = schedule.range(t);
    for (auto &loader : loaders)
      if (loader->isAsync())
        llvm::append_range(tokens,
                           loader->issueAsync(k0, limit, stepValid(t), stage));
    return nvgpu::DeviceAsyncCreateGroupOp::create(
               b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens)
        .getResult();
  };
  auto loadRegisters = [&](Value t) {
    SmallVector<SmallVector<Value>> values(2);
    auto [k0, limit] = schedule.range(t);
    for (auto [i, loader] : llvm::enumerate(loaders))
      if (!loader->isAsync())
        values[i] = loader->loadToRegisters(k0, limit, stepValid(t));
    return values;
  };
  auto storeRegisters = [&](ArrayRef<SmallVector<Value>> values, Value stage) {
    for (auto [i, loader] : llvm::enumerate(loaders))
      if (!loader->isAsync())
        loader->storeFromRegisters(values[i], stage);
  };

  // Prologue.
  Value firstGroup;
  if (anyAsync)
    for (int64_t s = 0; s + 1 < plan.stages; ++s) {
      Value group = issueAsync(math.constant(s), math.constant(s));
      if (!firstGroup)
        firstGroup = group;
    }
  storeRegisters(loadRegisters(math.constant(0)), math.constant(0));
  // In-place quantization and the in-place prologue run one step ahead:
  // step 0 here, step t+1 in iteration t, so the loop waits for one step
  // more than it computes.
  bool quantizeAhead = plan.quantizeInShared;
  bool prologueAhead = plan.prologueInShared;
  // (Past the last step there is nothing to transform.)
  auto transformStep = [&](Value t) {
    Value valid = stepValid(t);
    auto guard = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(guard.thenBlock());
    auto [k0, limit] = schedule.range(t);
    loaders[0]->transformStage(math.rem(t, plan.stages), k0, limit, valid);
  };
  if (quantizeAhead || prologueAhead) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, firstGroup,
                                     b.getI32IntegerAttr(plan.stages - 2));
    gpu::BarrierOp::create(b, loc);
    if (quantizeAhead)
      loaders[0]->quantizeStage(math.constant(0));
    if (prologueAhead)
      transformStep(math.constant(0));
  }
  int64_t pendingGroups =
      plan.stages - (quantizeAhead || prologueAhead ? 3 : 2);

  // Main loop, accumulators carried in registers.
  int64_t numAccs = plan.mmaTilesM * plan.mmaTilesN * 4;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto loop =
      scf::ForOp::create(b, loc, math.constant(0), schedule.numSteps,
                         math.constant(1), SmallVector<Value>(numAccs, zero));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    if (anyAsync)
      nvgpu::DeviceAsyncWaitOp::create(b, loc, firstGroup,
                                       b.getI32IntegerAttr(pendingGroups));
    gpu::BarrierOp::create(b, loc);
    if (anyAsync) {
      Value ahead = math.add(t, math.constant(plan.stages - 1));
      issueAsync(ahead, math.rem(ahead, plan.stages));
    }
    Value next = math.add(t, math.constant(1));
    auto registers = loadRegisters(next);
    SmallVector<Value> accs =
        emitWarpMma(ctx, math.rem(t, plan.stages),
                    SmallVector<Value>(loop.getRegionIterArgs()));
    storeRegisters(registers, math.rem(next, plan.stages));
    // After the MMAs in program order, so their ldmatrix reads issue first
    // and the quantization's arithmetic overlaps the tensor cores.
    if (quantizeAhead)
      loaders[0]->quantizeStage(math.rem(next, plan.stages));
    if (prologueAhead)
      transformStep(next);
    scf::YieldOp::create(b, loc, accs);
  }
  // Drain the copies still in flight before shared memory is reused.
  if (anyAsync)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, firstGroup,
                                     b.getI32IntegerAttr(0));
  gpu::BarrierOp::create(b, loc);
  emitEpilogueStore(ctx, SmallVector<Value>(loop.getResults()));
}

/// The group of the block (a grouped grid's blocks run N tiles fastest,
/// then groups: buildKernel), as an index.
Value blockGroup(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                 int64_t numNT, int64_t numGroups) {
  KernelMath math{b, loc, b.getIndexType()};
  return math.rem(math.div(launch.getBlockIds().x, numNT), numGroups);
}

} // namespace

LogicalResult mlir::conv3d::lowerGridToSM80(RewriterBase &rewriter,
                                            scf::ForallOp grid) {
  FailureOr<GridKernel> found = analyzeGrid(grid);
  if (failed(found))
    return grid.emitError("conv3d-lower-to-sm80: not an implicit-GEMM grid "
                          "loop produced by conv3d-implicit-gemm");
  GridKernel &kernel = *found;
  IGemmConfigAttr config = kernel.config;
  Location loc = grid.getLoc();
  if (config.getKernel() == Target::sm90 || config.getKernel() == Target::sm100)
    return grid.emitError()
           << "conv3d-lower-to-sm80: " << config << " is for "
           << "the " << stringifyTarget(config.getKernel()) << " kernel"
           << "; run conv3d-lower-to-" << stringifyTarget(config.getKernel());
  if (config.getClusterM() != 1)
    return grid.emitError() << "conv3d-lower-to-sm80: " << config
                            << ": cluster_m is an sm90 option (the sm80 "
                               "kernel runs without clusters)";
  if (config.getMainloop() != Mainloop::im2col)
    return grid.emitError() << "conv3d-lower-to-sm80: " << config
                            << ": mainloop = halo is an sm90 option (the sm80 "
                               "kernel gathers its tiles with cp.async)";
  if (failed(checkGpuOperands(kernel, "sm80")))
    return failure();
  Value input = kernel.im2col.getInput(),
        filter = kernel.filterLoad.getFilter();
  ConvGeometry g = kernel.geometry();
  Type inElem = kernel.inputElementType();
  Type outElem = kernel.outputElementType();
  OperandAlignment alignment;
  alignment.input = elementAlignment(input);
  // Rows read from the history take the same vector accesses.
  if (Value history = kernel.im2col.getHistory())
    alignment.input = std::min(alignment.input, elementAlignment(history));
  alignment.filter = elementAlignment(filter);
  alignment.inputChannelSlice = isChannelSlice(input);
  alignment.epilogue = epilogueAlignmentOf(kernel);

  SM80KernelPlan plan;
  if (std::optional<std::string> problem =
          getSM80Family().plan(kernel.problem(), config, alignment, plan))
    return grid.emitError()
           << "cannot lower " << config << " to sm80: " << *problem;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  // A dense convolution's operands are flattened on the host; a grouped
  // one's are its group's views, which the kernel computes for its block's
  // group (cloneGroupViews), then flattens.
  FailureOr<KernelOperands> flat = failure();
  if (kernel.groups == 1)
    flat = flattenOperands(rewriter, loc, kernel);
  constexpr llvm::StringLiteral kFlattenProblem =
      "sm80 needs operands with static strides and a filter whose (q, r, s, "
      "c) dimensions are contiguous";
  if (kernel.groups == 1 && failed(flat))
    return grid.emitError(kFlattenProblem);
  constexpr int64_t kI32Limit = int64_t(1) << 31;

  int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  int64_t numBlocks = numMT * numNT * plan.splitK * kernel.groups;
  // The grid is one-dimensional: CUDA allows 2^31 - 1 blocks in x.
  if (numBlocks >= kI32Limit)
    return grid.emitError()
           << "cannot lower " << config << " to sm80: " << numBlocks
           << " thread blocks exceed the grid limit of "
              "2^31 - 1; use larger tiles";
  bool viewsCloned = true;
  createKernelLaunch(
      rewriter, loc, rewriter.getIndexAttr(numBlocks), plan.threads,
      plan.sharedBytes, [&](gpu::LaunchOp launch) {
        if (kernel.groups > 1) {
          IRMapping views;
          Value group = blockGroup(rewriter, loc, launch, numNT, kernel.groups);
          viewsCloned =
              succeeded(cloneGroupViews(rewriter, kernel, group, views));
          if (viewsCloned)
            flat = flattenOperands(rewriter, loc, kernel, views);
          if (failed(flat))
            return;
        }
        KernelOperands &ops = *flat;
        bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, plan.tileK);
        Type indexType = narrowIndices ? Type(rewriter.getI32Type())
                                       : Type(rewriter.getIndexType());
        KernelContext ctx(rewriter, loc, plan, g, inElem, outElem, ops,
                          kernel.store.getMode(), kernel.store.getActivation(),
                          indexType);
        ctx.inputActivation = kernel.im2col.getInputActivation();
        buildKernel(ctx, launch, numMT, numNT, kernel.groups);
      });
  // (The pass fails: the launch left behind is not looked at.)
  if (!viewsCloned)
    return grid.emitError()
           << "conv3d-lower-to-sm80: the tile ops of a grid of "
           << kernel.groups
           << " groups must read views computed from the group's induction "
              "variable alone (conv3d-implicit-gemm's group views)";
  if (failed(flat))
    return grid.emitError(kFlattenProblem);
  rewriter.eraseOp(grid);
  return success();
}

namespace {
struct LowerToSM80Pass
    : mlir::conv3d::impl::Conv3dLowerToSM80Base<LowerToSM80Pass> {
  void runOnOperation() override {
    if (failed(lowerConfiguredGrids(getOperation(), lowerGridToSM80)))
      signalPassFailure();
  }
};
} // namespace
