//===- ListConfigs.cpp - conv3d-run --list-configs ------------------------===//
//
// The tile configurations a convolution can be compiled with, without a
// GPU: the default one, as the graph pipeline's conv3d-select-config
// attaches it (the cost model's pick on sm90 unless --selection=heuristic;
// with its fallback to the sm80 kernel), the families' heuristic's
// ("rule"), and the tuner's other candidates (tuningCandidates, what --tune
// times), each with the cost model's predicted time. A benchmark that times
// every candidate (bench/networks.py --candidates, the measurements a cost
// model is fitted on) compiles each through --config or the APIs' config
// option.
//
//===----------------------------------------------------------------------===//

#include "Runners.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Registration.h"
#include "conv3d/Runtime/ConvModuleBuilder.h"
#include "conv3d/Runtime/TuningProblem.h"
#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Transforms/ConfigHeuristics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::conv3d;

int conv3d_run::runListConfigs(const RunRequest &request) {
  const ConvSpec &spec = request.spec;
  const CompileOptions &options = request.options;
  // The graph pipeline is assembled from registered pass names.
  registerAllPasses();
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // The heuristic: the graph pipeline's configuration of each convolution
  // of the spec's module (several where a Q-slice decomposition splits it).
  // Remarks say why a kernel was not taken (the sm80 fallback's reason).
  std::vector<std::string> remarks;
  ScopedDiagnosticHandler keepRemarks(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != DiagnosticSeverity::Remark)
      return failure(); // errors go on to the default handler
    remarks.push_back(diagnostic.str());
    return success();
  });
  OwningOpRef<ModuleOp> module = buildConvModule(&context, spec);
  PassManager pm(&context);
  buildConv3dGraphPipeline(pm, options);
  if (failed(pm.run(*module)))
    return fail("the graph pipeline failed on " + spec.describe());
  // The cost model's time of each configuration listed (ms), where it has
  // a model of the kernel.
  ConvProblem problem = tuningProblem(&context, spec, options);
  llvm::json::Object predictions;
  auto predict = [&](IGemmConfigAttr config) {
    std::string text = formatIGemmConfig(config);
    if (const KernelFamily *family = getKernelFamilyFor(config, options.target))
      if (std::optional<KernelPrediction> prediction =
              family->predict(problem, config))
        predictions[text] = prediction->seconds * 1e3;
    return text;
  };
  std::vector<std::string> heuristic;
  module->walk([&](ConvOp conv) {
    if (IGemmConfigAttr config = conv.getConfigAttr())
      heuristic.push_back(predict(config));
  });
  // The families' rules alone, for comparison with the model's pick.
  std::string rule = predict(selectKernel(&context, problem, options.target,
                                          SelectionPolicy::Heuristic)
                                 .config);

  // The tuner's candidates, chosen as Engine::compileTuned chooses them.
  std::vector<std::string> candidates;
  for (IGemmConfigAttr config :
       tuningCandidates(&context, problem, options.target))
    candidates.push_back(predict(config));

  if (request.json) {
    auto array = [](const std::vector<std::string> &texts) {
      return llvm::json::Array(texts);
    };
    llvm::outs() << llvm::json::Value(llvm::json::Object{
                        {"spec", spec.describe()},
                        {"options", options.describe()},
                        {"heuristic", llvm::join(heuristic, ";")},
                        {"heuristics", array(heuristic)},
                        {"rule", rule},
                        {"candidates", array(candidates)},
                        {"predicted_ms", std::move(predictions)},
                        {"remarks", array(remarks)}})
                 << "\n";
    return kOk;
  }
  for (const std::string &remark : remarks)
    llvm::outs() << "remark: " << remark << "\n";
  auto predicted = [&](const std::string &config) {
    if (std::optional<double> ms = predictions.getNumber(config))
      return llvm::formatv(" (predicted {0:f4} ms)", *ms).str();
    return std::string();
  };
  for (const std::string &config : heuristic)
    llvm::outs() << "heuristic: " << config << predicted(config) << "\n";
  llvm::outs() << "rule: " << rule << predicted(rule) << "\n";
  for (const std::string &config : candidates)
    llvm::outs() << "candidate: " << config << predicted(config) << "\n";
  return kOk;
}
