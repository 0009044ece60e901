//===- CAPIDialectTest.cpp - conv3d through MLIR's C API ------------------===//
//
// A host built on MLIR's C API gets the conv3d dialect through its handle
// (mlirGetDialectHandle__conv3d__) and parses conv3d IR with it; the
// registration calls of conv3d-c/Dialects.h fill a C API registry.
//
//===----------------------------------------------------------------------===//

#include "conv3d-c/Dialects.h"

#include "mlir-c/IR.h"

#include "gtest/gtest.h"

#include <string>

namespace {

const char *kModule =
    "module attributes {conv3d.test = #conv3d.igemm_config<tile_m = 64, "
    "tile_n = 32, tile_k = 16, stages = 2, warps_m = 2, warps_n = 1>} {}";

TEST(CAPIDialect, HandleNamesAndLoadsTheDialect) {
  MlirDialectHandle handle = mlirGetDialectHandle__conv3d__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  EXPECT_EQ(std::string(ns.data, ns.length), "conv3d");

  MlirContext context = mlirContextCreateWithThreading(false);
  // Without the dialect the attribute does not parse.
  mlirContextSetAllowUnregisteredDialects(context, false);
  MlirModule before =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  EXPECT_TRUE(mlirModuleIsNull(before));

  mlirDialectHandleRegisterDialect(handle, context);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, context);
  ASSERT_FALSE(mlirDialectIsNull(dialect));
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  EXPECT_FALSE(mlirModuleIsNull(module));
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(context);
}

TEST(CAPIDialect, RegistrationCallsFillARegistry) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirConv3dRegisterDialects(registry);
  mlirConv3dRegisterPipelineDependencies(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  EXPECT_FALSE(mlirModuleIsNull(module));
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(context);
  mlirDialectRegistryDestroy(registry);
}

} // namespace
