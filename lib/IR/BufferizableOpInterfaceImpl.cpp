//===- BufferizableOpInterfaceImpl.cpp - one-shot bufferization models ----===//
//
// The destination-style ops bufferize in place into their `outs` buffer: the
// memref form of the same op with the same attributes. A destination that is
// only written (`overwrite`, and always for `conv3d.quantize`) is not a
// memory read, so one-shot bufferization need not copy its old contents.
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::conv3d;

namespace {

/// Whether the op reads the old contents of its destination.
bool readsInit(Operation *op) {
  if (auto conv = dyn_cast<ConvOp>(op))
    return !conv.getOverwrite();
  if (auto epilogue = dyn_cast<EpilogueOp>(op))
    return !epilogue.getOverwrite();
  return false; // conv3d.quantize writes every element.
}

template <typename OpTy>
struct DpsOpBufferizationModel
    : DstBufferizableOpInterfaceExternalModel<DpsOpBufferizationModel<OpTy>,
                                              OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    return !dps.isDpsInit(&operand) || readsInit(op);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    // Every tensor operand becomes its buffer; the op is recreated without
    // results, with the same properties, and its result is the init buffer.
    SmallVector<Value> operands;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<TensorType>(operand.get().getType())) {
        operands.push_back(operand.get());
        continue;
      }
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      operands.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    Operation *newOp = Operation::create(
        op->getLoc(), op->getName(), /*resultTypes=*/TypeRange{}, operands,
        NamedAttrList(op->getDiscardableAttrDictionary()),
        op->getPropertiesStorage(), /*successors=*/{}, /*numRegions=*/0);
    rewriter.insert(newOp);
    auto dps = cast<DestinationStyleOpInterface>(op);
    Value initBuffer = operands[dps.getDpsInitOperand(0)->getOperandNumber()];
    replaceOpWithBufferizedValues(rewriter, op, initBuffer);
    return success();
  }
};

} // namespace

void mlir::conv3d::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, Conv3dDialect *) {
    ConvOp::attachInterface<DpsOpBufferizationModel<ConvOp>>(*ctx);
    QuantizeOp::attachInterface<DpsOpBufferizationModel<QuantizeOp>>(*ctx);
    EpilogueOp::attachInterface<DpsOpBufferizationModel<EpilogueOp>>(*ctx);
    PrologueOp::attachInterface<DpsOpBufferizationModel<PrologueOp>>(*ctx);
  });
}
