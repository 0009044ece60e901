//===- Explain.cpp - Engine::explain and its text and JSON forms ----------===//
//
// The graph passes run as they do for a compilation, with a host hook in
// conv3d-select-config that records, for each convolution it configures,
// what the target's kernel families say (selectKernel on the op's facts:
// the same call the pass makes next) and returns no configuration, so the
// pass goes on exactly as without the hook.
//
//===----------------------------------------------------------------------===//

#include "EngineImpl.h"

#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Runtime/ConvModuleBuilder.h"
#include "conv3d/Runtime/Explain.h"
#include "conv3d/Runtime/TuningProblem.h"
#include "conv3d/Target/CostModel.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::conv3d;

namespace {

std::string joinInts(llvm::ArrayRef<int64_t> values,
                     llvm::StringRef separator) {
  std::string text;
  for (auto [i, value] : llvm::enumerate(values))
    text += (i ? separator.str() : "") + std::to_string(value);
  return text;
}

/// The convolution as the kernel families see it, one line.
std::string describeProblem(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "GEMM " << g.gemmM() << " x " << g.gemmN() << " x " << g.gemmK();
  if (g.isGrouped())
    os << " per group, " << g.gemmBatch() << " groups";
  os << "; input " << joinInts(g.inputShape(), "x") << " " << problem.inputType
     << ", window " << joinInts(g.window, "x") << ", F = " << g.filters
     << ", filter " << stringifyFilterLayout(problem.filterLayout)
     << ", strides " << joinInts(g.strides, ",") << ", dilations "
     << joinInts(g.dilations, ",") << ", padding "
     << joinInts(g.padding(), ",");
  if (problem.quantBlockSize)
    os << "; NVFP4 input, blocks of " << *problem.quantBlockSize
       << (problem.quantizesInTile ? " quantized in the tile loads"
                                   : " quantized by a prepass");
  if (problem.packedFilter)
    os << "; packed NVFP4 filter";
  if (g.historyDepth != 0)
    os << "; history of " << g.historyDepth << " frames";
  if (problem.hasPrologue)
    os << "; input prologue in the loads";
  if (problem.outputTakesTmaStore == false)
    os << "; output not TMA-storable (residual, accumulation, f32 or F not a "
          "multiple of 8)";
  return text;
}

ConvExplanation explainSelection(const ConvProblem &problem,
                                 const KernelSelection &selection) {
  ConvExplanation conv;
  conv.problem = describeProblem(problem);
  const KernelFamily &family = *selection.family;
  conv.family = family.getName().str();
  conv.summary = family.getSummary().str();
  conv.chip = family.getChip().str();
  conv.loweringPass = family.getLoweringPass().str();
  conv.refused = selection.refused;
  IGemmConfigAttr config = selection.config;
  conv.config = formatIGemmConfig(config);
  const ConvGeometry &g = problem.geometry;
  // The tiles the kernel schedules (per output depth slice where it loads
  // the input per slice), the cost model's count.
  conv.tiles =
      scheduledTiles(g, config, config.getKernel()) * config.getSplitK();
  if (selection.prediction)
    conv.prediction = PredictionReport{selection.prediction->seconds,
                                       selection.prediction->waves,
                                       selection.prediction->bytes};
  if (selection.heuristic) {
    conv.heuristicConfig = formatIGemmConfig(selection.heuristic);
    if (selection.heuristicPrediction)
      conv.heuristicPrediction =
          PredictionReport{selection.heuristicPrediction->seconds,
                           selection.heuristicPrediction->waves,
                           selection.heuristicPrediction->bytes};
  }
  conv.notes.assign(selection.notes.begin(), selection.notes.end());
  for (const FamilyVerdict &verdict : selection.verdicts)
    conv.families.push_back({verdict.family->getName().str(),
                             stringifyVerdict(verdict.kind).str(),
                             verdict.reason});
  return conv;
}

/// The weight gradient's forward form, as conv3d-lower-conv-gradients
/// builds it with `fold` (chosen by the target's cost model when `chosen`).
std::string describeWgradFold(WgradFold fold, bool chosen) {
  std::string text =
      fold == WgradFold::Width
          ? "the weight gradient runs as one forward convolution with the "
            "output gradient as its window (depth x height taps of width x "
            "batch channels) and the input's width taps and channels as its "
            "width (wgrad-fold=width"
          : "the weight gradient runs as one forward convolution with the "
            "output gradient as its window (depth taps of height x width x "
            "batch channels) and the input's height and width taps and "
            "channels as its width (wgrad-fold=height-width";
  return text + (chosen ? ", the cheaper for the target" : "") +
         "), given a kernel as any forward convolution (below)";
}

} // namespace

llvm::Expected<Explanation> Engine::explain(const ConvSpec &spec,
                                            const CompileOptions &options) {
  if (llvm::Error error = spec.validate())
    return std::move(error);
  if (llvm::Error error = checkEngineTarget(options, /*runs=*/false))
    return std::move(error);
  std::lock_guard<std::mutex> lock(impl->mutex);
  MLIRContext &context = impl->context;
  Explanation explanation;
  explanation.spec = spec.describe();
  explanation.options = options.describe();
  explanation.target = stringifyTarget(options.target).str();
  if (spec.kind == ConvKind::dgrad)
    explanation.gradient =
        "the data gradient runs as forward convolutions of the output "
        "gradient, one per stride phase that a tap reaches (dense, stride "
        "1, the phase's rotated taps), each given a kernel as any forward "
        "convolution (below)";
  else if (spec.kind == ConvKind::wgrad)
    explanation.gradient =
        describeWgradFold(chooseWgradFold(&context, spec.geometry,
                                          getMLIRType(&context, spec.inputType),
                                          options.target, options.wgradFold),
                          options.wgradFold == WgradFoldPolicy::Auto);

  IGemmConfigAttr forced;
  if (!options.config.empty()) {
    std::string error;
    forced = parseIGemmConfig(&context, options.config, error);
    if (!forced)
      return llvm::createStringError("config: " + error);
  }
  ConvolutionHooks hooks;
  hooks.selectConfig = [&](ConvOp conv) -> IGemmConfigAttr {
    ConvProblem problem = ConvProblem::fromConv(conv);
    SelectionPolicy policy =
        selectUnderQSlice(problem, options.qslice, options.selection);
    ConvExplanation explained = explainSelection(
        problem, selectKernel(&context, problem, options.target, policy));
    // Grouped convolutions the depthwise kernel takes (takesDepthwiseKernel)
    // go to it before the GEMM families (conv3d-lower-depthwise, which the
    // CPU target's reference lowering does not run).
    bool depthwisePipeline = options.target != Target::cpu ||
                             options.lowering == CpuLowering::ImplicitGemm;
    if (depthwisePipeline && takesDepthwiseKernel(problem, options.target)) {
      explained.family = "depthwise";
      explained.summary = "a direct loop nest, a thread per W block of a "
                          "16-byte channel vector; no GEMM";
      explained.chip = options.target == Target::cpu ? "host" : "sm_80+";
      explained.loweringPass = "conv3d-lower-depthwise";
      explained.refused = false;
      explained.config = "none (no GEMM tiles)";
      explained.tiles = 0;
      explained.prediction.reset();
    }
    if (forced) {
      explained.forcedConfig = options.config;
      if (const KernelFamily *family =
              getKernelFamilyFor(forced, options.target))
        explained.forcedFamily = family->getName().str();
    }
    explanation.convolutions.push_back(std::move(explained));
    return {};
  };
  OwningOpRef<ModuleOp> module = buildConvModule(&context, spec);
  if (llvm::Error error = runEnginePipeline(
          context, *module,
          [&](OpPassManager &pm) {
            buildConv3dGraphPipeline(pm, options, hooks);
          },
          "explaining " + spec.describe() + " (" + options.describe() + ")"))
    return std::move(error);
  module->walk([&](ConvOp conv) {
    std::optional<IGemmConfigAttr> config = conv.getConfig();
    explanation.compiledConfigs.push_back(
        config ? formatIGemmConfig(*config)
               : std::string("none: its lowering chooses"));
  });
  if (options.tune)
    explanation.tuningCandidates =
        tuningCandidates(&context, tuningProblem(&context, spec, options),
                         options.target)
            .size();
  return explanation;
}

std::string Explanation::toText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "explain: " << spec << "\n"
     << "options: " << options << "\n";
  if (!gradient.empty())
    os << "gradient: " << gradient << "\n";
  for (auto [i, conv] : llvm::enumerate(convolutions)) {
    os << "convolution " << i + 1 << " of " << convolutions.size() << ": "
       << conv.problem << "\n";
    os << "  kernel:        " << conv.family << " (" << conv.summary << "), "
       << conv.chip << ", lowered by " << conv.loweringPass << "\n";
    if (conv.refused)
      os << "                 no family of target " << target
         << " can take it: its lowering will report why\n";
    os << "  configuration: " << conv.config << "\n";
    if (!conv.forcedConfig.empty())
      os << "  forced:        " << conv.forcedConfig << " ("
         << (conv.forcedFamily.empty() ? "no family of target " + target
                                       : conv.forcedFamily)
         << ")\n";
    os << "  GEMM tiles:    " << conv.tiles << "\n";
    if (conv.prediction)
      os << llvm::formatv("  predicted:     {0:f3} ms, {1:f2} waves, {2:e2} "
                          "bytes\n",
                          conv.prediction->seconds * 1e3,
                          conv.prediction->waves, conv.prediction->bytes);
    else
      os << "  predicted:     no cost model for this kernel\n";
    if (!conv.heuristicConfig.empty()) {
      os << "  heuristic:     " << conv.heuristicConfig;
      if (conv.heuristicPrediction)
        os << llvm::formatv(" (predicted {0:f3} ms)",
                            conv.heuristicPrediction->seconds * 1e3);
      os << ": the cost model predicts the configuration above faster\n";
    }
    for (const std::string &note : conv.notes)
      os << "  note:          " << note << "\n";
    os << "  families of " << target << ":\n";
    for (const FamilyReport &family : conv.families) {
      os << llvm::formatv("    {0,-19} {1}", family.family, family.verdict);
      if (!family.reason.empty())
        os << ": " << family.reason;
      os << "\n";
    }
  }
  if (convolutions.empty())
    os << "no convolution left for conv3d-select-config to configure\n";
  for (const std::string &config : compiledConfigs)
    os << "compiled with: " << config << "\n";
  if (tuningCandidates)
    os << "tune=true: the tuner times the heuristic's configuration and "
       << *tuningCandidates << " candidates on the device\n";
  return text;
}

llvm::json::Value Explanation::toJSON() const {
  llvm::json::Array convs;
  for (const ConvExplanation &conv : convolutions) {
    llvm::json::Array families;
    for (const FamilyReport &family : conv.families)
      families.push_back(llvm::json::Object{{"family", family.family},
                                            {"verdict", family.verdict},
                                            {"reason", family.reason}});
    llvm::json::Value prediction = nullptr;
    if (conv.prediction)
      prediction = llvm::json::Object{{"seconds", conv.prediction->seconds},
                                      {"waves", conv.prediction->waves},
                                      {"bytes", conv.prediction->bytes}};
    llvm::json::Value heuristic = nullptr;
    if (!conv.heuristicConfig.empty())
      heuristic = llvm::json::Object{
          {"config", conv.heuristicConfig},
          {"seconds", conv.heuristicPrediction
                          ? llvm::json::Value(conv.heuristicPrediction->seconds)
                          : nullptr}};
    llvm::json::Object object{{"problem", conv.problem},
                              {"family", conv.family},
                              {"summary", conv.summary},
                              {"chip", conv.chip},
                              {"lowering_pass", conv.loweringPass},
                              {"refused", conv.refused},
                              {"config", conv.config},
                              {"gemm_tiles", conv.tiles},
                              {"prediction", std::move(prediction)},
                              {"heuristic", std::move(heuristic)},
                              {"notes", llvm::json::Array(conv.notes)},
                              {"families", std::move(families)}};
    if (!conv.forcedConfig.empty()) {
      object["forced_config"] = conv.forcedConfig;
      object["forced_family"] = conv.forcedFamily;
    }
    convs.push_back(std::move(object));
  }
  llvm::json::Object result{
      {"spec", spec},
      {"options", options},
      {"target", target},
      {"gradient", gradient.empty() ? llvm::json::Value(nullptr)
                                    : llvm::json::Value(gradient)},
      {"convolutions", std::move(convs)},
      {"compiled_configs", llvm::json::Array(compiledConfigs)}};
  result["tuning_candidates"] =
      tuningCandidates ? llvm::json::Value(*tuningCandidates) : nullptr;
  return result;
}
