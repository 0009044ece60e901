//===- conv3d-pass-fuzzer.cpp - fuzz the conv3d passes --------------------===//
//
// libFuzzer target: a module (seeds: the lit tests' valid convolutions,
// which libFuzzer mutates) that parses and verifies is run through the
// conv3d pipelines and single passes, each on its own copy, for every
// target. A pass may refuse its input with a diagnostic; it must not crash,
// and a pass that succeeds must leave IR that verifies: the module is
// verified after each pass (an instrumentation, with the pass manager's own
// verifier off so that a broken invariant traps instead of failing
// quietly).
//
//===----------------------------------------------------------------------===//

#include "FuzzerSupport.h"

#include "conv3d/Pipelines/Pipelines.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <mutex>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Verifies the operation a pass ran on after every successful pass; traps
/// naming the pass when it left invalid IR.
class VerifyAfterEachPass : public PassInstrumentation {
public:
  void runAfterPass(Pass *pass, Operation *op) override {
    if (succeeded(verify(op)))
      return;
    llvm::errs() << "conv3d-pass-fuzzer: pass '" << pass->getArgument()
                 << "' succeeded but left IR that does not verify:\n";
    op->print(llvm::errs(), OpPrintingFlags().printGenericOpForm());
    llvm::errs() << "\n";
    __builtin_trap();
  }
};

using PipelineBuilder = std::function<void(OpPassManager &)>;

PipelineBuilder textual(std::string text) {
  return [text](OpPassManager &pm) {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (failed(parsePassPipeline(text, pm, os))) {
      llvm::errs() << "conv3d-pass-fuzzer: bad pipeline '" << text
                   << "': " << errors << "\n";
      __builtin_trap();
    }
  };
}

PipelineBuilder withOptions(void (*build)(OpPassManager &,
                                          const PipelineOptions &),
                            Target target) {
  return [build, target](OpPassManager &pm) {
    PipelineOptions options;
    options.target = target;
    build(pm, options);
  };
}

/// What each input runs through: the graph and lowering pipelines of every
/// target with a lowering (tensor-level inputs), and the memref-level
/// passes alone (memref-level inputs, as in the conversion tests). The
/// final LLVM and binary steps are upstream's and are left out.
const std::vector<PipelineBuilder> &pipelines() {
  static const std::vector<PipelineBuilder> list = {
      withOptions(buildConv3dGraphPipeline, Target::cpu),
      withOptions(buildConv3dGraphPipeline, Target::sm90),
      withOptions(buildConv3dCpuLoweringPipeline, Target::cpu),
      withOptions(buildConv3dGpuLoweringPipeline, Target::sm80),
      withOptions(buildConv3dGpuLoweringPipeline, Target::sm90),
      textual("builtin.module(conv3d-to-linalg,conv3d-from-linalg)"),
      textual("builtin.module(conv3d-quantize-to-loops)"),
      textual("builtin.module(conv3d-implicit-gemm{target=cpu},"
              "conv3d-lower-to-cpu)"),
      textual("builtin.module(conv3d-select-config{target=sm80},"
              "conv3d-implicit-gemm{target=sm80},conv3d-lower-to-sm80,"
              "conv3d-lower-host-ops-to-gpu)"),
      textual("builtin.module(conv3d-select-config{target=sm90},"
              "conv3d-implicit-gemm{target=sm90},conv3d-lower-to-sm90,"
              "conv3d-set-kernel-occupancy)"),
  };
  return list;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> context = conv3d_fuzz::makeContext();
  OwningOpRef<ModuleOp> module =
      conv3d_fuzz::parseValidModule(*context, data, size);
  if (!module)
    return 0;
  for (const PipelineBuilder &build : pipelines()) {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(context.get());
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
    build(pm);
    (void)pm.run(*copy);
  }
  return 0;
}
