//===- GradientOps.cpp - conv3d.conv_backward_data / _filter --------------===//
//
// The verifiers of the two gradient ops. Both describe the forward
// convolution by its geometry (ConvGeometry, built from the operand that
// has the forward input's shape and the one that has the filter's) and
// check the output gradient against the forward's output shape.
//
//===----------------------------------------------------------------------===//

#include "EnumKeyword.h"
#include "OpVerification.h"

#include "conv3d/IR/Conv3dOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::detail;

namespace {

/// The operands of a gradient op in the forward's terms.
struct GradientOperands {
  Value forwardInput; // NDHWC: dgrad's outs, wgrad's input
  StringRef forwardInputName;
  Value filter; // the filter's shape: dgrad's filter, wgrad's outs
  StringRef filterName;
  Value gradOutput;
  Value init;
  Value computeOperand; // the first operand, whose type the others follow
  StringRef computeName;
  Value otherOperand;
  StringRef otherName;
};

template <typename OpTy>
ConvGeometry geometryOf(OpTy op, Value forwardInput, Value filter) {
  return ConvGeometry::fromShapes(
      getShape5(forwardInput.getType()), getShape5(filter.getType()),
      op.getFilterLayout(), toArray3(op.getStrides()),
      toArray3(op.getDilations()), toArray6(op.getPadding()));
}

template <typename OpTy>
LogicalResult verifyGradient(OpTy op, const GradientOperands &operands) {
  Operation *raw = op.getOperation();
  if (failed(
          verifyRank(raw, operands.computeOperand, operands.computeName, 5)) ||
      failed(verifyRank(raw, operands.otherOperand, operands.otherName, 5)) ||
      failed(verifyRank(raw, operands.init, "outs", 5)) ||
      failed(verifyArraySize(raw, op.getStrides(), "strides", 3)) ||
      failed(verifyArraySize(raw, op.getDilations(), "dilations", 3)) ||
      failed(verifyArraySize(raw, op.getPadding(), "padding", 6)))
    return failure();
  if (op.getResult().getType() != operands.init.getType())
    return op.emitOpError()
           << "result type " << op.getResult().getType()
           << " must be the outs type " << operands.init.getType();
  Type elem = getElementTypeOrSelf(operands.computeOperand.getType());
  Type otherElem = getElementTypeOrSelf(operands.otherOperand.getType());
  Type outElem = getElementTypeOrSelf(operands.init.getType());
  if (!isSupportedComputeType(elem))
    return op.emitOpError()
           << operands.computeName
           << " element type must be bf16, f16 or f32, got " << elem;
  if (otherElem != elem)
    return op.emitOpError() << operands.otherName << " element type "
                            << otherElem << " must match the "
                            << operands.computeName << " element type " << elem;
  if (!outElem.isF32() && outElem != elem)
    return op.emitOpError()
           << "outs element type must be f32 or the " << operands.computeName
           << " element type " << elem << ", got " << outElem;
  for (Value value :
       {operands.computeOperand, operands.otherOperand, operands.init})
    if (!cast<ShapedType>(value.getType()).hasStaticShape())
      return op.emitOpError()
             << "shapes must be static (the lowering sizes its stride "
                "phases and forward convolutions from them), got "
             << formatShape(cast<ShapedType>(value.getType()).getShape());

  auto filterShape = getShape5(operands.filter.getType());
  int64_t filterChannels = op.getFilterLayout() == FilterLayout::qrscf
                               ? filterShape[3]
                               : filterShape[4];
  auto inputShape = getShape5(operands.forwardInput.getType());
  if (inputShape[4] != filterChannels)
    return op.emitOpError()
           << operands.filterName << " has " << filterChannels
           << " input channels but " << operands.forwardInputName << " has "
           << inputShape[4] << " (filter_layout = "
           << stringifyFilterLayout(op.getFilterLayout()) << ")";
  ConvGeometry geometry = op.getGeometry();
  if (std::optional<std::string> problem = geometry.validate())
    return op.emitOpError()
           << "the forward convolution is invalid: " << *problem;
  std::array<int64_t, 5> expected = geometry.outputShape();
  auto gradShape = getShape5(operands.gradOutput.getType());
  if (gradShape != expected)
    return op.emitOpError()
           << "grad_output shape " << formatShape(gradShape)
           << " must be the forward's output shape " << formatShape(expected)
           << " (from the " << operands.forwardInputName << " shape "
           << formatShape(inputShape) << ", the " << operands.filterName
           << " shape " << formatShape(filterShape)
           << ", strides, dilations and padding)";
  return success();
}

} // namespace

ConvGeometry ConvBackwardDataOp::getGeometry() {
  return geometryOf(*this, getInit(), getFilter());
}

LogicalResult ConvBackwardDataOp::verify() {
  GradientOperands operands;
  operands.forwardInput = getInit();
  operands.forwardInputName = "outs (the input gradient)";
  operands.filter = getFilter();
  operands.filterName = "filter";
  operands.gradOutput = getGradOutput();
  operands.init = getInit();
  operands.computeOperand = getGradOutput();
  operands.computeName = "grad_output";
  operands.otherOperand = getFilter();
  operands.otherName = "filter";
  return verifyGradient(*this, operands);
}

ConvGeometry ConvBackwardFilterOp::getGeometry() {
  return geometryOf(*this, getInput(), getInit());
}

LogicalResult ConvBackwardFilterOp::verify() {
  GradientOperands operands;
  operands.forwardInput = getInput();
  operands.forwardInputName = "input";
  operands.filter = getInit();
  operands.filterName = "outs (the filter gradient)";
  operands.gradOutput = getGradOutput();
  operands.init = getInit();
  operands.computeOperand = getInput();
  operands.computeName = "input";
  operands.otherOperand = getGradOutput();
  operands.otherName = "grad_output";
  return verifyGradient(*this, operands);
}
