//===- conv3d-run.cpp - compile, run, check and time a convolution --------===//
//
// The project's main job. Spec mode compiles a convolution described by
// flags (or a preset of the benchmark suite), runs it on random or given
// data, compares it with the independent reference and reports timing.
// Module mode runs any function of an .mlir file on .npy arguments.
//
//===----------------------------------------------------------------------===//

#include "Flags.h"
#include "Runners.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::Expected<conv3d_run::RunRequest> request =
      conv3d_run::parseCommandLine(argc, argv);
  if (!request)
    return conv3d_run::fail(llvm::toString(request.takeError()));
  if (request->isModuleMode())
    return conv3d_run::runModule(*request);
  if (request->listConfigs)
    return conv3d_run::runListConfigs(*request);
  if (request->packBlockSize)
    return conv3d_run::runPackNVFP4(*request);
  if (request->explain)
    return conv3d_run::runExplain(*request);
  if (request->spec.kind != mlir::conv3d::ConvKind::fprop &&
      request->emit.empty())
    return conv3d_run::runGradient(*request);
  return conv3d_run::runSpec(*request);
}
