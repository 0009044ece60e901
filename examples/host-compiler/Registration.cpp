//===- Registration.cpp - what this host compiler registers ---------------===//

#include "Registration.h"

#include "conv3d/Registration.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void registerHostCompiler(mlir::DialectRegistry &registry) {
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  mlir::conv3d::registerConv3dDialects(registry);
  mlir::conv3d::registerConv3dPipelineDependencies(registry);
  mlir::conv3d::registerConv3dPasses();
}
