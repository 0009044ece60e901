//===- BenchmarkSuite.h - the JSON benchmark suite --------------*- C++ -*-===//
//
// Reads bench/shapes.json: {"shapes": [{"name", "N", "C", "D", "H", "W", "F",
// "k": [q, r, s], "stride": [d, h, w], "pad": [d, h, w]}, ...]} with
// symmetric padding per axis, bf16 operands.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_BENCHMARKSUITE_H
#define CONV3D_RUNTIME_BENCHMARKSUITE_H

#include "conv3d/Runtime/ConvSpec.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::conv3d {

struct BenchmarkShape {
  std::string name;
  ConvGeometry geometry;
};

/// All shapes of a suite file.
llvm::Expected<std::vector<BenchmarkShape>>
loadBenchmarkSuite(llvm::StringRef path);

/// One named shape of a suite file.
llvm::Expected<BenchmarkShape> loadBenchmarkShape(llvm::StringRef path,
                                                  llvm::StringRef name);

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_BENCHMARKSUITE_H
