//===- OpVerification.cpp - checks shared by the op verifiers -------------===//

#include "OpVerification.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include "conv3d/IR/Conv3dOps.h"

using namespace mlir;
using namespace mlir::conv3d;

bool mlir::conv3d::isSupportedComputeType(Type type) {
  return type.isBF16() || type.isF16() || type.isF32();
}

std::array<int64_t, 5> mlir::conv3d::getShape5(Type shapedType) {
  std::array<int64_t, 5> shape;
  ArrayRef<int64_t> dims = cast<ShapedType>(shapedType).getShape();
  for (unsigned i = 0; i < 5; ++i)
    shape[i] =
        dims[i] == ShapedType::kDynamic ? ConvGeometry::kDynamic : dims[i];
  return shape;
}

std::string mlir::conv3d::detail::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (i)
      text += "x";
    text += ShapedType::isDynamic(size) ? "?" : std::to_string(size);
  }
  return text;
}

LogicalResult mlir::conv3d::detail::verifyRank(Operation *op, Value value,
                                               StringRef name, int64_t rank) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasRank())
    return op->emitOpError() << name << " must be a ranked tensor or memref";
  if (type.getRank() != rank)
    return op->emitOpError() << name << " must have rank " << rank
                             << ", got rank " << type.getRank();
  return success();
}

LogicalResult mlir::conv3d::detail::verifyElementCount(Operation *op,
                                                       Value value,
                                                       StringRef name) {
  auto type = cast<ShapedType>(value.getType());
  constexpr int64_t kMaxElements = int64_t(1) << 62;
  int64_t count = 1;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    if (llvm::MulOverflow(count, size, count) || count > kMaxElements)
      return op->emitOpError()
             << name << " of shape " << formatShape(type.getShape())
             << " has more than 2^62 elements, the supported maximum";
  }
  return success();
}

LogicalResult mlir::conv3d::detail::verifyDpsForm(Operation *op, Value init) {
  bool tensorForm = isa<RankedTensorType>(init.getType());
  for (Value operand : op->getOperands()) {
    if (!isa<ShapedType>(operand.getType()))
      continue;
    if (isa<RankedTensorType>(operand.getType()) != tensorForm)
      return op->emitOpError(
          "operands must be all tensors or all memrefs, not a mix");
  }
  if (tensorForm) {
    if (op->getNumResults() != 1)
      return op->emitOpError("on tensors must have exactly one result");
    if (op->getResult(0).getType() != init.getType())
      return op->emitOpError("result type ")
             << op->getResult(0).getType()
             << " must match the outs operand type " << init.getType();
  } else if (op->getNumResults() != 0) {
    return op->emitOpError("on memrefs must not have results");
  }
  return success();
}

LogicalResult mlir::conv3d::detail::verifyArraySize(Operation *op,
                                                    ArrayRef<int64_t> values,
                                                    StringRef name,
                                                    size_t size) {
  if (values.size() != size)
    return op->emitOpError()
           << name << " must have " << size << " values, got " << values.size();
  return success();
}

LogicalResult mlir::conv3d::detail::verifyShapeMatches(
    Operation *op, ArrayRef<int64_t> actual, ArrayRef<int64_t> expected,
    StringRef what) {
  for (auto [a, e] : llvm::zip_equal(actual, expected)) {
    if (ShapedType::isDynamic(a) || e == ConvGeometry::kDynamic ||
        ShapedType::isDynamic(e))
      continue;
    if (a != e)
      return op->emitOpError()
             << what << " shape " << formatShape(actual)
             << " is inconsistent with the expected " << formatShape(expected);
  }
  return success();
}

LogicalResult mlir::conv3d::detail::verifyBias(Operation *op, Value bias,
                                               int64_t filters,
                                               Type outElemType) {
  if (!bias)
    return success();
  if (failed(verifyRank(op, bias, "bias", 1)))
    return failure();
  auto type = cast<ShapedType>(bias.getType());
  if (!type.isDynamicDim(0) && type.getDimSize(0) != filters)
    return op->emitOpError()
           << "bias must have " << filters << " elements (one per filter), got "
           << type.getDimSize(0);
  Type elem = type.getElementType();
  if (!isSupportedComputeType(elem))
    return op->emitOpError() << "bias element type must be bf16, f16 or f32, "
                                "got "
                             << elem;
  return success();
}

LogicalResult mlir::conv3d::detail::verifyResidual(Operation *op,
                                                   Value residual,
                                                   ArrayRef<int64_t> outShape,
                                                   Type outElemType,
                                                   Activation activation) {
  if (!residual && isActivationDerivative(activation))
    return op->emitOpError()
           << "activation = " << stringifyActivation(activation)
           << " multiplies by the derivative at the forward's pre-activation, "
              "which it reads as the residual operand; there is none";
  if (!residual)
    return success();
  if (failed(verifyRank(op, residual, "residual", outShape.size())))
    return failure();
  auto type = cast<ShapedType>(residual.getType());
  if (failed(verifyShapeMatches(op, type.getShape(), outShape, "residual")))
    return failure();
  Type elem = type.getElementType();
  if (!isSupportedComputeType(elem))
    return op->emitOpError() << "residual element type must be bf16, f16 or "
                                "f32, got "
                             << elem;
  return success();
}

LogicalResult mlir::conv3d::detail::verifyHistory(Operation *op, Value history,
                                                  Value input) {
  if (!history)
    return success();
  if (failed(verifyRank(op, history, "history", 5)))
    return failure();
  auto type = cast<ShapedType>(history.getType());
  auto inType = cast<ShapedType>(input.getType());
  static const char *const kDimNames[5] = {
      "batch (N)", "depth (D)", "height (H)", "width (W)", "channel (C)"};
  for (int64_t dim : {0, 2, 3, 4}) {
    int64_t h = type.getDimSize(dim), x = inType.getDimSize(dim);
    if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(x) && h != x)
      return op->emitOpError()
             << "history " << kDimNames[dim] << " size " << h
             << " must match the input's " << x << " (history "
             << formatShape(type.getShape()) << ", input "
             << formatShape(inType.getShape()) << ")";
  }
  if (type.getElementType() != inType.getElementType())
    return op->emitOpError()
           << "history element type " << type.getElementType()
           << " must match the input element type " << inType.getElementType();
  return verifyElementCount(op, history, "history");
}

LogicalResult mlir::conv3d::detail::verifySameComputeType(Operation *op,
                                                          Value input,
                                                          Value init) {
  Type inElem = getElementTypeOrSelf(input.getType());
  Type outElem = getElementTypeOrSelf(init.getType());
  if (!isSupportedComputeType(inElem))
    return op->emitOpError()
           << "input element type must be bf16, f16 or f32, got " << inElem;
  if (outElem != inElem)
    return op->emitOpError() << "outs element type " << outElem
                             << " must match the input element type " << inElem;
  return success();
}

/// Checks one per-channel prologue vector.
static LogicalResult verifyChannelVector(Operation *op, Value vector,
                                         StringRef name, int64_t channels) {
  if (failed(mlir::conv3d::detail::verifyRank(op, vector, name, 1)))
    return failure();
  auto type = cast<ShapedType>(vector.getType());
  if (!type.isDynamicDim(0) && channels != ConvGeometry::kDynamic &&
      type.getDimSize(0) != channels)
    return op->emitOpError()
           << name << " must have " << channels
           << " elements (one per input channel), got " << type.getDimSize(0);
  if (!isSupportedComputeType(type.getElementType()))
    return op->emitOpError()
           << name << " element type must be bf16, f16 or f32, got "
           << type.getElementType();
  return success();
}

LogicalResult mlir::conv3d::detail::verifyPrologue(
    Operation *op, Value gamma, Value beta, std::optional<APFloat> eps,
    Activation activation, int64_t channels, bool quantized) {
  if (!gamma) {
    if (beta)
      return op->emitOpError("norm_beta needs rms_norm (the scale gamma)");
    if (eps)
      return op->emitOpError("norm_eps needs rms_norm (the scale gamma)");
  } else {
    if (failed(verifyChannelVector(op, gamma, "rms_norm scale", channels)) ||
        (beta && failed(verifyChannelVector(op, beta, "norm_beta", channels))))
      return failure();
    if (!eps)
      return op->emitOpError("rms_norm needs norm_eps, the positive constant "
                             "added to the mean square");
    if (!eps->isFiniteNonZero() || eps->isNegative())
      return op->emitOpError() << "norm_eps must be finite and positive, got "
                               << eps->convertToDouble();
  }
  if (isActivationDerivative(activation))
    return op->emitOpError()
           << "input_activation = " << stringifyActivation(activation)
           << " is a derivative epilogue, not an activation of the input "
              "(relu, silu or gelu_tanh)";
  bool hasPrologue = gamma || activation != Activation::none;
  if (hasPrologue && quantized)
    return op->emitOpError(
        "an input prologue (rms_norm, input_activation) cannot be combined "
        "with NVFP4 quantization of the input");
  return success();
}
