//===- DepthwiseKernel.cpp - what the depthwise kernel takes --------------===//
//
// The depthwise kernel reads each input vector of a window row once per W
// block and multiplies it by one filter tap vector per channel vector: no
// GEMM, so no tile configuration. It takes what its loop nest computes.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;

std::optional<std::string>
mlir::conv3d::depthwiseKernelProblem(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  if (!g.isGrouped() || g.channelsPerGroup() != 1)
    return std::string("the depthwise kernel takes one input channel per "
                       "group (groups = C)");
  if (g.filtersPerGroup() != 1)
    return "the depthwise kernel takes one filter per group (F = C); this "
           "convolution has a channel multiplier of " +
           std::to_string(g.filtersPerGroup());
  if (!g.hasStaticShape())
    return std::string("the depthwise kernel needs static shapes");
  if (problem.packedFilter || problem.quantBlockSize)
    return std::string("the depthwise kernel does not take NVFP4 operands");
  if (problem.hasHistory)
    return std::string("the depthwise kernel does not read a history "
                       "operand");
  if (problem.hasPrologue)
    return std::string("the depthwise kernel does not apply an input "
                       "prologue (prologue-placement=prepass runs it as a "
                       "separate pass)");
  return std::nullopt;
}
