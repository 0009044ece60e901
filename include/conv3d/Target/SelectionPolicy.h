//===- SelectionPolicy.h - how a configuration is chosen --------*- C++ -*-===//
//
// The `selection` option of conv3d-select-config, conv3d-qslice and the
// pipelines. Kept apart from KernelFamily.h, without MLIR IR headers, for
// the pipelines' options header.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SELECTIONPOLICY_H
#define CONV3D_TARGET_SELECTIONPOLICY_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::conv3d {

/// How selectKernel chooses a taker's configuration.
enum class SelectionPolicy {
  /// The cost model among the heuristic's and the tuner's candidates, where
  /// the model covers the target (sm90); the heuristic elsewhere.
  CostModel,
  /// The families' heuristics alone (the rules fitted to the suite).
  Heuristic,
};

/// "model" / "heuristic": the options' spelling.
llvm::StringRef stringifySelectionPolicy(SelectionPolicy policy);
std::optional<SelectionPolicy> symbolizeSelectionPolicy(llvm::StringRef text);

} // namespace mlir::conv3d

#endif // CONV3D_TARGET_SELECTIONPOLICY_H
