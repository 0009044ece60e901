//===- KernelOccupancy.cpp - conv3d-set-kernel-occupancy ------------------===//
//
// gpu-kernel-outlining does not carry attributes from gpu.launch to the
// outlined gpu.func, so the occupancy a kernel needs is set on the kernel
// itself, from what it contains (Passes.td documents the rule).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DSETKERNELOCCUPANCY
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;

namespace {
struct SetKernelOccupancyPass
    : mlir::conv3d::impl::Conv3dSetKernelOccupancyBase<SetKernelOccupancyPass> {
  void runOnOperation() override {
    getOperation()->walk([&](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel())
        return;
      bool movesRegisters = kernel
                                .walk([](NVVM::SetMaxRegisterOp) {
                                  return WalkResult::interrupt();
                                })
                                .wasInterrupted();
      bool allocatesTensorMemory = kernel
                                       .walk([](NVVM::Tcgen05AllocOp) {
                                         return WalkResult::interrupt();
                                       })
                                       .wasInterrupted();
      if (movesRegisters || allocatesTensorMemory)
        kernel->setAttr(
            NVVM::NVVMDialect::getMinctasmAttrName(),
            IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    });
  }
};
} // namespace
