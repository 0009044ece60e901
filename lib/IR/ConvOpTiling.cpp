//===- ConvOpTiling.cpp - TilingInterface for conv3d.conv -----------------===//
//
// conv3d.conv tiles over its output dimensions (n, do, ho, wo, f), so the
// upstream tiling drivers (scf tiling, the transform dialect) apply to it.
// The reduction over (q, r, s, c) stays inside each tile. A grouped
// convolution's F tiles hold whole groups and read their groups' channels.
//
// A tile of output positions reads a window of the input that may overlap
// the padding halo, and the overlap differs from tile to tile. Rather than
// inventing per-tile dynamic padding, the tile reads a slice of the padded
// input (`tensor.pad` sliced with the upstream `bubbleUpPadSlice`, which
// turns it into a pad of a slice) and convolves it without padding.
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::conv3d;

static OpFoldResult getDimSize(OpBuilder &b, Location loc, Value value,
                               int64_t dim) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  if (isa<RankedTensorType>(type))
    return tensor::DimOp::create(b, loc, value, dim).getResult();
  return memref::DimOp::create(b, loc, value, dim).getResult();
}

SmallVector<Range> ConvOp::getIterationDomain(OpBuilder &b) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(*this);
  SmallVector<Range> domain;
  for (int64_t dim = 0; dim < 5; ++dim)
    domain.push_back(Range{b.getIndexAttr(0),
                           getDimSize(b, getLoc(), getInit(), dim),
                           b.getIndexAttr(1)});
  return domain;
}

SmallVector<utils::IteratorType> ConvOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel);
}

/// A rank-`rank` slice of a tensor with unit strides.
static Value extractSlice(OpBuilder &b, Location loc, Value source,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

FailureOr<TilingResult>
ConvOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes) {
  if (!hasTensorSemantics())
    return emitOpError("tiling is implemented for the tensor form only");
  // A tile's input window may straddle the history and the input; tiles
  // would need a per-tile history depth, which the tiled op cannot express.
  if (getHistory())
    return emitOpError("tiling a convolution with a history operand is not "
                       "supported");
  bool padded = llvm::any_of(getPadding(), [](int64_t p) { return p != 0; });
  // Tiles convolve a zero-padded slice without padding, so the prologue sees
  // the halo: it maps a zero voxel to act(beta), which is zero without beta.
  if (getNormBeta() && padded)
    return emitOpError("tiling a padded convolution whose input prologue "
                       "has norm_beta is not supported (the prologue would "
                       "transform the halo)");
  Location loc = getLoc();
  ConvGeometry geometry = getGeometry();
  SmallVector<Operation *> generated;

  // A grouped convolution's F tile must hold whole groups; it then reads
  // the input channels of those groups only.
  int64_t tileGroups = geometry.groups;
  AffineExpr d0 = b.getAffineDimExpr(0);
  OpFoldResult channelOffset = b.getIndexAttr(0);
  OpFoldResult channelSize = getDimSize(b, loc, getInput(), 4);
  std::optional<int64_t> fTile = getConstantIntValue(sizes[4]);
  if (geometry.isGrouped() && fTile != geometry.filters) {
    int64_t perGroup = geometry.filtersPerGroup();
    if (!fTile || *fTile % perGroup != 0)
      return emitOpError() << "tiling a grouped convolution along F needs "
                              "static tiles of whole groups (multiples of "
                              "F/groups = "
                           << perGroup << ")";
    if (getNormGamma())
      return emitOpError("tiling a grouped convolution with rms_norm along F "
                         "is not supported (the norm reads every channel)");
    tileGroups = *fTile / perGroup;
    channelOffset = affine::makeComposedFoldedAffineApply(
        b, loc, d0.floorDiv(perGroup) * geometry.channelsPerGroup(),
        {offsets[4]});
    channelSize = b.getIndexAttr(tileGroups * geometry.channelsPerGroup());
  }

  // Input window of the tile in padded coordinates: output [o, o + size)
  // along an axis reads padded positions [o*s, (o + size - 1)*s + eff).
  SmallVector<OpFoldResult> inOffsets = {offsets[0]}, inSizes = {sizes[0]};
  for (unsigned axis = 0; axis < 3; ++axis) {
    int64_t stride = geometry.strides[axis];
    inOffsets.push_back(affine::makeComposedFoldedAffineApply(
        b, loc, d0 * stride, {offsets[axis + 1]}));
    inSizes.push_back(affine::makeComposedFoldedAffineApply(
        b, loc, (d0 - 1) * stride + geometry.effectiveWindow(axis),
        {sizes[axis + 1]}));
  }
  inOffsets.push_back(channelOffset);
  inSizes.push_back(channelSize);

  Value inputTile;
  if (!padded) {
    inputTile = extractSlice(b, loc, getInput(), inOffsets, inSizes);
  } else {
    auto padOp = createZeroPaddedInput(b, loc, getInput(), geometry)
                     .getDefiningOp<tensor::PadOp>();
    FailureOr<TilingResult> sliced =
        tensor::bubbleUpPadSlice(b, padOp, inOffsets, inSizes);
    // The full-size pad only served as the description of the padded input.
    padOp->erase();
    if (failed(sliced))
      return emitOpError("could not slice the padded input");
    inputTile = sliced->tiledValues[0];
    generated.append(sliced->tiledOps.begin(), sliced->tiledOps.end());
  }

  // Filter (and bias) along F.
  int64_t filterDim = getFilterLayout() == FilterLayout::qrscf ? 4 : 0;
  SmallVector<OpFoldResult> filterOffsets, filterSizes;
  for (int64_t dim = 0; dim < 5; ++dim) {
    bool isF = dim == filterDim;
    filterOffsets.push_back(isF ? offsets[4] : b.getIndexAttr(0));
    filterSizes.push_back(isF ? sizes[4]
                              : getDimSize(b, loc, getFilter(), dim));
  }
  Value filterTile =
      extractSlice(b, loc, getFilter(), filterOffsets, filterSizes);
  // A packed filter's scales go along F with its codes (filter_quant is
  // FQRSC).
  Value filterScalesTile;
  if (Value scales = getFilterScales()) {
    SmallVector<OpFoldResult> scaleSizes = {sizes[4]};
    for (int64_t dim = 1; dim < 5; ++dim)
      scaleSizes.push_back(getDimSize(b, loc, scales, dim));
    SmallVector<OpFoldResult> scaleOffsets(5, b.getIndexAttr(0));
    scaleOffsets[0] = offsets[4];
    filterScalesTile = extractSlice(b, loc, scales, scaleOffsets, scaleSizes);
  }
  Value biasTile =
      getBias() ? extractSlice(b, loc, getBias(), {offsets[4]}, {sizes[4]})
                : Value();
  Value residualTile = getResidual()
                           ? extractSlice(b, loc, getResidual(), offsets, sizes)
                           : Value();
  Value initTile = extractSlice(b, loc, getInit(), offsets, sizes);

  // C is never tiled: the prologue's per-channel vectors go as they are.
  auto tiled = ConvOp::create(
      b, loc, TypeRange{initTile.getType()}, inputTile, filterTile, biasTile,
      residualTile, getAmax(), initTile, /*history=*/Value(), getNormGamma(),
      getNormBeta(), getStridesAttr(), getDilationsAttr(),
      b.getDenseI64ArrayAttr({0, 0, 0, 0, 0, 0}), getFilterLayoutAttr(),
      getActivationAttr(), getInputQuantAttr(), getOverwriteAttr(),
      getConfigAttr(), getNormEpsAttr(), getInputActivationAttr(),
      filterScalesTile, getFilterAmax(), getFilterQuantAttr(),
      b.getI64IntegerAttr(tileGroups));
  generated.push_back(tiled);
  return TilingResult{generated, SmallVector<Value>{tiled->getResult(0)},
                      /*generatedSlices=*/{}};
}

LogicalResult ConvOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  // The iteration domain is the output's index space.
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  return success();
}

FailureOr<TilingResult>
ConvOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes) {
  return getTiledImplementation(b, offsets, sizes);
}

Value mlir::conv3d::createZeroPaddedInput(OpBuilder &b, Location loc,
                                          Value input,
                                          const ConvGeometry &geometry) {
  SmallVector<OpFoldResult> low = {b.getIndexAttr(0)},
                            high = {b.getIndexAttr(0)};
  for (unsigned axis = 0; axis < 3; ++axis) {
    low.push_back(b.getIndexAttr(geometry.padLow[axis]));
    high.push_back(b.getIndexAttr(geometry.padHigh[axis]));
  }
  low.push_back(b.getIndexAttr(0));
  high.push_back(b.getIndexAttr(0));
  Type elemType = getElementTypeOrSelf(input.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemType));
  return tensor::PadOp::create(b, loc, /*resultType=*/Type(), input, low, high,
                               zero);
}
