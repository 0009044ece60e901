//===- TileOps.cpp - implicit-GEMM tile op verifiers ----------------------===//

#include "EnumKeyword.h"
#include "OpVerification.h"

#include "conv3d/IR/Conv3dOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::detail;

/// Checks that a tile operand is a statically shaped rank-2 memref.
static LogicalResult verifyTile(Operation *op, Value tile, StringRef name) {
  if (failed(verifyRank(op, tile, name, 2)))
    return failure();
  auto type = cast<ShapedType>(tile.getType());
  if (!type.hasStaticShape())
    return op->emitOpError() << name << " must have a static shape";
  if (type.getNumElements() == 0)
    return op->emitOpError() << name << " must not be empty, got shape "
                             << formatShape(type.getShape());
  return success();
}

static ArrayRef<int64_t> tileShape(Value tile) {
  return cast<ShapedType>(tile.getType()).getShape();
}

/// `scale` is an f32 memref of the voxels (N x D x H x W) of the NDHWC
/// `input`.
static LogicalResult verifyVoxelScale(Operation *op, Value scale, Value input,
                                      StringRef name) {
  auto scaleType = cast<ShapedType>(scale.getType());
  ArrayRef<int64_t> voxels =
      cast<ShapedType>(input.getType()).getShape().drop_back();
  if (scaleType.getShape() != voxels || !scaleType.getElementType().isF32())
    return op->emitOpError()
           << name << " must be an f32 memref of the input's voxels ("
           << formatShape(voxels) << "), got " << scale.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// LoadIm2colTileOp
//===----------------------------------------------------------------------===//

ConvGeometry LoadIm2colTileOp::getGeometry() {
  ArrayRef<int64_t> w = getWindow();
  std::array<int64_t, 5> inShape = getShape5(getInput().getType());
  // The A operand does not depend on F; QRSCF with F = 1 carries the window.
  std::array<int64_t, 5> filterShape = {w[0], w[1], w[2], inShape[4], 1};
  auto strides = getStrides(), dilations = getDilations();
  ArrayRef<int64_t> padding = getPadding();
  ConvGeometry g = ConvGeometry::fromShapes(
      inShape, filterShape, FilterLayout::qrscf,
      {strides[0], strides[1], strides[2]},
      {dilations[0], dilations[1], dilations[2]},
      {padding[0], padding[1], padding[2], padding[3], padding[4], padding[5]});
  if (Value history = getHistory())
    g.addHistory(getShape5(history.getType())[1]);
  return g;
}

LogicalResult LoadIm2colTileOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyRank(op, getInput(), "input", 5)) ||
      failed(verifyTile(op, getTile(), "tile")) ||
      failed(verifyArraySize(op, getWindow(), "window", 3)) ||
      failed(verifyArraySize(op, getStrides(), "strides", 3)) ||
      failed(verifyArraySize(op, getDilations(), "dilations", 3)) ||
      failed(verifyArraySize(op, getPadding(), "padding", 6)) ||
      failed(verifyHistory(op, getHistory(), getInput())))
    return failure();
  Type inElem = getElementTypeOrSelf(getInput().getType());
  Type tileElem = getElementTypeOrSelf(getTile().getType());
  if (!isSupportedComputeType(inElem))
    return emitOpError() << "input element type must be bf16, f16 or f32, got "
                         << inElem;
  if (tileElem != inElem)
    return emitOpError() << "tile element type " << tileElem
                         << " must match the input element type " << inElem;
  if (std::optional<std::string> problem = getGeometry().validate())
    return emitOpError() << *problem;
  if (getQuant().has_value() != static_cast<bool>(getAmax()))
    return emitOpError("quantization needs both an NVFP4 attribute and an "
                       "amax operand");
  std::optional<APFloat> eps;
  if (FloatAttr epsAttr = getNormEpsAttr())
    eps = epsAttr.getValue();
  if (failed(verifyPrologue(
          op, getNormGamma(), getNormBeta(), eps, getInputActivation(),
          getShape5(getInput().getType())[4], getQuant().has_value())))
    return failure();
  if (Value scale = getNormScale()) {
    if (!getNormGamma())
      return emitOpError("norm_scale needs rms_norm (it holds the norm's "
                         "per-voxel statistic)");
    if (failed(verifyVoxelScale(op, scale, getInput(), "norm_scale")))
      return failure();
  }
  if (std::optional<NVFP4Attr> quant = getQuant()) {
    int64_t blockSize = quant->getBlockSize();
    if (tileShape(getTile())[1] % blockSize != 0)
      return emitOpError() << "tile width " << tileShape(getTile())[1]
                           << " must be a multiple of the NVFP4 block size "
                           << blockSize;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// VoxelRmsScaleOp
//===----------------------------------------------------------------------===//

LogicalResult VoxelRmsScaleOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyRank(op, getInput(), "input", 5)))
    return failure();
  Type inElem = getElementTypeOrSelf(getInput().getType());
  if (!isSupportedComputeType(inElem))
    return emitOpError() << "input element type must be bf16, f16 or f32, got "
                         << inElem;
  if (failed(verifyVoxelScale(op, getScale(), getInput(), "scale")))
    return failure();
  APFloat eps = getEpsAttr().getValue();
  if (!eps.isFiniteNonZero() || eps.isNegative())
    return emitOpError() << "eps must be finite and positive, got "
                         << eps.convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// LoadFilterTileOp
//===----------------------------------------------------------------------===//

LogicalResult LoadFilterTileOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyRank(op, getFilter(), "filter", 5)) ||
      failed(verifyTile(op, getTile(), "tile")))
    return failure();
  auto filterType = cast<ShapedType>(getFilter().getType());
  if (!filterType.hasStaticShape())
    return emitOpError("filter must have a static shape");
  if (filterType.getNumElements() == 0)
    return emitOpError() << "filter must not be empty, got shape "
                         << formatShape(filterType.getShape());
  Type filterElem = filterType.getElementType();
  if (!isSupportedComputeType(filterElem))
    return emitOpError() << "filter element type must be bf16, f16 or f32, "
                            "got "
                         << filterElem;
  if (getElementTypeOrSelf(getTile().getType()) != filterElem)
    return emitOpError() << "tile element type "
                         << getElementTypeOrSelf(getTile().getType())
                         << " must match the filter element type "
                         << filterElem;
  return success();
}

//===----------------------------------------------------------------------===//
// TileMmaOp
//===----------------------------------------------------------------------===//

LogicalResult TileMmaOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyTile(op, getA(), "A tile")) ||
      failed(verifyTile(op, getB(), "B tile")) ||
      failed(verifyTile(op, getAcc(), "accumulator")))
    return failure();
  ArrayRef<int64_t> a = tileShape(getA()), b = tileShape(getB()),
                    acc = tileShape(getAcc());
  if (a[1] != b[0] || acc[0] != a[0] || acc[1] != b[1])
    return emitOpError() << "tile shapes do not chain: A " << formatShape(a)
                         << ", B " << formatShape(b) << ", accumulator "
                         << formatShape(acc);
  Type aElem = getElementTypeOrSelf(getA().getType());
  if (!isSupportedComputeType(aElem))
    return emitOpError() << "A element type must be bf16, f16 or f32, got "
                         << aElem;
  if (getElementTypeOrSelf(getB().getType()) != aElem)
    return emitOpError() << "B element type "
                         << getElementTypeOrSelf(getB().getType())
                         << " must match the A element type " << aElem;
  if (!getElementTypeOrSelf(getAcc().getType()).isF32())
    return emitOpError() << "accumulator element type must be f32, got "
                         << getElementTypeOrSelf(getAcc().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// StoreOutputTileOp
//===----------------------------------------------------------------------===//

LogicalResult StoreOutputTileOp::verify() {
  Operation *op = getOperation();
  bool partial = getMode() == StoreMode::partial;
  if (partial != static_cast<bool>(getSplit()))
    return emitOpError(partial ? "mode = partial needs a split index "
                                 "(split(%s)): the workspace slab it writes"
                               : "a split index goes with mode = partial only");
  // A partial sum goes to slab `split` of an S x N x Do x Ho x Wo x F
  // workspace.
  if (failed(verifyTile(op, getAcc(), "accumulator")) ||
      failed(verifyRank(op, getOutput(), "output", partial ? 6 : 5)))
    return failure();
  if (!getElementTypeOrSelf(getAcc().getType()).isF32())
    return emitOpError() << "accumulator element type must be f32, got "
                         << getElementTypeOrSelf(getAcc().getType());
  auto outType = cast<ShapedType>(getOutput().getType());
  if (!outType.hasStaticShape())
    return emitOpError("output must have a static shape");
  if (outType.getNumElements() == 0)
    return emitOpError() << "output must not be empty, got shape "
                         << formatShape(outType.getShape());
  Type outElem = outType.getElementType();
  if (!isSupportedComputeType(outElem))
    return emitOpError() << "output element type must be bf16, f16 or f32, "
                            "got "
                         << outElem;
  if (partial) {
    if (!outElem.isF32())
      return emitOpError() << "mode = partial needs an f32 workspace, got "
                           << outElem;
    if (getBias() || getResidual() || getActivation() != Activation::none)
      return emitOpError("mode = partial stores partial sums and cannot "
                         "apply an epilogue (conv3d.epilogue does, once the "
                         "slabs are added)");
    return success();
  }
  if (failed(verifyBias(op, getBias(), outType.getDimSize(4), outElem)) ||
      failed(verifyResidual(op, getResidual(), outType.getShape(), outElem,
                            getActivation())))
    return failure();
  return success();
}

#define GET_OP_CLASSES
#include "conv3d/IR/Conv3dTileOps.cpp.inc"
