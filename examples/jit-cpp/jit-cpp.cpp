//===- jit-cpp.cpp - compile and run a convolution through Engine ---------===//
//
// The smallest C++ consumer of the installed package: describe a causal
// 3x3x3 convolution with bias and SiLU, compile it for the CPU target, run
// it on random data with a poisoned output, and compare with the library's
// double-precision reference convolution. Exit status 0 when it matches.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir::conv3d;

int main() {
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = 2;
  g.inputSize = {6, 10, 9};
  g.channels = 8;
  g.window = {3, 3, 3};
  g.filters = 12;
  g.padLow = {2, 1, 1}; // causal along depth
  g.padHigh = {0, 1, 1};
  spec.inputType = spec.outputType = ElementType::f32;
  spec.hasBias = true;
  spec.activation = Activation::silu;

  Engine engine{CacheOptions{}}; // no disk cache: always compile
  CompileOptions options;        // target cpu, implicit-GEMM lowering
  auto conv = engine.compile(spec, options);
  if (!conv) {
    llvm::errs() << "compile failed: " << llvm::toString(conv.takeError())
                 << "\n";
    return 1;
  }

  uint64_t seed = std::random_device{}();
  HostTensor input = HostTensor::zeros(ElementType::f32, spec.inputShape());
  HostTensor filter = HostTensor::zeros(ElementType::f32, spec.filterShape());
  HostTensor bias = HostTensor::zeros(ElementType::f32, {g.filters});
  HostTensor output = HostTensor::zeros(ElementType::f32, spec.outputShape());
  fillRandomNormal(input, seed);
  fillRandomNormal(filter, seed + 1, 0.2);
  fillRandomNormal(bias, seed + 2);
  fillPoison(output);

  // Each buffer with its extents: run() checks them against the spec (an
  // output of the wrong shape or element size is an error, never a write
  // past its end). HostTensors carry their shape and type; raw pointers
  // take {data, shape} (elements of sizeof(*data) bytes).
  ConvBuffers buffers;
  buffers.input = input;
  buffers.filter = filter;
  buffers.bias = bias;
  buffers.output = output;
  ReferenceConvProblem problem;
  problem.geometry = g;
  problem.input = &input;
  problem.filter = &filter;
  problem.bias = &bias;
  problem.activation = spec.activation;
  std::vector<double> expected = referenceConv(problem);
  if (llvm::Error e = (*conv)->run(buffers)) {
    llvm::errs() << "run failed: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }

  double num = 0, den = 0;
  for (int64_t i = 0, e = output.numElements(); i < e; ++i) {
    double d = output.get(i) - expected[i];
    num += d * d;
    den += expected[i] * expected[i];
  }
  double relL2 = std::sqrt(num / den);
  bool ok = std::isfinite(relL2) && relL2 < 1e-5;
  llvm::outs() << "jit-cpp: " << spec.describe() << "\n"
               << "  seed " << seed << ", compiled in "
               << llvm::format("%.0f", (*conv)->getStats().totalMillis)
               << " ms, rel_l2 = " << llvm::format("%.2e", relL2) << ": "
               << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
