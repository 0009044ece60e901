//===- TmaKernel.h - the TMA-fed persistent kernels' shared layer -*- C++ -*-//
//
// Internal to lib/Conversion. The sm90 and sm100 kernels have the same
// scheduler and the same producer; they differ in the MMA and where the
// accumulator lives. What they share is written once here:
// - the host side: the input's im2col TMA descriptor (rank 5, or rank 4
//   per depth slice: TmaIm2colForm), the FQRSC
//   filter's tiled one, and the persistent launch (a block per
//   multiprocessor, or per tile when there are fewer) under a check that
//   the driver encoded both descriptors;
// - in the kernel: the aligned dynamic shared memory, the ring's stages and
//   full/empty mbarriers, the persistent tile loop carrying the ring
//   position, and the TMA producer (one thread issuing per K step, one
//   filter tap x 64 channels, an im2col load of the activation tile and a
//   tiled load of the filter tile).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_GPU_TMAKERNEL_H
#define CONV3D_LIB_CONVERSION_GPU_TMAKERNEL_H

#include "KernelCommon.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::conv3d {

/// Channels of one TMA box row: 64 16-bit elements = one 128-byte swizzle
/// span.
inline constexpr int64_t kTmaChannelBlock = 64;

/// What the producer, the ring's barriers and the tile loop need to know of
/// a target's plan.
struct TmaRing {
  int64_t tileM = 0, tileN = 0, stages = 0;
  /// Shared offsets (from the aligned base) of A stage 0 (B follows the A
  /// ring) and of the stage-0 full and empty barriers (8 bytes a stage).
  int64_t aStageBytes = 0, bStageBytes = 0, stepBytes = 0;
  int64_t fullBarrierOffset = 0, emptyBarrierOffset = 0;
  int64_t channelBlocks = 0, stepsPerSlice = 0, totalSteps = 0;
  KOrder kOrder = KOrder::taps_outer;
  int64_t splitK = 1;
  /// 2: a tile is computed by a CTA pair (sm100 cta_group::2): each CTA
  /// loads tileM / 2 rows of A and tileN / 2 rows of B, and every load
  /// completes on the even CTA's full barrier, which alone expects the
  /// step's bytes (stepBytes: both CTAs').
  int64_t ctaGroup = 1;
  /// 2: the blocks of a 2-block cluster (the sm90 kernel's cluster_m) take
  /// M tiles 2p and 2p + 1 of one N tile, with the same K steps; each loads
  /// its own A tile and half of the B tile (tileN / 2 rows), multicast to
  /// both blocks' stages, so every full barrier still expects stepBytes.
  /// Per depth slice, both tiles of a pair lie in one output depth slice
  /// (ConvGeometry::tmaTilesPerSlice), whose valid depth taps are the pair's K
  /// steps.
  int64_t multicastB = 1;
  /// Over 1: the split-K blocks of one tile form a cluster of this many
  /// (the sm90 kernel's in-cluster reduction): `tile` indexes the clusters'
  /// tiles (k.numTiles counts tiles, not splits) and a block's split index
  /// is its rank in the cluster.
  int64_t splitCluster = 1;
  /// How the activation tiles are loaded. depthSlices: every tile lies in
  /// one output depth slice (tileOrigin), its K steps are only the depth
  /// taps that read inside the input (tileStepRange), and each load names
  /// its input slice (emitTmaProducer). Not with ctaGroup 2.
  TmaIm2colForm form = TmaIm2colForm::volume;
  /// depthSlices: the input's batch stride in depth strides (D when dense;
  /// more for a view into a deeper tensor, such as a separate Q-slice's).
  int64_t batchSlices = 0;
  /// depthSlices with a history operand (g.historyDepth frames before the
  /// input): the history's batch stride in depth strides. Depth d of
  /// concat(history, input) is loaded through the history's descriptor
  /// where d < historyDepth, else through the input's at d - historyDepth:
  /// a box is one depth slice, so it never straddles the two.
  int64_t historyBatchSlices = 0;
};

/// The input's batch stride in depth strides (the per-depth-slice view's
/// slices per image), or D for a single image (the input operand's depth,
/// without a history's frames).
int64_t inputBatchSlices(const ConvGeometry &g, const KernelOperands &ops);
/// The same for the history operand (its depth for a single image).
int64_t historyBatchSlices(const ConvGeometry &g, const KernelOperands &ops);

/// A TMA-fed persistent kernel under construction.
struct TmaKernel {
  OpBuilder &b;
  Location loc;
  const ConvGeometry &g;
  TmaRing ring;

  int64_t numMT = 0, numNT = 0, numTiles = 0;
  /// TmaIm2colForm::depthSlices: M tiles per output depth slice
  /// (ConvGeometry::tmaTilesPerSlice).
  int64_t sliceTiles = 0;

  // Set up at the top of the kernel (i32).
  Value tid = {}, blockId = {}, gridSize = {};
  Value smemBase = {};          ///< shared address, 1024-byte aligned
  Value smemShift = {};         ///< bytes from the dynamic base to smemBase
  Value dynamicSmem = {};       ///< memref<?xi8, workgroup>
  Value descA = {}, descB = {}; ///< generic pointers to the TMA descriptors
  Value descHistory = {};       ///< the history's, with ring.historyBatchSlices
  /// i32 rank in the cluster (ctaGroup or multicastB 2, splitCluster)
  Value ctaRank = {};

  TmaKernel(OpBuilder &b, Location loc, const ConvGeometry &g, TmaRing ring)
      : b(b), loc(loc), g(g), ring(ring) {}

  KernelMath i32() const { return {b, loc, b.getI32Type()}; }
  Value i32Const(int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  /// A shared pointer to byte `offset` (i32) of the aligned region.
  Value sharedPtr(Value offset) const;
  /// A shared::cluster pointer (the TMA destination's address space) to
  /// byte `offset`: this CTA's shared window is part of its cluster's.
  Value clusterPtr(Value offset) const;
  Value fullBarrier(Value stage) const;
  Value emptyBarrier(Value stage) const;
  /// i32 shared offsets of A and B stage `stage`.
  Value aStage(Value stage) const;
  Value bStage(Value stage) const;
  /// (stage, phase parity) of K step t.
  std::pair<Value, Value> stageAndPhase(Value t) const;
};

/// The ring fields the TMA kernels' plans (SM90KernelPlan, SM100KernelPlan)
/// hold under the same names; each kernel's ringOf adds its own (barrier
/// offsets, clusters, CTA pairs).
template <typename Plan> TmaRing planRing(const Plan &plan) {
  TmaRing ring;
  ring.tileM = plan.tileM;
  ring.tileN = plan.tileN;
  ring.stages = plan.stages;
  ring.aStageBytes = plan.aStageBytes;
  ring.bStageBytes = plan.bStageBytes;
  ring.stepBytes = plan.stepBytes;
  ring.channelBlocks = plan.channelBlocks;
  ring.stepsPerSlice = plan.stepsPerSlice;
  ring.totalSteps = plan.totalSteps;
  ring.kOrder = plan.kOrder;
  ring.splitK = plan.splitK;
  return ring;
}

/// A TMA kernel emitted from a target's `Plan`: what the parts of the sm90
/// and the sm100 kernel share besides the TMA layer's state.
template <typename Plan> struct PlannedTmaKernel : TmaKernel {
  const Plan &plan;
  Type inElem, outElem;
  const KernelOperands &ops;
  StoreMode mode;
  Activation activation;
  Type indexType;

  PlannedTmaKernel(OpBuilder &b, Location loc, const Plan &plan, TmaRing ring,
                   const ConvGeometry &g, Type inElem, Type outElem,
                   const KernelOperands &ops, StoreMode mode,
                   Activation activation, Type indexType)
      : TmaKernel(b, loc, g, ring), plan(plan), inElem(inElem),
        outElem(outElem), ops(ops), mode(mode), activation(activation),
        indexType(indexType) {}

  KernelMath math() const { return {b, loc, indexType}; }
};

/// Emits the body of `scf.if cond` (no results) at the builder's point.
inline void ifThen(OpBuilder &b, Location loc, Value cond,
                   function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

/// A tile's origin: (m0, n0) and its split-K index (i32). N tiles vary
/// fastest, so the blocks working at one time share input tiles in L2.
/// With ring.multicastB, `tile` indexes the clusters' tile pairs (k.numTiles
/// counts pairs) and this block takes M tile 2p + ctaRank.
/// With per-depth-slice loads a tile's rows end with its output depth slice
/// `slice` (n * Do + do): rows from `rowEnd` on are not the tile's (null
/// for the volume form, whose rows run to M). A cluster's padding tile
/// (ConvGeometry::tmaTilesPerSlice) has rowEnd == m0: it stores nothing.
struct TileOrigin {
  Value m0, n0, split;
  /// The tile's index in the persistent loop (kernels with their own tile
  /// order, such as the sm90 halo mainloop's, decompose it themselves).
  Value index;
  Value slice = {}, rowEnd = {};
};

TileOrigin tileOrigin(TmaKernel &k, Value tile);

/// The step range [begin, end) of a tile (i32).
std::pair<Value, Value> tileStepRange(TmaKernel &k, const TileOrigin &tile);

/// The persistent loop over this block's tiles, carrying the count of K
/// steps done so far (the ring position) and the block-local tile index;
/// `body` emits one tile's work and returns its step count.
void forEachTile(TmaKernel &k,
                 function_ref<Value(const TileOrigin &, Value, Value)> body);

/// The top of the kernel in `launch`: thread and block ids, the dynamic
/// shared memory and its base aligned to 1024 bytes (the 128-byte swizzle's
/// atom), the TMA descriptors (i64 kernel arguments in k.descA / k.descB /
/// k.descHistory) as generic pointers.
void emitTmaKernelPrologue(TmaKernel &k, gpu::LaunchOp launch);

/// The TMA loads of every step of every tile of this block, issued by the
/// calling thread: wait for the stage's empty barrier, expect the step's
/// bytes on its full barrier, load the activation tile (im2col) and the
/// filter tile. The im2col load's coordinates and offsets: rank 5
/// {c0, w, h, d, n} + {s, r, q} x dilation; per depth slice rank 4
/// {c0, w, h, n * batchSlices + d + q * dil_d} + {s, r} x dilation
/// (ConvGeometry::tmaIm2colLoadCoords), from the history's descriptor for
/// the depths it holds (TmaRing::historyBatchSlices).
void emitTmaProducer(TmaKernel &k);

/// The grid loop `grid` for the TMA kernel of `target` (sm90, sm100),
/// checked before planning: a loop conv3d-implicit-gemm did not produce, a
/// configuration for the other TMA kernel, and operands the kernel cannot
/// take (checkGpuOperands, the kernel family's canImplement) are reported on
/// the loop and fail. A loop configured for the sm80 kernel
/// (conv3d-select-config's fallback) is returned unchecked: the caller lowers
/// it with lowerGridToSM80.
FailureOr<GridKernel> analyzeTmaGrid(scf::ForallOp grid, Target target);

/// An output a TMA kernel stores by TMA (the sm90 TMA-store epilogue): the
/// dense [M][F] matrix with rows `rowStride` elements apart, in boxes of
/// tile_m rows x `boxColumns` (64: 128-byte swizzle; 32: 64-byte swizzle).
struct TmaOutputStore {
  int64_t rowStride = 0;
  int64_t boxColumns = 0;
};

/// The host side of a TMA kernel's launch, before `grid`: the TMA
/// descriptors of `kernel` (`tileM` x 64 activation boxes of the input's
/// rank-5 or, with `form` depthSlices, rank-4 (N*D, H, W, C) im2col view,
/// `tileN` x 64 filter boxes, 128-byte swizzle; with `outputStore`, the
/// output's) and, if the driver encoded them all, one persistent launch of
/// min(multiprocessors, `numTiles`) blocks (with `clusterSize` 2: clusters of
/// two blocks, as many as the multiprocessors hold) whose body `buildBody`
/// emits from the descriptors (i64; the output's is null without
/// `outputStore`, the history's without a history operand, which only the
/// depthSlices form reads). `pass` names the pass in the error when there
/// is no enclosing module.
struct TmaDescriptors {
  Value input, filter, output, history;
};
LogicalResult createTmaLaunch(
    RewriterBase &rewriter, scf::ForallOp grid, StringRef pass,
    const GridKernel &kernel, const KernelOperands &ops, int64_t tileM,
    int64_t tileN, int64_t numTiles, int64_t threads, int64_t sharedBytes,
    std::optional<TmaOutputStore> outputStore,
    function_ref<void(gpu::LaunchOp, const TmaDescriptors &)> buildBody,
    int64_t clusterSize = 1, TmaIm2colForm form = TmaIm2colForm::volume);

/// The runtime's TMA descriptor wrappers (GpuRuntimeWrappers.cpp): an
/// NDHWC im2col map and a rank-3 tiled map, each returning the device
/// descriptor or 0 if the driver refused it.
inline constexpr StringLiteral kTmaIm2colDescriptorFn =
    "conv3dTmaIm2colDescriptor";
inline constexpr StringLiteral kTmaTiledDescriptorFn =
    "conv3dTmaTiledDescriptor";

/// A call of the descriptor wrapper `function` (declared in `module` with
/// 1 + arguments.size() i64 parameters unless it is) with the device
/// address of `memref`'s first element followed by `arguments`.
Value emitTmaDescriptorCall(OpBuilder &b, Location loc, ModuleOp module,
                            StringRef function, Value memref,
                            ArrayRef<int64_t> arguments);

/// A rank-5 tiled TMA descriptor of `memref` (16-bit elements; sizes,
/// element strides of dimensions 1 to 4 and box innermost first), swizzled
/// for rows of `rowBytes` (128 or 64), made on the host at run time
/// (conv3dTmaTiled5dDescriptor: 0 if the driver refused it).
Value emitTiled5dDescriptor(OpBuilder &b, Location loc, ModuleOp module,
                            Value memref, ArrayRef<int64_t> dims,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> box,
                            int64_t rowBytes);

/// The persistent launch of a TMA kernel before `grid`, under a check that
/// the driver encoded every one of `descriptors`: min(multiprocessors,
/// `numTiles`) blocks (with `clusterSize` 2: clusters of two blocks, as many
/// as the multiprocessors hold) whose body `buildBody` emits.
LogicalResult createPersistentLaunch(
    RewriterBase &rewriter, Operation *grid, ArrayRef<Value> descriptors,
    int64_t numTiles, int64_t threads, int64_t sharedBytes,
    function_ref<void(gpu::LaunchOp)> buildBody, int64_t clusterSize = 1);

} // namespace mlir::conv3d

#endif // CONV3D_LIB_CONVERSION_GPU_TMAKERNEL_H
