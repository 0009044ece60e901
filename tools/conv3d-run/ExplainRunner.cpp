//===- ExplainRunner.cpp - conv3d-run --explain ---------------------------===//
//
// Which kernel family runs the convolution, with which configuration, and
// what every family of the target said (Engine::explain): text, or one JSON
// object with --json. Nothing is compiled to a binary and nothing runs, so
// any target can be explained on any machine.
//
//===----------------------------------------------------------------------===//

#include "Runners.h"

#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/Explain.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir::conv3d;

int conv3d_run::runExplain(const RunRequest &request) {
  Engine engine(request.cache);
  llvm::Expected<Explanation> explanation =
      engine.explain(request.spec, request.options);
  if (!explanation)
    return fail(llvm::toString(explanation.takeError()));
  if (request.json)
    llvm::outs() << explanation->toJSON() << "\n";
  else
    llvm::outs() << explanation->toText();
  return kOk;
}
