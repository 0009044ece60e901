//===- KernelProblem.cpp - a grid loop's convolution for the families -----===//
//
// What the kernel families (conv3d/Target) need to know of an implicit-GEMM
// grid loop that the op-level facts do not say: the memref operands'
// alignments and strides, read here once for every lowering.
//
//===----------------------------------------------------------------------===//

#include "KernelCommon.h"

using namespace mlir;
using namespace mlir::conv3d;

/// Whether `operand`'s depth slices, seen as the images of a rank-4 tensor
/// (per-depth-slice TMA views), are a whole number of depth strides apart
/// per image, at least `depth` of them.
static bool slicesPerImage(Value operand, int64_t depth) {
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(strides[0]) &&
         !ShapedType::isDynamic(strides[1]) && strides[1] > 0 &&
         strides[0] % strides[1] == 0 && strides[0] / strides[1] >= depth;
}

ConvProblem GridKernel::problem() const {
  ConvProblem problem;
  problem.geometry = geometry();
  const ConvGeometry &g = problem.geometry;
  problem.filterLayout = filterLayout();
  problem.inputType = inputElementType();
  if (std::optional<NVFP4Attr> quant = im2col.getQuant()) {
    problem.quantBlockSize = quant->getBlockSize();
    problem.quantizesInTile = true;
  }
  Value input = im2col.getInput(), history = im2col.getHistory();
  problem.hasHistory = static_cast<bool>(history);
  problem.hasPrologue = im2col.hasPrologue();
  OperandLayouts layouts;
  layouts.inputAlignment = elementAlignment(input);
  layouts.filterAlignment = elementAlignment(filterLoad.getFilter());
  layouts.inputSlicesPerImage = slicesPerImage(input, g.inputOperandDepth());
  if (history) {
    layouts.historyAlignment = elementAlignment(history);
    layouts.historyStaticDepth = !ShapedType::isDynamic(g.historyDepth);
    layouts.historySlicesPerImage = slicesPerImage(history, g.historyDepth);
  }
  problem.layouts = layouts;
  return problem;
}
