//===- IRDumps.cpp - IR in error messages only on request -----------------===//

#include "conv3d/Support/IRDumps.h"

#include <cstdlib>

using namespace mlir::conv3d;

bool mlir::conv3d::dumpIROnErrorRequested() {
  const char *value = std::getenv(kDumpIROnErrorVariable.data());
  return value && llvm::StringRef(value) == "1";
}

llvm::StringRef mlir::conv3d::dumpIROnErrorHint() {
  return "hint: set CONV3D_DUMP_IR_ON_ERROR=1 to see the IR of the operation "
         "each error is about";
}
