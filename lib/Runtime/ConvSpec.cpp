//===- ConvSpec.cpp - convolution specs -----------------------------------===//

#include "conv3d/Runtime/ConvSpec.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::conv3d;

static std::vector<int64_t> toVector(const std::array<int64_t, 5> &shape) {
  return {shape.begin(), shape.end()};
}

std::vector<int64_t> ConvSpec::inputShape() const {
  std::vector<int64_t> shape = toVector(geometry.inputShape());
  shape[1] = geometry.inputOperandDepth();
  return shape;
}
std::vector<int64_t> ConvSpec::historyShape() const {
  std::vector<int64_t> shape = toVector(geometry.inputShape());
  shape[1] = geometry.historyDepth;
  return shape;
}
std::vector<int64_t> ConvSpec::filterShape() const {
  return toVector(geometry.filterShape(filterLayout));
}
std::vector<int64_t> ConvSpec::packedFilterShape() const {
  std::vector<int64_t> shape = filterShape();
  shape.back() /= 2;
  return shape;
}
std::vector<int64_t> ConvSpec::filterScalesShape() const {
  std::vector<int64_t> shape = filterShape();
  shape.back() /= 16;
  return shape;
}
std::vector<int64_t> ConvSpec::outputShape() const {
  return toVector(geometry.outputShape());
}
std::vector<int64_t> ConvSpec::resultShape() const {
  switch (kind) {
  case ConvKind::fprop:
    return outputShape();
  case ConvKind::dgrad:
    return inputShape();
  case ConvKind::wgrad:
    return filterShape();
  }
  return outputShape();
}

/// The first forward-only feature a gradient spec asks for, or none.
static std::optional<std::string> gradientProblem(const ConvSpec &spec) {
  if (spec.kind == ConvKind::fprop)
    return std::nullopt;
  std::string kind = stringifyConvKind(spec.kind).str();
  auto refuse = [&](const char *what) {
    return kind + " takes no " + what + " (only the forward does)";
  };
  if (spec.hasBias)
    return refuse("bias");
  // dgrad's activation is the forward activation before the convolution,
  // whose derivative at the pre-activation (the residual operand) its
  // epilogue applies.
  if (spec.kind == ConvKind::dgrad) {
    if (spec.activation != Activation::none && !spec.hasResidual)
      return "dgrad's activation = " +
             stringifyActivation(spec.activation).str() +
             " needs the pre-activation (the residual operand, the input's "
             "shape)";
    if (spec.hasResidual && spec.activation == Activation::none)
      return std::string("dgrad's residual operand is the pre-activation "
                         "of an activation; name the activation (relu, silu "
                         "or gelu_tanh)");
  } else if (spec.activation != Activation::none) {
    return refuse("activation");
  } else if (spec.hasResidual) {
    return refuse("residual");
  }
  if (spec.inputQuantBlockSize)
    return refuse("NVFP4 input quantization");
  if (spec.packedFilter)
    return refuse("packed NVFP4 filter");
  if (spec.geometry.historyDepth != 0)
    return refuse("history frames");
  if (spec.hasPrologue())
    return refuse("input prologue");
  // The gradient ops and their rewrites into forward convolutions are dense
  // (conv3d.torch differentiates a grouped convolution through PyTorch).
  if (spec.geometry.groups != 1)
    return kind + " of a grouped convolution (groups = " +
           std::to_string(spec.geometry.groups) +
           ") is not supported: the gradient kernels are dense";
  return std::nullopt;
}

llvm::Error ConvSpec::validate() const {
  if (!geometry.hasStaticShape())
    return llvm::createStringError("convolution sizes must be static");
  for (Activation act : {activation, inputActivation})
    if (isActivationDerivative(act))
      return llvm::createStringError(
          ("activation " + stringifyActivation(act) +
           " is a derivative epilogue: a data gradient (kind dgrad) takes "
           "the forward's activation " +
           stringifyActivation(forwardOf(act)) +
           " with its pre-activation as the residual")
              .str());
  if (std::optional<std::string> problem = geometry.validate())
    return llvm::createStringError(*problem);
  if (std::optional<std::string> problem = gradientProblem(*this))
    return llvm::createStringError(*problem);
  if (outputType != ElementType::f32 && outputType != inputType)
    return llvm::createStringError(
        llvm::formatv("output dtype must be f32 or the input dtype {0}, got "
                      "{1}",
                      stringifyElementType(inputType),
                      stringifyElementType(outputType))
            .str());
  if (geometry.historyDepth < 0 || geometry.inputOperandDepth() < 1)
    return llvm::createStringError(
        llvm::formatv("the history depth must lie in [0, D) of the "
                      "concatenated depth D = {0}, got {1}",
                      geometry.inputSize[0], geometry.historyDepth)
            .str());
  if (hasNormBeta && !hasNorm)
    return llvm::createStringError("a norm beta needs the RMS norm");
  if (hasNorm && !(normEps > 0.0f && std::isfinite(normEps)))
    return llvm::createStringError(
        llvm::formatv("the RMS norm epsilon must be finite and positive, got "
                      "{0:e}",
                      normEps)
            .str());
  if (hasPrologue() && inputQuantBlockSize)
    return llvm::createStringError(
        "an input prologue (RMS norm, input activation) cannot be combined "
        "with NVFP4 quantization of the input");
  if (inputQuantBlockSize && !isValidNVFP4BlockSize(*inputQuantBlockSize))
    return llvm::createStringError(
        llvm::formatv("NVFP4 block size must be 16, 32, 64, 128 or 256, got "
                      "{0}",
                      *inputQuantBlockSize)
            .str());
  if (geometry.isGrouped() && (inputQuantBlockSize || packedFilter))
    return llvm::createStringError(
        llvm::formatv("NVFP4 quantization (of the input or a packed filter) "
                      "takes groups = 1 only, got groups = {0}",
                      geometry.groups)
            .str());
  if (packedFilter && filterLayout != FilterLayout::fqrsc)
    return llvm::createStringError(
        "a packed NVFP4 filter is K-major: the filter layout must be fqrsc");
  if (packedFilter && geometry.channels % 16 != 0)
    return llvm::createStringError(
        llvm::formatv("a packed NVFP4 filter needs C to be a multiple of the "
                      "block size 16, got C = {0}",
                      geometry.channels)
            .str());
  // Every buffer the engine and its lowered code may allocate (the
  // operands, and f32 accumulators of the output's shape for split-K and
  // Q slices) must have a byte size that int64 holds: allocations and
  // descriptors compute it.
  struct Buffer {
    const char *what;
    std::vector<int64_t> shape;
    ElementType type;
  } buffers[] = {{"input", inputShape(), inputType},
                 {"history", historyShape(), inputType},
                 {"filter", filterShape(), inputType},
                 {"output", resultShape(), outputType},
                 {"f32 accumulator", outputShape(), ElementType::f32}};
  for (const Buffer &buffer : buffers)
    if (llvm::Expected<int64_t> bytes = tensorBytes(
            buffer.shape, int64_t(elementSize(buffer.type)), buffer.what);
        !bytes)
      return bytes.takeError();
  return llvm::Error::success();
}

double ConvSpec::checkTolerance() const {
  double tolerance = defaultTolerance(outputType);
  if (hasPrologue() && inputType != ElementType::f32)
    tolerance = std::max(tolerance, defaultTolerance(inputType) / 10);
  return tolerance;
}

std::string ConvSpec::describe() const {
  const ConvGeometry &g = geometry;
  std::string text = kind == ConvKind::fprop
                         ? std::string()
                         : ("kind=" + stringifyConvKind(kind) + " ").str();
  text += llvm::formatv(
      "in={0}x{1}x{2}x{3}x{4} win={5}x{6}x{7} F={8} stride={9},{10},{11} "
      "dil={12},{13},{14} pad={15},{16},{17},{18},{19},{20}",
      g.batch, g.inputSize[0], g.inputSize[1], g.inputSize[2], g.channels,
      g.window[0], g.window[1], g.window[2], g.filters, g.strides[0],
      g.strides[1], g.strides[2], g.dilations[0], g.dilations[1],
      g.dilations[2], g.padLow[0], g.padHigh[0], g.padLow[1], g.padHigh[1],
      g.padLow[2], g.padHigh[2]);
  text += llvm::formatv(
      " layout={0} dtype={1} out={2}", stringifyFilterLayout(filterLayout),
      stringifyElementType(inputType), stringifyElementType(outputType));
  if (g.groups != 1)
    text += " groups=" + std::to_string(g.groups);
  if (hasBias)
    text += " bias";
  if (activation != Activation::none)
    text += (" act=" + stringifyActivation(activation)).str();
  if (hasResidual)
    text += kind == ConvKind::dgrad ? " pre_activation" : " residual";
  if (accumulate)
    text += " accumulate";
  if (inputQuantBlockSize)
    text += " nvfp4=" + std::to_string(*inputQuantBlockSize);
  if (packedFilter)
    text += " filter=nvfp4-packed";
  // The input's depth above counts the history frames.
  if (g.historyDepth != 0)
    text += " history=" + std::to_string(g.historyDepth);
  if (hasNorm)
    text += llvm::formatv(" rms_norm(eps={0:e}{1})", normEps,
                          hasNormBeta ? ",beta" : "")
                .str();
  if (inputActivation != Activation::none)
    text += (" in_act=" + stringifyActivation(inputActivation)).str();
  return text;
}

llvm::SmallVector<ConvParameter, 9>
mlir::conv3d::convParameters(const ConvSpec &spec) {
  // The gradients read two operands (gradientProblem refuses the rest but
  // dgrad's pre-activation).
  if (spec.kind == ConvKind::dgrad && spec.hasResidual)
    return {ConvParameter::GradOutput, ConvParameter::Filter,
            ConvParameter::Residual, ConvParameter::Output};
  if (spec.kind == ConvKind::dgrad)
    return {ConvParameter::GradOutput, ConvParameter::Filter,
            ConvParameter::Output};
  if (spec.kind == ConvKind::wgrad)
    return {ConvParameter::Input, ConvParameter::GradOutput,
            ConvParameter::Output};
  llvm::SmallVector<ConvParameter, 9> parameters = {ConvParameter::Input,
                                                    ConvParameter::Filter};
  if (spec.packedFilter)
    parameters.append({ConvParameter::FilterScales, ConvParameter::FilterAmax});
  if (spec.geometry.historyDepth > 0)
    parameters.push_back(ConvParameter::History);
  if (spec.hasNorm)
    parameters.push_back(ConvParameter::NormGamma);
  if (spec.hasNormBeta)
    parameters.push_back(ConvParameter::NormBeta);
  if (spec.hasBias)
    parameters.push_back(ConvParameter::Bias);
  if (spec.hasResidual)
    parameters.push_back(ConvParameter::Residual);
  if (spec.inputQuantBlockSize)
    parameters.push_back(ConvParameter::Amax);
  parameters.push_back(ConvParameter::Output);
  return parameters;
}

std::optional<ConvBufferExtent>
mlir::conv3d::convBufferExtent(const ConvSpec &spec, ConvParameter parameter) {
  size_t input = elementSize(spec.inputType);
  size_t output = elementSize(spec.outputType);
  constexpr size_t kF32 = 4, kByte = 1;
  switch (parameter) {
  case ConvParameter::Input:
    return ConvBufferExtent{spec.inputShape(), input};
  case ConvParameter::Filter:
    return spec.packedFilter ? ConvBufferExtent{spec.packedFilterShape(), kByte}
                             : ConvBufferExtent{spec.filterShape(), input};
  case ConvParameter::FilterScales:
    return ConvBufferExtent{spec.filterScalesShape(), kByte};
  case ConvParameter::Bias:
    return ConvBufferExtent{{spec.geometry.filters}, kF32};
  case ConvParameter::Residual: // dgrad's: the pre-activation
    return ConvBufferExtent{spec.resultShape(),
                            elementSize(spec.residualType())};
  case ConvParameter::Output:
    return ConvBufferExtent{spec.resultShape(), output};
  case ConvParameter::GradOutput:
    return ConvBufferExtent{spec.outputShape(), input};
  case ConvParameter::History:
    return ConvBufferExtent{spec.historyShape(), input};
  case ConvParameter::NormGamma:
  case ConvParameter::NormBeta:
    return ConvBufferExtent{{spec.geometry.channels}, kF32};
  case ConvParameter::FilterAmax:
  case ConvParameter::Amax:
    return std::nullopt;
  }
  return std::nullopt;
}

llvm::StringRef mlir::conv3d::convParameterName(ConvParameter parameter) {
  switch (parameter) {
  case ConvParameter::Input:
    return "input";
  case ConvParameter::Filter:
    return "filter";
  case ConvParameter::FilterScales:
    return "filter scales";
  case ConvParameter::FilterAmax:
    return "filter amax";
  case ConvParameter::Bias:
    return "bias";
  case ConvParameter::Residual:
    return "residual";
  case ConvParameter::Amax:
    return "amax";
  case ConvParameter::Output:
    return "output";
  case ConvParameter::History:
    return "history";
  case ConvParameter::NormGamma:
    return "norm gamma";
  case ConvParameter::NormBeta:
    return "norm beta";
  case ConvParameter::GradOutput:
    return "grad_output";
  }
  return "?";
}

static std::string formatExtent(llvm::ArrayRef<int64_t> shape,
                                size_t elementBytes) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return (text.empty() ? "a scalar" : text) + " elements of " +
         std::to_string(elementBytes) + " bytes";
}

llvm::Error mlir::conv3d::checkConvBuffer(const ConvSpec &spec,
                                          ConvParameter parameter,
                                          llvm::ArrayRef<int64_t> shape,
                                          size_t elementBytes) {
  std::optional<ConvBufferExtent> expected = convBufferExtent(spec, parameter);
  if (!expected)
    return llvm::createStringError(convParameterName(parameter).str() +
                                   " is a scalar, not a buffer");
  if (llvm::ArrayRef<int64_t>(expected->shape) == shape &&
      expected->elementBytes == elementBytes)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("{0} buffer: the convolution takes {1}; the buffer given "
                    "holds {2}",
                    convParameterName(parameter),
                    formatExtent(expected->shape, expected->elementBytes),
                    formatExtent(shape, elementBytes))
          .str());
}
