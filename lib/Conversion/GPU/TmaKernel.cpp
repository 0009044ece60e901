//===- TmaKernel.cpp - the TMA-fed persistent kernels' shared layer -------===//

#include "TmaKernel.h"

#include "conv3d/Target/KernelFamily.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::conv3d;

//===----------------------------------------------------------------------===//
// Kernel side
//===----------------------------------------------------------------------===//

Value TmaKernel::sharedPtr(Value offset) const {
  Value address = arith::AddIOp::create(b, loc, smemBase, offset);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

Value TmaKernel::clusterPtr(Value offset) const {
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), sharedPtr(offset));
}

Value TmaKernel::fullBarrier(Value stage) const {
  KernelMath m = i32();
  return sharedPtr(m.add(m.constant(ring.fullBarrierOffset), m.mul(stage, 8)));
}

Value TmaKernel::emptyBarrier(Value stage) const {
  KernelMath m = i32();
  return sharedPtr(m.add(m.constant(ring.emptyBarrierOffset), m.mul(stage, 8)));
}

Value TmaKernel::aStage(Value stage) const {
  return i32().mul(stage, ring.aStageBytes);
}

Value TmaKernel::bStage(Value stage) const {
  KernelMath m = i32();
  return m.add(m.constant(ring.stages * ring.aStageBytes),
               m.mul(stage, ring.bStageBytes));
}

std::pair<Value, Value> TmaKernel::stageAndPhase(Value t) const {
  KernelMath m = i32();
  return {m.rem(t, ring.stages), m.bitAnd(m.div(t, ring.stages), 1)};
}

/// `operand`'s batch stride in depth strides, or `depth` for one image.
static int64_t batchSlices(const ConvGeometry &g, const FlatOperand &operand,
                           int64_t depth) {
  if (g.batch == 1 || operand.strides[1] == 0)
    return depth;
  return operand.strides[0] / operand.strides[1];
}

int64_t mlir::conv3d::inputBatchSlices(const ConvGeometry &g,
                                       const KernelOperands &ops) {
  return batchSlices(g, ops.input, g.inputOperandDepth());
}

int64_t mlir::conv3d::historyBatchSlices(const ConvGeometry &g,
                                         const KernelOperands &ops) {
  return batchSlices(g, ops.history, g.historyDepth);
}

TileOrigin mlir::conv3d::tileOrigin(TmaKernel &k, Value tile) {
  KernelMath m = k.i32();
  Value tn = m.rem(tile, k.numNT);
  Value rest = m.div(tile, k.numNT);
  // With 2-block clusters, `tile` indexes pairs of M tiles (numMT is even
  // per depth slice; over M an odd count ends past the last row).
  int64_t pairs = k.ring.multicastB;
  int64_t rowsOfTiles = ceilDiv(k.numMT, pairs);
  Value tm = m.rem(rest, rowsOfTiles);
  if (pairs > 1)
    tm = m.add(m.mul(tm, pairs), k.ctaRank);
  auto splitIndex = [&] {
    if (k.ring.splitCluster > 1)
      return k.ctaRank;
    return k.ring.splitK > 1 ? m.div(rest, rowsOfTiles) : Value();
  };
  if (k.ring.form == TmaIm2colForm::volume)
    return {m.mul(tm, k.ring.tileM), m.mul(tn, k.ring.tileN), splitIndex(),
            tile};
  // Per depth slice: the slice's rows are [slice * Ho*Wo, +Ho*Wo), cut into
  // sliceTiles tiles, the last one short.
  int64_t sliceSize = k.g.outputSliceSize();
  Value slice = m.div(tm, k.sliceTiles);
  Value sliceBegin = m.mul(slice, sliceSize);
  Value index = m.rem(tm, k.sliceTiles);
  Value inSlice = m.mul(index, k.ring.tileM);
  Value rowEnd =
      m.minU(m.add(inSlice, m.constant(k.ring.tileM)), m.constant(sliceSize));
  int64_t ownTiles = ceilDiv(sliceSize, k.ring.tileM);
  if (k.sliceTiles != ownTiles) {
    // A cluster's padding tile (the slice's tiles are odd): it loads the
    // slice's first rows, in bounds, and ends where it starts.
    Value padding =
        m.cmp(arith::CmpIPredicate::uge, index, m.constant(ownTiles));
    inSlice = m.select(padding, m.constant(0), inSlice);
    rowEnd = m.select(padding, m.constant(0), rowEnd);
  }
  return {m.add(sliceBegin, inSlice),
          m.mul(tn, k.ring.tileN),
          splitIndex(),
          tile,
          slice,
          m.add(sliceBegin, rowEnd)};
}

std::pair<Value, Value> mlir::conv3d::tileStepRange(TmaKernel &k,
                                                    const TileOrigin &tile) {
  const TmaRing &ring = k.ring;
  if (ring.form == TmaIm2colForm::volume)
    return buildStepRange(k.i32(), k.g, tile.m0, ring.tileM, ring.stepsPerSlice,
                          ring.totalSteps, ring.kOrder, ring.splitK,
                          tile.split);
  // Per depth slice: the steps of the depth taps that read inside the input
  // (q is outermost in the steps, so they are contiguous), within this
  // tile's split-K share. The producer and the consumers both take their
  // steps from here, so the ring's phases stay in step; a tile with no
  // step stores its epilogue of zeros. (qslice_outer's active slices are
  // exactly these taps.)
  KernelMath m = k.i32();
  Value od = m.rem(tile.slice, k.g.outputSize(kDepth));
  auto [qBegin, qEnd] = k.g.validTapRange(m, kDepth, od);
  Value begin = m.mul(qBegin, ring.stepsPerSlice);
  Value end = m.mul(qEnd, ring.stepsPerSlice);
  if (ring.splitK > 1) {
    int64_t per = ceilDiv(ring.totalSteps, ring.splitK);
    Value splitBegin = m.mul(tile.split, per);
    begin = m.smax(begin, splitBegin);
    end = m.smin(end, m.add(splitBegin, m.constant(per)));
    end = m.smax(end, begin);
  }
  return {begin, end};
}

void mlir::conv3d::forEachTile(
    TmaKernel &k, function_ref<Value(const TileOrigin &, Value, Value)> body) {
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

void mlir::conv3d::emitTmaKernelPrologue(TmaKernel &k, gpu::LaunchOp launch) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
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
  constexpr int64_t kAlignment = 1024;
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  k.dynamicSmem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      workgroup));
  Value raw = toI32(
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, k.dynamicSmem));
  Value aligned =
      arith::AndIOp::create(b, loc, m.add(raw, m.constant(kAlignment - 1)),
                            m.constant(~(kAlignment - 1)));
  k.smemBase = aligned;
  k.smemShift = m.sub(aligned, raw);

  // Descriptors travel as i64 kernel arguments.
  Type genericPtr = LLVM::LLVMPointerType::get(ctx);
  k.descA = LLVM::IntToPtrOp::create(b, loc, genericPtr, k.descA);
  k.descB = LLVM::IntToPtrOp::create(b, loc, genericPtr, k.descB);
  if (k.descHistory)
    k.descHistory = LLVM::IntToPtrOp::create(b, loc, genericPtr, k.descHistory);
}

void mlir::conv3d::emitTmaProducer(TmaKernel &k) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const TmaRing &ring = k.ring;
  const ConvGeometry &g = k.g;
  KernelMath m = k.i32();
  auto i16 = [&](Value v) {
    return arith::TruncIOp::create(b, loc, b.getI16Type(), v).getResult();
  };
  forEachTile(k, [&](const TileOrigin &tile, Value done, Value) {
    auto [begin, end] = tileStepRange(k, tile);
    Value numSteps = m.sub(end, begin);
    // A CTA pair splits the tile: this CTA's rows of A and of B.
    // A 2-block cluster shares the B tile: this block's half, multicast.
    Value rowA = tile.m0, rowB = tile.n0;
    if (ring.ctaGroup == 2) {
      rowA = m.add(tile.m0, m.mul(k.ctaRank, ring.tileM / 2));
      rowB = m.add(tile.n0, m.mul(k.ctaRank, ring.tileN / 2));
    }
    Value bHalfOffset, multicastMask;
    if (ring.multicastB == 2) {
      rowB = m.add(tile.n0, m.mul(k.ctaRank, ring.tileN / 2));
      bHalfOffset = m.mul(k.ctaRank, ring.bStageBytes / 2);
      multicastMask =
          arith::ConstantIntOp::create(b, loc, b.getI16Type(), 0b11);
    }
    // The first output position of this CTA's rows: TMA walks the rows
    // from its input corner (W, then H, D and the batch; per depth slice W,
    // H and the slice), zeros in the halo and past the last row.
    auto pos = g.decomposeM(m, rowA);
    int64_t rank = ring.form == TmaIm2colForm::volume ? 5 : 4;
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
    NVVM::CTAGroupKindAttr group;
    if (ring.ctaGroup == 2) {
      // The loads complete on the even CTA's barrier: its shared::cluster
      // address is this CTA's with the rank bit (24) cleared.
      full = LLVM::IntToPtrOp::create(
          b, loc, full.getType(),
          m.bitAnd(LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), full),
                   ~(int64_t(1) << 24)));
      group = NVVM::CTAGroupKindAttr::get(b.getContext(),
                                          NVVM::CTAGroupKind::CTA_2);
      Value leader = m.cmp(arith::CmpIPredicate::eq, k.ctaRank, m.constant(0));
      auto ifLeader = scf::IfOp::create(b, loc, leader, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifLeader.thenBlock());
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), full, m.constant(ring.stepBytes),
          NVVM::MemScopeKind::CTA, false, Value());
    } else {
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), full, m.constant(ring.stepBytes),
          NVVM::MemScopeKind::CTA, false, Value());
    }
    Value step = m.add(begin, t);
    Value tap = m.div(step, ring.channelBlocks);
    Value c0 = m.mul(m.rem(step, ring.channelBlocks), kTmaChannelBlock);
    auto qrs = delinearize<KernelMath, 3>(
        m, tap, {g.window[0], g.window[1], g.window[2]});
    // Coordinates and im2col offsets list the innermost dimension first.
    auto [coords, tapOffsets] = g.tmaIm2colLoadCoords(
        m, ring.form, pos, {qrs[0], qrs[1], qrs[2]}, ring.batchSlices);
    SmallVector<Value> aCoords = {c0};
    aCoords.append(coords.begin(), coords.begin() + rank - 1);
    Value descA = k.descA;
    if (k.descHistory) {
      // Depth d of concat(history, input): slice n * historyBatchSlices + d
      // of the history where d < historyDepth, else slice n * batchSlices +
      // d - historyDepth of the input (tmaIm2colLoadCoords counted d in the
      // input's slices). The tile's valid taps read inside the
      // concatenation (tileStepRange), so d >= 0.
      Value d = g.inputCoord(m, kDepth, pos[1], qrs[0]);
      Value fromHistory = m.ult(d, m.constant(g.historyDepth));
      Value historySlice = m.add(m.mul(pos[0], ring.historyBatchSlices), d);
      Value inputSlice = m.add(aCoords[3], m.constant(-g.historyDepth));
      aCoords[3] = arith::SelectOp::create(b, loc, fromHistory, historySlice,
                                           inputSlice);
      descA =
          arith::SelectOp::create(b, loc, fromHistory, k.descHistory, k.descA);
    }
    SmallVector<Value> offsets;
    for (Value offset : ArrayRef(tapOffsets).take_front(rank - 2))
      offsets.push_back(i16(offset));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, k.clusterPtr(k.aStage(stage)), descA, aCoords, full, offsets,
        Value(), Value(), NVVM::TMALoadMode::IM2COL, false, group, Value());
    SmallVector<Value> bCoords = {c0, tap, rowB};
    Value bDestination = k.bStage(stage);
    if (bHalfOffset)
      bDestination = m.add(bDestination, bHalfOffset);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, k.clusterPtr(bDestination), k.descB, bCoords, full,
        ValueRange{}, multicastMask, Value(), NVVM::TMALoadMode::TILE, false,
        group, Value());
    return numSteps;
  });
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

namespace {

/// CUtensorMapDataType and CUtensorMapSwizzle values.
constexpr int64_t kTmaFloat16 = 6, kTmaBFloat16 = 9, kTmaSwizzle64B = 2,
                  kTmaSwizzle128B = 3;

constexpr StringLiteral kIm2colDescriptorFn = kTmaIm2colDescriptorFn;
constexpr StringLiteral kIm2colSliceDescriptorFn =
    "conv3dTmaIm2colSliceDescriptor";
constexpr StringLiteral kTiledDescriptorFn = kTmaTiledDescriptorFn;
constexpr StringLiteral kTiled5dDescriptorFn = "conv3dTmaTiled5dDescriptor";
constexpr StringLiteral kSMCountFn = "conv3dMultiprocessorCount";

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

FailureOr<GridKernel> mlir::conv3d::analyzeTmaGrid(scf::ForallOp grid,
                                                   Target target) {
  std::string pass = ("conv3d-lower-to-" + stringifyTarget(target)).str();
  FailureOr<GridKernel> kernel = analyzeGrid(grid);
  if (failed(kernel))
    return grid.emitError(pass + ": not an implicit-GEMM grid loop produced "
                                 "by conv3d-implicit-gemm");
  IGemmConfigAttr config = kernel->config;
  Target configured = config.getKernel();
  if (configured == Target::sm80)
    return kernel;
  if (kernel->groups > 1)
    return grid.emitError() << pass << ": the " << stringifyTarget(target)
                            << " kernel does not compute grouped "
                               "convolutions (a grid of "
                            << kernel->groups
                            << " groups); conv3d-select-config gives them "
                               "to the sm80 kernel";
  if (configured != target && configured != Target::cpu)
    return grid.emitError() << pass << ": " << config << " is for the "
                            << stringifyTarget(configured) << " kernel";
  if (failed(checkGpuOperands(*kernel, stringifyTarget(target))))
    return failure();
  // conv3d-select-config gives the sm80 kernel what this one cannot take;
  // a grid configured otherwise is refused with its family's reason.
  const KernelFamily *family = getKernelFamilyFor(config, target);
  if (std::optional<std::string> problem =
          family->canImplement(kernel->problem()))
    return grid.emitError()
           << "cannot lower " << config << " to the " << stringifyTarget(target)
           << " kernel: " << *problem;
  return kernel;
}

LogicalResult mlir::conv3d::createTmaLaunch(
    RewriterBase &rewriter, scf::ForallOp grid, StringRef pass,
    const GridKernel &kernel, const KernelOperands &ops, int64_t tileM,
    int64_t tileN, int64_t numTiles, int64_t threads, int64_t sharedBytes,
    std::optional<TmaOutputStore> outputStore,
    function_ref<void(gpu::LaunchOp, const TmaDescriptors &)> buildBody,
    int64_t clusterSize, TmaIm2colForm form) {
  Location loc = grid.getLoc();
  ConvGeometry g = kernel.geometry();
  Value input = kernel.im2col.getInput(),
        filter = kernel.filterLoad.getFilter();
  ModuleOp module = grid->getParentOfType<ModuleOp>();
  if (!module)
    return grid.emitError() << pass
                            << " needs an enclosing module (for the "
                               "descriptor functions)";
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), v)
        .getResult();
  };
  int64_t dataType =
      kernel.inputElementType().isBF16() ? kTmaBFloat16 : kTmaFloat16;
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  Value descA, descHistory;
  if (form == TmaIm2colForm::depthSlices) {
    // An operand's depth slices as the images of a rank-4 tensor: image n's
    // slice d is slice n * batchSlices + d (the family's canImplement checked
    // that the batch pitch is a whole number of depth pitches, at least the
    // depth); the slices between images are never loaded. The input's and
    // a history's descriptors differ only in these.
    func::FuncOp sliceFn =
        declareDescriptorFunction(module, kIm2colSliceDescriptorFn, 18);
    auto sliceDescriptor = [&](const FlatOperand &operand, int64_t depth,
                               int64_t batchSlices) {
      SmallVector<Value> sliceArgs = {
          baseAddress(rewriter, loc, operand.memref),
          i64(dataType),
          i64((g.batch - 1) * batchSlices + depth),
          i64(g.inputSize[kHeight]),
          i64(g.inputSize[kWidth]),
          i64(g.channels),
          i64(operand.strides[1]),
          i64(operand.strides[2]),
          i64(operand.strides[3]),
          i64(lower[kHeight]),
          i64(lower[kWidth]),
          i64(upper[kHeight]),
          i64(upper[kWidth]),
          i64(g.strides[kHeight]),
          i64(g.strides[kWidth]),
          i64(kTmaChannelBlock),
          i64(tileM),
          i64(kTmaSwizzle128B)};
      return func::CallOp::create(rewriter, loc, sliceFn, sliceArgs)
          .getResult(0);
    };
    descA = sliceDescriptor(ops.input, g.inputOperandDepth(),
                            inputBatchSlices(g, ops));
    if (ops.history && g.historyDepth != 0)
      descHistory = sliceDescriptor(ops.history, g.historyDepth,
                                    historyBatchSlices(g, ops));
  } else {
    func::FuncOp im2colFn =
        declareDescriptorFunction(module, kIm2colDescriptorFn, 23);
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
                                     i64(kTmaChannelBlock),
                                     i64(tileM),
                                     i64(kTmaSwizzle128B)};
    descA =
        func::CallOp::create(rewriter, loc, im2colFn, im2colArgs).getResult(0);
  }
  func::FuncOp tiledFn =
      declareDescriptorFunction(module, kTiledDescriptorFn, 11);
  // The FQRSC filter as an [F][Q*R*S][C] tensor (its (q, r, s, c)
  // dimensions collapse: flattenOperands checked it); a box is tile_n
  // filters x one tap x 64 channels.
  int64_t taps = g.window[0] * g.window[1] * g.window[2];
  SmallVector<Value> tiledArgs = {baseAddress(rewriter, loc, filter),
                                  i64(dataType),
                                  i64(g.channels),
                                  i64(taps),
                                  i64(g.filters),
                                  i64(g.channels * ops.filter.strides[0]),
                                  i64(ops.filter.strides[1]),
                                  i64(kTmaChannelBlock),
                                  i64(1),
                                  i64(tileN),
                                  i64(kTmaSwizzle128B)};
  Value descB =
      func::CallOp::create(rewriter, loc, tiledFn, tiledArgs).getResult(0);
  // The stored output: the [M][F] matrix (a third dimension of 1), in boxes
  // of tile_m rows.
  Value descC;
  if (outputStore) {
    Value output = kernel.store.getOutput();
    Type outElem = kernel.outputElementType();
    int64_t rowStride = outputStore->rowStride;
    SmallVector<Value> outputArgs = {
        baseAddress(rewriter, loc, output),
        i64(outElem.isBF16() ? kTmaBFloat16 : kTmaFloat16),
        i64(g.filters),
        i64(g.gemmM()),
        i64(1),
        i64(rowStride),
        i64(g.gemmM() * rowStride),
        i64(outputStore->boxColumns),
        i64(tileM),
        i64(1),
        i64(outputStore->boxColumns == kTmaChannelBlock ? kTmaSwizzle128B
                                                        : kTmaSwizzle64B)};
    descC =
        func::CallOp::create(rewriter, loc, tiledFn, outputArgs).getResult(0);
  }
  TmaDescriptors all{descA, descB, descC, descHistory};
  SmallVector<Value> descriptors = {descA, descB};
  for (Value optional : {descC, descHistory})
    if (optional)
      descriptors.push_back(optional);
  return createPersistentLaunch(
      rewriter, grid, descriptors, numTiles, threads, sharedBytes,
      [&](gpu::LaunchOp launch) { buildBody(launch, all); }, clusterSize);
}

Value mlir::conv3d::emitTmaDescriptorCall(OpBuilder &b, Location loc,
                                          ModuleOp module, StringRef function,
                                          Value memref,
                                          ArrayRef<int64_t> arguments) {
  func::FuncOp fn =
      declareDescriptorFunction(module, function, 1 + arguments.size());
  SmallVector<Value> args = {baseAddress(b, loc, memref)};
  for (int64_t v : arguments)
    args.push_back(
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), v).getResult());
  return func::CallOp::create(b, loc, fn, args).getResult(0);
}

Value mlir::conv3d::emitTiled5dDescriptor(OpBuilder &b, Location loc,
                                          ModuleOp module, Value memref,
                                          ArrayRef<int64_t> dims,
                                          ArrayRef<int64_t> strides,
                                          ArrayRef<int64_t> box,
                                          int64_t rowBytes) {
  func::FuncOp fn = declareDescriptorFunction(module, kTiled5dDescriptorFn, 17);
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  Type elem = getElementTypeOrSelf(memref.getType());
  SmallVector<Value> args = {baseAddress(b, loc, memref),
                             i64(elem.isBF16() ? kTmaBFloat16 : kTmaFloat16)};
  for (int64_t v : dims)
    args.push_back(i64(v));
  for (int64_t v : strides)
    args.push_back(i64(v));
  for (int64_t v : box)
    args.push_back(i64(v));
  args.push_back(i64(rowBytes == 128 ? kTmaSwizzle128B : kTmaSwizzle64B));
  return func::CallOp::create(b, loc, fn, args).getResult(0);
}

LogicalResult mlir::conv3d::createPersistentLaunch(
    RewriterBase &rewriter, Operation *grid, ArrayRef<Value> descriptors,
    int64_t numTiles, int64_t threads, int64_t sharedBytes,
    function_ref<void(gpu::LaunchOp)> buildBody, int64_t clusterSize) {
  Location loc = grid->getLoc();
  ModuleOp module = grid->getParentOfType<ModuleOp>();
  Value zero =
      arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), 0);
  // No launch unless the driver encoded every descriptor (the run reports
  // why it did not).
  Value ready;
  for (Value descriptor : descriptors) {
    Value set = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                      descriptor, zero);
    ready = ready ? arith::AndIOp::create(rewriter, loc, ready, set) : set;
  }
  auto launchIf = scf::IfOp::create(rewriter, loc, ready, false);
  rewriter.setInsertionPointToStart(launchIf.thenBlock());

  // Persistent: one block per multiprocessor (the device's count, from the
  // runtime), or one per tile when there are fewer.
  func::FuncOp smCountFn = declareDescriptorFunction(module, kSMCountFn, 0);
  Value smCount = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      func::CallOp::create(rewriter, loc, smCountFn, ValueRange{})
          .getResult(0));
  if (clusterSize > 1)
    smCount = arith::DivUIOp::create(
        rewriter, loc, smCount,
        arith::ConstantIndexOp::create(rewriter, loc, clusterSize));
  Value blocks = arith::MinUIOp::create(
      rewriter, loc, smCount,
      arith::ConstantIndexOp::create(rewriter, loc, numTiles));
  if (clusterSize > 1)
    blocks = arith::MulIOp::create(
        rewriter, loc, blocks,
        arith::ConstantIndexOp::create(rewriter, loc, clusterSize));
  createKernelLaunch(rewriter, loc, blocks, threads, sharedBytes, buildBody,
                     clusterSize);
  return success();
}
