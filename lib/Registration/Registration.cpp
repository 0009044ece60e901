//===- Registration.cpp - register everything conv3d tools need -----------===//
//
// The only translation unit that includes the upstream "register all"
// headers: they are heavy to compile.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Registration.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::conv3d::registerAllDialects(DialectRegistry &registry) {
  registerConv3dDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::conv3d::registerAllPasses() {
  mlir::registerAllPasses();
  registerConv3dConversionPasses();
  registerConv3dTransformsPasses();
  registerConv3dPipelines();
}
