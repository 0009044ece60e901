//===- ConvModuleBuilder.cpp - a ConvSpec as an MLIR module ---------------===//

#include "conv3d/Runtime/ConvModuleBuilder.h"

#include "conv3d/IR/Conv3dOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::conv3d;

Type mlir::conv3d::getMLIRType(MLIRContext *context, ElementType type) {
  Builder b(context);
  switch (type) {
  case ElementType::bf16:
    return b.getBF16Type();
  case ElementType::f16:
    return b.getF16Type();
  case ElementType::f32:
    return b.getF32Type();
  }
  llvm_unreachable("unknown element type");
}

static MemRefType memrefOf(const std::vector<int64_t> &shape, Type elem) {
  return MemRefType::get(shape, elem);
}

/// A function with memref arguments and C-interface wrappers for the JIT.
static func::FuncOp createFunction(OpBuilder &b, Location loc, StringRef name,
                                   TypeRange argTypes) {
  auto func = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType(argTypes, TypeRange{}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  func.addEntryBlock();
  return func;
}

static Value toTensor(OpBuilder &b, Location loc, Value memref,
                      bool writable = false) {
  auto type = cast<MemRefType>(memref.getType());
  auto tensorType =
      RankedTensorType::get(type.getShape(), type.getElementType());
  return bufferization::ToTensorOp::create(b, loc, tensorType, memref,
                                           /*restrict=*/true, writable);
}

static Value buildForward(OpBuilder &b, Location loc, const ConvSpec &spec,
                          Value input, Value filter, Value bias, Value residual,
                          Value amax, Value init, Value history, Value gamma,
                          Value beta, Value filterScales, Value filterAmax);

OwningOpRef<ModuleOp> mlir::conv3d::buildConvModule(MLIRContext *context,
                                                    const ConvSpec &spec) {
  context->loadDialect<Conv3dDialect, func::FuncDialect,
                       bufferization::BufferizationDialect>();
  OpBuilder b(context);
  Location loc = NameLoc::get(b.getStringAttr("conv3d.spec"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type inElem = getMLIRType(context, spec.inputType);
  Type outElem = getMLIRType(context, spec.outputType);
  SmallVector<ConvParameter, 9> parameters = convParameters(spec);
  // The shapes are the calling convention's (convBufferExtent); the element
  // types follow the parameter's role.
  SmallVector<Type> argTypes;
  for (ConvParameter parameter : parameters) {
    Type elem;
    switch (parameter) {
    case ConvParameter::Input:
    case ConvParameter::GradOutput:
    case ConvParameter::History:
      elem = inElem;
      break;
    case ConvParameter::Filter:
      elem = spec.packedFilter ? b.getI8Type() : inElem;
      break;
    case ConvParameter::FilterScales:
      elem = b.getI8Type();
      break;
    case ConvParameter::Bias:
    case ConvParameter::NormGamma:
    case ConvParameter::NormBeta:
      elem = b.getF32Type();
      break;
    case ConvParameter::Residual:
      elem = getMLIRType(context, spec.residualType());
      break;
    case ConvParameter::Output:
      elem = outElem;
      break;
    case ConvParameter::FilterAmax:
    case ConvParameter::Amax:
      argTypes.push_back(b.getF32Type());
      continue;
    }
    argTypes.push_back(
        memrefOf(convBufferExtent(spec, parameter)->shape, elem));
  }

  func::FuncOp func = createFunction(b, loc, kConvFunctionName, argTypes);
  b.setInsertionPointToStart(&func.getBody().front());
  Value input, filter, bias, residual, amax, output, history, gamma, beta;
  Value filterScales, filterAmax, gradOutput;
  for (auto [parameter, arg] :
       llvm::zip_equal(parameters, func.getArguments())) {
    switch (parameter) {
    case ConvParameter::Input:
      input = toTensor(b, loc, arg);
      break;
    case ConvParameter::Filter:
      filter = toTensor(b, loc, arg);
      break;
    case ConvParameter::FilterScales:
      filterScales = toTensor(b, loc, arg);
      break;
    case ConvParameter::FilterAmax:
      filterAmax = arg;
      break;
    case ConvParameter::Bias:
      bias = toTensor(b, loc, arg);
      break;
    case ConvParameter::Residual:
      residual = toTensor(b, loc, arg);
      break;
    case ConvParameter::Amax:
      amax = arg;
      break;
    case ConvParameter::Output:
      output = arg;
      break;
    case ConvParameter::History:
      history = toTensor(b, loc, arg);
      break;
    case ConvParameter::NormGamma:
      gamma = toTensor(b, loc, arg);
      break;
    case ConvParameter::NormBeta:
      beta = toTensor(b, loc, arg);
      break;
    case ConvParameter::GradOutput:
      gradOutput = toTensor(b, loc, arg);
      break;
    }
  }

  Value init =
      spec.accumulate
          ? toTensor(b, loc, output, /*writable=*/true)
          : tensor::EmptyOp::create(b, loc, spec.resultShape(), outElem)
                .getResult();
  const ConvGeometry &g = spec.geometry;
  Value result;
  auto strides = b.getDenseI64ArrayAttr(g.strides);
  auto dilations = b.getDenseI64ArrayAttr(g.dilations);
  auto padding = b.getDenseI64ArrayAttr(g.padding());
  auto layout = FilterLayoutAttr::get(context, spec.filterLayout);
  UnitAttr overwrite = spec.accumulate ? UnitAttr() : b.getUnitAttr();
  if (spec.kind == ConvKind::dgrad)
    result = ConvBackwardDataOp::create(
        b, loc, init.getType(), gradOutput, filter,
        /*pre_activation=*/residual, init, strides, dilations, padding, layout,
        overwrite, ActivationAttr::get(context, spec.activation));
  else if (spec.kind == ConvKind::wgrad)
    result = ConvBackwardFilterOp::create(b, loc, init.getType(), input,
                                          gradOutput, init, strides, dilations,
                                          padding, layout, overwrite);
  else
    result = buildForward(b, loc, spec, input, filter, bias, residual, amax,
                          init, history, gamma, beta, filterScales, filterAmax);
  auto materialize = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, result, output);
  materialize.setRestrict(true);
  materialize.setWritable(true);
  func::ReturnOp::create(b, loc);
  return module;
}

/// The conv3d.conv of a forward spec, with its epilogue, quantization,
/// history and prologue operands.
static Value buildForward(OpBuilder &b, Location loc, const ConvSpec &spec,
                          Value input, Value filter, Value bias, Value residual,
                          Value amax, Value init, Value history, Value gamma,
                          Value beta, Value filterScales, Value filterAmax) {
  MLIRContext *context = b.getContext();
  const ConvGeometry &g = spec.geometry;
  auto conv = ConvOp::create(
      b, loc, TypeRange{init.getType()}, input, filter, bias, residual, amax,
      init, history, gamma, beta, b.getDenseI64ArrayAttr(g.strides),
      b.getDenseI64ArrayAttr(g.dilations), b.getDenseI64ArrayAttr(g.padding()),
      FilterLayoutAttr::get(context, spec.filterLayout),
      ActivationAttr::get(context, spec.activation),
      spec.inputQuantBlockSize
          ? NVFP4Attr::get(context, *spec.inputQuantBlockSize)
          : NVFP4Attr(),
      spec.accumulate ? UnitAttr() : b.getUnitAttr(),
      /*config=*/IGemmConfigAttr(),
      spec.hasNorm ? b.getF32FloatAttr(spec.normEps) : FloatAttr(),
      ActivationAttr::get(context, spec.inputActivation), filterScales,
      filterAmax, spec.packedFilter ? NVFP4Attr::get(context, 16) : NVFP4Attr(),
      b.getI64IntegerAttr(g.groups));
  return conv.getResult()[0];
}

OwningOpRef<ModuleOp> mlir::conv3d::buildFilterQuantizeModule(
    MLIRContext *context, const ConvSpec &spec, int64_t blockSize) {
  context->loadDialect<Conv3dDialect, func::FuncDialect,
                       bufferization::BufferizationDialect>();
  OpBuilder b(context);
  Location loc = NameLoc::get(b.getStringAttr("conv3d.quantize_filter"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type elem = getMLIRType(context, spec.inputType);
  MemRefType filterType = memrefOf(spec.filterShape(), elem);
  func::FuncOp func = createFunction(b, loc, kQuantizeFunctionName,
                                     {filterType, b.getF32Type(), filterType});
  b.setInsertionPointToStart(&func.getBody().front());
  Value filter = toTensor(b, loc, func.getArgument(0));
  Value empty =
      tensor::EmptyOp::create(b, loc, spec.filterShape(), elem).getResult();
  // Blocks run over the flattened (q, r, s, c) for every output channel f:
  // the K order of the implicit GEMM's B operand, in either layout (the op's
  // blocks follow the row-major flattening of the given axes).
  SmallVector<int64_t> axes = spec.filterLayout == FilterLayout::qrscf
                                  ? SmallVector<int64_t>{0, 1, 2, 3}
                                  : SmallVector<int64_t>{1, 2, 3, 4};
  auto quantize = QuantizeOp::create(
      b, loc, TypeRange{empty.getType()}, filter, func.getArgument(1), empty,
      NVFP4Attr::get(context, blockSize), b.getDenseI64ArrayAttr(axes));
  auto materialize = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, quantize.getResult()[0], func.getArgument(2));
  materialize.setRestrict(true);
  materialize.setWritable(true);
  func::ReturnOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp>
mlir::conv3d::buildNVFP4PackModule(MLIRContext *context, ElementType type,
                                   const std::vector<int64_t> &shape,
                                   int64_t blockSize) {
  context->loadDialect<Conv3dDialect, func::FuncDialect>();
  OpBuilder b(context);
  Location loc = NameLoc::get(b.getStringAttr("conv3d.pack_nvfp4"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  std::vector<int64_t> codesShape = shape, scalesShape = shape;
  codesShape.back() /= 2;
  scalesShape.back() /= blockSize;
  func::FuncOp func =
      createFunction(b, loc, kPackNVFP4FunctionName,
                     {memrefOf(shape, getMLIRType(context, type)),
                      b.getF32Type(), memrefOf(codesShape, b.getI8Type()),
                      memrefOf(scalesShape, b.getI8Type())});
  b.setInsertionPointToStart(&func.getBody().front());
  PackNVFP4Op::create(b, loc, func.getArgument(0), func.getArgument(1),
                      func.getArgument(2), func.getArgument(3),
                      NVFP4Attr::get(context, blockSize));
  func::ReturnOp::create(b, loc);
  return module;
}
