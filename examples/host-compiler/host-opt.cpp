//===- host-opt.cpp - a host compiler's opt tool with conv3d --------------===//
//
//   host-opt --conv3d-from-linalg --conv3d-cpu-pipeline conv.mlir
//
//===----------------------------------------------------------------------===//

#include "Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerHostCompiler(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "a host compiler's opt tool with conv3d\n", registry));
}
