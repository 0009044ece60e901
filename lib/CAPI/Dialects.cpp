//===- Dialects.cpp - conv3d in MLIR's C API ------------------------------===//

#include "conv3d-c/Dialects.h"

#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Conv3d, conv3d,
                                      mlir::conv3d::Conv3dDialect)

void mlirConv3dRegisterDialects(MlirDialectRegistry registry) {
  mlir::conv3d::registerConv3dDialects(*unwrap(registry));
}

void mlirConv3dRegisterPipelineDependencies(MlirDialectRegistry registry) {
  mlir::conv3d::registerConv3dPipelineDependencies(*unwrap(registry));
}

void mlirConv3dRegisterPasses(void) { mlir::conv3d::registerConv3dPasses(); }
