//===- CheckPipelineInput.cpp - conv3d-check-pipeline-input ---------------===//
//
// The pipelines bufferize and then insert the deallocations themselves
// (ownership-based buffer deallocation), which cannot take code that frees
// its buffers already: such a module has been lowered before, and the
// message says so instead of upstream's internal one.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DCHECKPIPELINEINPUT
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;

namespace {
struct CheckPipelineInputPass
    : mlir::conv3d::impl::Conv3dCheckPipelineInputBase<CheckPipelineInputPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (!isa<memref::DeallocOp, bufferization::DeallocOp>(op))
        return WalkResult::advance();
      op->emitError()
          << "this module already frees its buffers (" << op->getName()
          << "): it was bufferized and lowered before. The conv3d pipelines "
             "take a module before buffer deallocation (conv3d and upstream "
             "ops on tensors, or on memrefs without deallocations): run them "
             "on the module this one was lowered from";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
