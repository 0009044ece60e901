//===- Conv3dDialect.cpp - conv3d dialect registration --------------------===//

#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::conv3d;

#include "conv3d/IR/Conv3dDialect.cpp.inc"
#include "conv3d/IR/Conv3dEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "conv3d/IR/Conv3dAttrs.cpp.inc"

void Conv3dDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "conv3d/IR/Conv3dAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "conv3d/IR/Conv3dOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "conv3d/IR/Conv3dTileOps.cpp.inc"
      >();
}
