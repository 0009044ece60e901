//===- conv3d-opt.cpp - the conv3d optimizer driver -----------------------===//
//
// mlir-opt with the conv3d dialect and passes: every upstream dialect and
// pass is available too, so whole pipelines can be written and tested here.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::conv3d::registerAllDialects(registry);
  mlir::conv3d::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "conv3d optimizer driver\n", registry));
}
