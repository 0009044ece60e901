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

/// An operand of a gradient op and the name its diagnostics give it.
struct NamedValue {
  Value value;
  StringRef name;
};

/// The operands of a gradient op in the forward's terms; its grad_output
/// and outs are the op's own.
struct GradientOperands {
  NamedValue compute;      // the first operand, whose type the others follow
  NamedValue other;        // the second operand
  NamedValue forwardInput; // NDHWC: dgrad's outs, wgrad's input
  NamedValue filter;       // the filter's shape: dgrad's filter, wgrad's outs
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
  auto [compute, other, forwardInput, filter] = operands;
  Value init = op.getInit();
  Operation *raw = op.getOperation();
  if (failed(verifyRank(raw, compute.value, compute.name, 5)) ||
      failed(verifyRank(raw, other.value, other.name, 5)) ||
      failed(verifyRank(raw, init, "outs", 5)) ||
      failed(verifyArraySize(raw, op.getStrides(), "strides", 3)) ||
      failed(verifyArraySize(raw, op.getDilations(), "dilations", 3)) ||
      failed(verifyArraySize(raw, op.getPadding(), "padding", 6)))
    return failure();
  if (op.getResult().getType() != init.getType())
    return op.emitOpError() << "result type " << op.getResult().getType()
                            << " must be the outs type " << init.getType();
  Type elem = getElementTypeOrSelf(compute.value.getType());
  Type otherElem = getElementTypeOrSelf(other.value.getType());
  Type outElem = getElementTypeOrSelf(init.getType());
  if (!isSupportedComputeType(elem))
    return op.emitOpError()
           << compute.name << " element type must be bf16, f16 or f32, got "
           << elem;
  if (otherElem != elem)
    return op.emitOpError()
           << other.name << " element type " << otherElem << " must match the "
           << compute.name << " element type " << elem;
  if (!outElem.isF32() && outElem != elem)
    return op.emitOpError()
           << "outs element type must be f32 or the " << compute.name
           << " element type " << elem << ", got " << outElem;
  for (Value value : {compute.value, other.value, init})
    if (!cast<ShapedType>(value.getType()).hasStaticShape())
      return op.emitOpError()
             << "shapes must be static (the lowering sizes its stride "
                "phases and forward convolutions from them), got "
             << formatShape(cast<ShapedType>(value.getType()).getShape());

  auto filterShape = getShape5(filter.value.getType());
  int64_t filterChannels = op.getFilterLayout() == FilterLayout::qrscf
                               ? filterShape[3]
                               : filterShape[4];
  auto inputShape = getShape5(forwardInput.value.getType());
  if (inputShape[4] != filterChannels)
    return op.emitOpError()
           << filter.name << " has " << filterChannels << " input channels but "
           << forwardInput.name << " has " << inputShape[4]
           << " (filter_layout = "
           << stringifyFilterLayout(op.getFilterLayout()) << ")";
  ConvGeometry geometry = op.getGeometry();
  if (std::optional<std::string> problem = geometry.validate())
    return op.emitOpError()
           << "the forward convolution is invalid: " << *problem;
  std::array<int64_t, 5> expected = geometry.outputShape();
  auto gradShape = getShape5(op.getGradOutput().getType());
  if (gradShape != expected)
    return op.emitOpError()
           << "grad_output shape " << formatShape(gradShape)
           << " must be the forward's output shape " << formatShape(expected)
           << " (from the " << forwardInput.name << " shape "
           << formatShape(inputShape) << ", the " << filter.name << " shape "
           << formatShape(filterShape) << ", strides, dilations and padding)";
  return success();
}

} // namespace

ConvGeometry ConvBackwardDataOp::getGeometry() {
  return geometryOf(*this, getInit(), getFilter());
}

LogicalResult ConvBackwardDataOp::verify() {
  NamedValue filter{getFilter(), "filter"};
  if (failed(verifyGradient(*this, {{getGradOutput(), "grad_output"},
                                    filter,
                                    {getInit(), "outs (the input gradient)"},
                                    filter})))
    return failure();
  Activation activation = getActivation();
  Value preActivation = getPreActivation();
  if (isActivationDerivative(activation))
    return emitOpError() << "activation = " << stringifyActivation(activation)
                         << " is a derivative; name the forward's activation "
                            "(relu, silu or gelu_tanh)";
  if (activation == Activation::none && preActivation)
    return emitOpError("pre_activation needs the activation whose derivative "
                       "it feeds (activation = relu, silu or gelu_tanh)");
  if (activation != Activation::none && !preActivation)
    return emitOpError() << "activation = " << stringifyActivation(activation)
                         << " needs pre_activation, the forward's input "
                            "before the activation";
  if (!preActivation)
    return success();
  auto initType = cast<ShapedType>(getInit().getType());
  auto preType = cast<ShapedType>(preActivation.getType());
  if (preType.getShape() != initType.getShape())
    return emitOpError() << "pre_activation shape "
                         << formatShape(preType.getShape())
                         << " must be the input gradient's (outs) shape "
                         << formatShape(initType.getShape());
  if (!isSupportedComputeType(preType.getElementType()))
    return emitOpError() << "pre_activation element type must be bf16, f16 "
                            "or f32, got "
                         << preType.getElementType();
  return success();
}

ConvGeometry ConvBackwardFilterOp::getGeometry() {
  return geometryOf(*this, getInput(), getInit());
}

LogicalResult ConvBackwardFilterOp::verify() {
  NamedValue input{getInput(), "input"};
  return verifyGradient(*this, {input,
                                {getGradOutput(), "grad_output"},
                                input,
                                {getInit(), "outs (the filter gradient)"}});
}
