//===- CheckAllocations.cpp - conv3d-check-allocations --------------------===//
//
// memref.alloc becomes malloc(elements * element size) with the product
// computed in wrapping 64-bit arithmetic: a geometry whose temporaries need
// more than 2^63 bytes would get a small buffer and write past it, and one
// that merely exceeds the machine's memory would die of it. Static sizes
// are known here, so they are checked here (and their total recorded for
// the engine, which knows the machine).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/AttrNames.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DCHECKALLOCATIONS
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

/// Bytes of one element of a memref, where it is a scalar or a static
/// vector of scalars; null for what has no fixed host size here.
static std::optional<int64_t> elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return int64_t(llvm::divideCeil(type.getIntOrFloatBitWidth(), 8));
  if (auto vector = dyn_cast<VectorType>(type)) {
    if (vector.isScalable())
      return std::nullopt;
    std::optional<int64_t> scalar = elementBytes(vector.getElementType());
    int64_t bytes = scalar.value_or(0);
    for (int64_t dim : vector.getShape())
      if (!scalar || llvm::MulOverflow(bytes, dim, bytes))
        return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

namespace {
struct CheckAllocationsPass
    : mlir::conv3d::impl::Conv3dCheckAllocationsBase<CheckAllocationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t total = 0;
    bool failedCheck = false;
    module->walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
      // Device code allocates shared or local memory, not host memory.
      if (isa<gpu::GPUModuleOp, gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (!isa<memref::AllocOp, memref::AllocaOp>(op))
        return WalkResult::advance();
      auto type = cast<MemRefType>(op->getResult(0).getType());
      std::optional<int64_t> element = elementBytes(type.getElementType());
      if (!type.hasStaticShape() || !element)
        return WalkResult::advance();
      int64_t bytes = *element;
      for (int64_t dim : type.getShape())
        if (llvm::MulOverflow(bytes, dim, bytes)) {
          op->emitError() << "conv3d-check-allocations: " << op->getName()
                          << " of " << type << " needs more than 2^63 bytes";
          failedCheck = true;
          return WalkResult::interrupt();
        }
      if (maxBytes > 0 && bytes > maxBytes) {
        op->emitError() << "conv3d-check-allocations: " << op->getName()
                        << " of " << type << " needs " << bytes
                        << " bytes; the limit is " << int64_t(maxBytes);
        failedCheck = true;
        return WalkResult::interrupt();
      }
      if (llvm::AddOverflow(total, bytes, total)) {
        op->emitError() << "conv3d-check-allocations: the module's "
                           "allocations need more than 2^63 bytes in all";
        failedCheck = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (failedCheck)
      return signalPassFailure();
    if (maxBytes > 0 && total > maxBytes) {
      module.emitError() << "conv3d-check-allocations: the module's "
                            "allocations need "
                         << total << " bytes in all; the limit is "
                         << int64_t(maxBytes);
      return signalPassFailure();
    }
    module->setAttr(
        kHostAllocationBytesAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), total));
  }
};
} // namespace
