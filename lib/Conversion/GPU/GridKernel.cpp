//===- GridKernel.cpp - reading a grid loop, operands, K schedule ---------===//
//
// The host- and kernel-side facts every GPU lowering derives from an
// implicit-GEMM grid loop before it emits its mainloop (KernelCommon.h).
//
//===----------------------------------------------------------------------===//

#include "KernelCommon.h"

#include "conv3d/Transforms/Passes.h"
#include "conv3d/Transforms/TileSchedule.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;
using namespace mlir::conv3d;

ConvGeometry GridKernel::geometry() const {
  ConvGeometry g = im2col.getGeometry();
  std::array<int64_t, 5> filterShape =
      getShape5(filterLoad.getFilter().getType());
  g.filters =
      filterLayout() == FilterLayout::qrscf ? filterShape[4] : filterShape[0];
  return g;
}

Type GridKernel::inputElementType() const {
  return getElementTypeOrSelf(im2col.getInput().getType());
}

Type GridKernel::outputElementType() const {
  return getElementTypeOrSelf(store.getOutput().getType());
}

FailureOr<GridKernel> mlir::conv3d::analyzeGrid(scf::ForallOp grid) {
  GridKernel kernel;
  kernel.grid = grid;
  kernel.config = grid->getAttrOfType<IGemmConfigAttr>(kIGemmConfigAttrName);
  WalkResult result = grid.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadIm2colTileOp>(op)) {
      // Q-slice loops repeat the tile ops; they must agree.
      if (kernel.im2col && (kernel.im2col.getInput() != load.getInput() ||
                            kernel.im2col.getQuant() != load.getQuant()))
        return WalkResult::interrupt();
      kernel.im2col = load;
    } else if (auto load = dyn_cast<LoadFilterTileOp>(op)) {
      if (kernel.filterLoad &&
          kernel.filterLoad.getFilter() != load.getFilter())
        return WalkResult::interrupt();
      kernel.filterLoad = load;
    } else if (auto store = dyn_cast<StoreOutputTileOp>(op)) {
      if (kernel.store)
        return WalkResult::interrupt();
      kernel.store = store;
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted() || !kernel.config || !kernel.im2col ||
      !kernel.filterLoad || !kernel.store)
    return failure();
  // (split,) (group,) M tile, N tile: the split is the one recorded. (The
  // lowerings compute the tiles from the block index: a dense grid's
  // dimensions are not read.)
  int64_t split = kernel.config.getSplitK() > 1 ? 1 : 0;
  if (grid.getRank() == split + 3) {
    ArrayRef<int64_t> bounds = grid.getStaticUpperBound();
    if (ShapedType::isDynamic(bounds[split]) ||
        !llvm::all_of(grid.getStaticLowerBound(),
                      [](int64_t lb) { return lb == 0; }) ||
        !llvm::all_of(grid.getStaticStep(),
                      [](int64_t step) { return step == 1; }))
      return failure();
    kernel.groups = bounds[split];
    kernel.groupIv = grid.getInductionVar(split);
  }
  return kernel;
}

/// The tile ops' operands of `kernel` (null ones included).
static SmallVector<Value> tileOperands(const GridKernel &kernel) {
  LoadIm2colTileOp im2col = kernel.im2col;
  StoreOutputTileOp store = kernel.store;
  return {im2col.getInput(),
          im2col.getHistory(),
          im2col.getNormGamma(),
          im2col.getNormBeta(),
          im2col.getNormScale(),
          im2col.getAmax(),
          kernel.filterLoad.getFilter(),
          store.getOutput(),
          store.getBias(),
          store.getResidual()};
}

LogicalResult mlir::conv3d::cloneGroupViews(OpBuilder &b,
                                            const GridKernel &kernel,
                                            Value group, IRMapping &views) {
  Block *body = kernel.grid.getBody();
  // The ops of the body the operands are computed by, found backwards.
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Value> worklist;
  for (Value operand : tileOperands(kernel))
    if (operand)
      worklist.push_back(operand);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value == kernel.groupIv)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == body)
        return failure(); // another induction variable of the grid
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!kernel.grid->isProperAncestor(op))
      continue; // defined above the grid
    // Only pure ops of the body itself (index math, views) are cloned.
    if (op->getBlock() != body || op->getNumRegions() != 0 || !isPure(op))
      return failure();
    if (needed.insert(op).second)
      llvm::append_range(worklist, op->getOperands());
  }
  views.map(kernel.groupIv, group);
  for (Operation &op : body->without_terminator())
    if (needed.contains(&op))
      b.clone(op, views);
  return success();
}

/// The stride of `memref`'s innermost dimension, if static.
static std::optional<int64_t> innermostStride(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(strides.back()))
    return std::nullopt;
  return strides.back();
}

LogicalResult mlir::conv3d::checkGpuOperands(const GridKernel &kernel,
                                             StringRef target) {
  scf::ForallOp grid = kernel.grid;
  Value input = kernel.im2col.getInput(),
        filter = kernel.filterLoad.getFilter();
  Type inElem = kernel.inputElementType();
  if (!inElem.isBF16() && !inElem.isF16())
    return grid.emitError() << target
                            << " computes bf16 and f16 convolutions on the "
                               "tensor cores; "
                            << inElem << " inputs run on the CPU target";
  if (getElementTypeOrSelf(filter.getType()) != inElem)
    return grid.emitError() << target << " needs the filter's element type ("
                            << getElementTypeOrSelf(filter.getType())
                            << ") to be the input's (" << inElem << ")";
  // The sm80 loaders read a history operand and apply an input prologue;
  // the sm90 kernel reads a history operand (per depth slice), the TMA
  // kernels apply no prologue (select-config sends such convolutions to
  // the sm80 kernel), and neither may be dropped silently.
  if (kernel.im2col.hasPrologue() && target != "sm80")
    return grid.emitError()
           << target
           << " does not apply an input prologue; its convolutions run on "
              "the sm80 kernel";
  // The sm80 loaders apply the norm from the prepass's statistic (an empty
  // input is never read).
  auto inputType = cast<MemRefType>(input.getType());
  if (kernel.im2col.getNormGamma() && !kernel.im2col.getNormScale() &&
      inputType.getNumElements() != 0)
    return grid.emitError()
           << target
           << " applies rms_norm with the per-voxel statistic of the "
              "conv3d.voxel_rms_scale prepass (norm_scale), which this "
              "load_im2col_tile does not have; run conv3d-implicit-gemm "
              "to tile the convolution";
  if (kernel.im2col.getHistory() && target != "sm80" && target != "sm90")
    return grid.emitError()
           << target
           << " does not read a history operand; its convolutions run on "
              "the sm80 kernel";
  // Vector and TMA accesses run along the channels (input, output,
  // residual, bias) and along the filter's contiguous axis.
  for (auto [operand, name] :
       {std::pair{input, "input"}, std::pair{filter, "filter"},
        std::pair{Value(kernel.im2col.getHistory()), "history"},
        std::pair{Value(kernel.im2col.getNormGamma()), "rms_norm scale"},
        std::pair{Value(kernel.im2col.getNormBeta()), "norm_beta"},
        std::pair{Value(kernel.store.getOutput()), "output"},
        std::pair{Value(kernel.store.getResidual()), "residual"},
        std::pair{Value(kernel.store.getBias()), "bias"}}) {
    if (!operand)
      continue;
    std::optional<int64_t> stride = innermostStride(operand);
    if (!stride || *stride != 1)
      return grid.emitError()
             << target << " needs a unit stride along the " << name
             << "'s innermost dimension, got " << operand.getType();
  }
  return success();
}

FailureOr<FlatOperand> mlir::conv3d::flattenOperand(OpBuilder &b, Location loc,
                                                    Value memref) {
  if (!memref)
    return FlatOperand{};
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return failure();
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip_equal(type.getShape(), strides))
    extent += (size - 1) * stride;
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  MemRefLayoutAttrInterface layout;
  OpFoldResult offsetValue = b.getIndexAttr(offset);
  if (offset != 0) {
    layout = StridedLayoutAttr::get(b.getContext(), offset, {1});
    if (ShapedType::isDynamic(offset))
      offsetValue = meta.getOffset();
  }
  auto flatType = MemRefType::get({extent}, type.getElementType(), layout,
                                  type.getMemorySpace());
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, meta.getBaseBuffer(), offsetValue,
      ArrayRef<OpFoldResult>{b.getIndexAttr(extent)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return FlatOperand{flat, strides};
}

/// The filter as a K x F view: (stride of k, stride of f), provided the
/// (q, r, s, c) dimensions collapse into one.
static std::optional<std::array<int64_t, 2>>
filterMatrixStrides(Value filter, FilterLayout layout) {
  auto type = cast<MemRefType>(filter.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  unsigned first = layout == FilterLayout::qrscf ? 0 : 1;
  for (unsigned d = first; d < first + 3; ++d)
    if (shape[d] > 1 && strides[d] != shape[d + 1] * strides[d + 1])
      return std::nullopt;
  int64_t fStride = layout == FilterLayout::qrscf ? strides[4] : strides[0];
  return std::array<int64_t, 2>{strides[first + 3], fStride};
}

FailureOr<KernelOperands>
mlir::conv3d::flattenOperands(OpBuilder &b, Location loc,
                              const GridKernel &kernel) {
  return flattenOperands(b, loc, kernel, IRMapping());
}

FailureOr<KernelOperands>
mlir::conv3d::flattenOperands(OpBuilder &b, Location loc,
                              const GridKernel &kernel,
                              const IRMapping &views) {
  auto view = [&](Value value) { return views.lookupOrDefault(value); };
  Value filter = view(kernel.filterLoad.getFilter());
  std::optional<std::array<int64_t, 2>> filterStrides =
      filterMatrixStrides(filter, kernel.filterLayout());
  auto input = flattenOperand(b, loc, view(kernel.im2col.getInput()));
  auto flatFilter = flattenOperand(b, loc, filter);
  auto output = flattenOperand(b, loc, view(kernel.store.getOutput()));
  auto bias = flattenOperand(b, loc, view(kernel.store.getBias()));
  auto residual = flattenOperand(b, loc, view(kernel.store.getResidual()));
  auto history = flattenOperand(b, loc, view(kernel.im2col.getHistory()));
  auto normScale = flattenOperand(b, loc, view(kernel.im2col.getNormScale()));
  auto normGamma = flattenOperand(b, loc, view(kernel.im2col.getNormGamma()));
  auto normBeta = flattenOperand(b, loc, view(kernel.im2col.getNormBeta()));
  if (!filterStrides || failed(input) || failed(flatFilter) || failed(output) ||
      failed(bias) || failed(residual) || failed(history) ||
      failed(normScale) || failed(normGamma) || failed(normBeta))
    return failure();
  KernelOperands ops;
  ops.input = *input;
  ops.filter = FlatOperand{flatFilter->memref,
                           {(*filterStrides)[0], (*filterStrides)[1]}};
  ops.output = *output;
  ops.bias = *bias;
  ops.residual = *residual;
  ops.amax = view(kernel.im2col.getAmax());
  ops.history = *history;
  ops.normScale = *normScale;
  ops.normGamma = *normGamma;
  ops.normBeta = *normBeta;
  // A split-K workspace (mode = partial) stacks one NDHWF slab per split:
  // the positions are its slabs'.
  ArrayRef<int64_t> outShape =
      cast<MemRefType>(view(kernel.store.getOutput()).getType()).getShape();
  llvm::copy(outShape.take_back(5), ops.outputShape.begin());
  return ops;
}

/// The largest power of two up to 8 dividing `value` (8 for 0).
static int64_t powerOfTwoDividing(int64_t value) {
  uint64_t bits = static_cast<uint64_t>(value);
  return bits == 0 ? 8 : std::min<int64_t>(8, int64_t(bits & (~bits + 1)));
}

/// The largest power of two up to 8 known to divide the index `value`:
/// constants, and products and sums of them with unknowns (a group view's
/// offset group * C/G); 1 for anything else.
static int64_t knownPowerOfTwoDividing(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return powerOfTwoDividing(*constant);
  if (auto mul = value.getDefiningOp<arith::MulIOp>())
    return std::min<int64_t>(8, knownPowerOfTwoDividing(mul.getLhs()) *
                                    knownPowerOfTwoDividing(mul.getRhs()));
  if (auto add = value.getDefiningOp<arith::AddIOp>())
    return std::min(knownPowerOfTwoDividing(add.getLhs()),
                    knownPowerOfTwoDividing(add.getRhs()));
  return 1;
}

int64_t mlir::conv3d::elementAlignment(Value memref) {
  if (!memref)
    return 8;
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return 1;
  int64_t common = 8;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
    common = ShapedType::isDynamic(stride)
                 ? 1
                 : std::min(common, powerOfTwoDividing(stride));
  if (!ShapedType::isDynamic(offset))
    return std::min(common, powerOfTwoDividing(offset));
  // A view's offset: the source's plus each offset times the source's
  // stride.
  auto view = memref.getDefiningOp<memref::SubViewOp>();
  if (!view)
    return 1;
  auto sourceType = cast<MemRefType>(view.getSource().getType());
  SmallVector<int64_t> sourceStrides;
  int64_t sourceOffset;
  if (failed(sourceType.getStridesAndOffset(sourceStrides, sourceOffset)))
    return 1;
  // (The source's offset, or its own view's, and its outer strides.)
  common = std::min(common, elementAlignment(view.getSource()));
  for (auto [offsetValue, stride] :
       llvm::zip_equal(view.getMixedOffsets(), sourceStrides)) {
    if (ShapedType::isDynamic(stride))
      return 1;
    std::optional<int64_t> constant = getConstantIntValue(offsetValue);
    int64_t aligned =
        constant ? powerOfTwoDividing(*constant * stride)
                 : std::min<int64_t>(
                       8, knownPowerOfTwoDividing(cast<Value>(offsetValue)) *
                              powerOfTwoDividing(stride));
    common = std::min(common, aligned);
  }
  return common;
}

bool mlir::conv3d::isChannelSlice(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() == 5 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(strides[3]) && strides[3] > type.getDimSize(4);
}

int64_t mlir::conv3d::epilogueAlignmentOf(const GridKernel &kernel) {
  return std::min({elementAlignment(kernel.store.getOutput()),
                   elementAlignment(kernel.store.getResidual()),
                   elementAlignment(kernel.store.getBias())});
}

bool mlir::conv3d::fitsI32Indices(const KernelOperands &ops,
                                  const ConvGeometry &g, int64_t tileM,
                                  int64_t tileK) {
  auto extent = [](const FlatOperand &operand) -> int64_t {
    return operand ? cast<MemRefType>(operand.memref.getType()).getDimSize(0)
                   : 0;
  };
  constexpr int64_t kI32Limit = int64_t(1) << 31;
  return extent(ops.input) < kI32Limit && extent(ops.history) < kI32Limit &&
         extent(ops.normScale) < kI32Limit && extent(ops.filter) < kI32Limit &&
         extent(ops.output) < kI32Limit && extent(ops.residual) < kI32Limit &&
         g.gemmM() + tileM < kI32Limit && g.gemmK() + tileK < kI32Limit;
}

std::pair<Value, Value>
mlir::conv3d::buildStepRange(KernelMath math, const ConvGeometry &g, Value m0,
                             int64_t tileM, int64_t stepsPerSlice,
                             int64_t totalSteps, KOrder kOrder, int64_t splitK,
                             Value splitIndex) {
  if (kOrder == KOrder::qslice_outer) {
    auto [beginIndex, endIndex] =
        emitActiveSliceRange(math.b, math.loc, g, tileM, math.toIndex(m0));
    Value begin = math.fromIndex(beginIndex), end = math.fromIndex(endIndex);
    // No active slice: an empty range (end may be below begin).
    end = math.select(math.ult(begin, end), end, begin);
    return {math.mul(begin, stepsPerSlice), math.mul(end, stepsPerSlice)};
  }
  int64_t per = ceilDiv(totalSteps, splitK);
  Value begin = splitIndex ? math.mul(splitIndex, per) : math.constant(0);
  Value end =
      math.minU(math.add(begin, math.constant(per)), math.constant(totalSteps));
  end = math.select(math.ult(begin, end), end, begin);
  return {begin, end};
}

KSchedule mlir::conv3d::buildKSchedule(KernelMath math, const ConvGeometry &g,
                                       Value m0, int64_t tileM, int64_t tileK,
                                       KOrder kOrder, int64_t splitK,
                                       Value splitIndex) {
  int64_t sliceK = g.gemmK() / g.window[kDepth];
  bool bySlice = kOrder == KOrder::qslice_outer;
  int64_t perSlice = ceilDiv(sliceK, tileK);
  int64_t total =
      bySlice ? perSlice * g.window[kDepth] : ceilDiv(g.gemmK(), tileK);
  auto [begin, end] = buildStepRange(math, g, m0, tileM, perSlice, total,
                                     kOrder, splitK, splitIndex);
  OpBuilder *b = &math.b;
  Location loc = math.loc;
  Type type = math.type;
  Value numSteps = math.sub(end, begin);
  if (bySlice)
    return {numSteps, [=, begin = begin](Value t) {
              KernelMath math{*b, loc, type};
              Value step = math.add(begin, t);
              Value q = math.div(step, perSlice);
              Value k0 = math.add(math.mul(q, sliceK),
                                  math.mul(math.rem(step, perSlice), tileK));
              Value limit = math.mul(math.add(q, math.constant(1)), sliceK);
              return std::make_pair(k0, limit);
            }};
  return {numSteps, [=, begin = begin, k = g.gemmK()](Value t) {
            KernelMath math{*b, loc, type};
            return std::make_pair(math.mul(math.add(begin, t), tileK),
                                  math.constant(k));
          }};
}

gpu::LaunchOp mlir::conv3d::createKernelLaunch(
    OpBuilder &b, Location loc, OpFoldResult blocks, int64_t threads,
    int64_t sharedBytes, function_ref<void(gpu::LaunchOp)> buildBody,
    int64_t clusterSize) {
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value start =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value shared =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedBytes);
  Value cluster = clusterSize > 1
                      ? arith::ConstantIndexOp::create(b, loc, clusterSize)
                      : Value();
  auto launch = gpu::LaunchOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, blocks), one, one,
      arith::ConstantIndexOp::create(b, loc, threads), one, one, shared,
      tokenType, ValueRange{start}, TypeRange{}, TypeRange{}, cluster,
      cluster ? one : Value(), cluster ? one : Value());
  // LaunchOp::build adds the 12 block and thread arguments only; a
  // cluster launch also has the cluster ids and sizes (arguments 12-17).
  if (cluster)
    for (int i = 0; i < 6; ++i)
      launch.getBody().front().addArgument(b.getIndexType(), loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    buildBody(launch);
    gpu::TerminatorOp::create(b, loc);
  }
  gpu::WaitOp::create(b, loc, Type(), ValueRange{launch.getAsyncToken()});
  return launch;
}

LogicalResult mlir::conv3d::lowerConfiguredGrids(
    Operation *root,
    function_ref<LogicalResult(RewriterBase &, scf::ForallOp)> lower) {
  SmallVector<scf::ForallOp> grids;
  root->walk([&](scf::ForallOp grid) {
    if (grid->hasAttr(kIGemmConfigAttrName))
      grids.push_back(grid);
  });
  IRRewriter rewriter(root->getContext());
  for (scf::ForallOp grid : grids)
    if (failed(lower(rewriter, grid)))
      return failure();
  return success();
}
