//===- DepthwiseKernel.cpp - what the depthwise kernel takes --------------===//
//
// The depthwise kernel reads each input vector of a window row once per W
// block and multiplies it by one filter tap vector per channel vector: no
// GEMM, so no tile configuration. It takes what its loop nest computes:
// depthwise convolutions (its design point), channel multipliers and groups
// of several channels (on CUDA cores: with 16 or more channels per group a
// grouped GEMM on the tensor cores would be faster, which no family
// implements yet).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;

std::optional<std::string>
mlir::conv3d::depthwiseKernelProblem(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  if (!g.isGrouped())
    return std::string("the depthwise kernel takes grouped convolutions "
                       "(groups > 1); dense ones are GEMMs");
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
