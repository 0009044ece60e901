//===- Explain.h - why a convolution runs on the kernel it runs on -*- C++ -*-//
//
// Engine::explain: for a spec and options, what conv3d-select-config decides
// for each convolution of the compiled module (after the graph passes that
// run before it: prologue and quantization placement, the NVFP4 mode,
// epilogue fusion, the filter relayout), from the target's kernel families
// (conv3d/Target/KernelFamily.h): the family chosen and its configuration,
// its predicted time and waves (none until the cost model lands), and what
// every family of the target said, with the reason of each refusal. Needs
// no GPU and no CUDA toolkit, for any target; conv3d-run --explain, the C
// API (conv3d_explain) and Python (conv3d.explain) print it.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_EXPLAIN_H
#define CONV3D_RUNTIME_EXPLAIN_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::conv3d {

/// What one family of the target said of a convolution.
struct FamilyReport {
  std::string family;
  /// chosen, declined (it could; its heuristic leaves it to a later
  /// family), refused (it cannot) or "not reached" (an earlier one took it).
  std::string verdict;
  std::string reason;
};

/// The cost model's estimate (KernelPrediction).
struct PredictionReport {
  double seconds = 0, waves = 0, bytes = 0;
};

/// conv3d-select-config's choice for one convolution, and why.
struct ConvExplanation {
  /// The convolution as the families see it: GEMM shape, operands,
  /// quantization, extra operands.
  std::string problem;
  /// The chosen family: name, summary, chip and the pass that lowers it.
  std::string family, summary, chip, loweringPass;
  /// No family can take it: `family` (the target's last) runs its
  /// heuristic and its lowering reports why it cannot.
  bool refused = false;
  /// The chosen configuration (`key=value,...`).
  std::string config;
  /// Where the cost model chose another configuration than the heuristic:
  /// the heuristic's and its estimate.
  std::string heuristicConfig;
  std::optional<PredictionReport> heuristicPrediction;
  /// The configuration the host's hook or config= forced instead, if any,
  /// and the family that runs it.
  std::string forcedConfig, forcedFamily;
  /// GEMM tiles of `config`: ceil(M / tile_m) x ceil(N / tile_n) x split_k.
  int64_t tiles = 0;
  /// None: the cost model does not cover the kernel (cpu).
  std::optional<PredictionReport> prediction;
  /// The chosen family's remarks (e.g. per-depth-slice TMA descriptors).
  std::vector<std::string> notes;
  /// Every family of the target, in fallback order.
  std::vector<FamilyReport> families;
};

struct Explanation {
  /// ConvSpec::describe() and PipelineOptions::describe().
  std::string spec, options;
  std::string target;
  /// For a gradient (ConvSpec::kind dgrad or wgrad): how it becomes the
  /// forward convolutions listed (conv3d-lower-conv-gradients); empty for
  /// fprop.
  std::string gradient;
  std::vector<ConvExplanation> convolutions;
  /// The configurations of the convolutions the graph passes leave (the
  /// Q-slice pass may reorder a configuration's K loop or split a
  /// convolution), in module order.
  std::vector<std::string> compiledConfigs;
  /// With tune=true: how many configurations the tuner times besides the
  /// heuristic's.
  std::optional<int64_t> tuningCandidates;

  /// Human-readable, one convolution after another.
  std::string toText() const;
  /// The same as a JSON object (see README, "Why this kernel").
  llvm::json::Value toJSON() const;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_EXPLAIN_H
