/*===- Dialects.h - conv3d in MLIR's C API ------------------------*- C -*-===*\
|*                                                                            *|
|* For hosts built on MLIR's C API (Python bindings, other languages): the   *|
|* conv3d dialect handle in MLIR's style, and the registration calls of      *|
|* conv3d/Registration.h. The hooks are defined in libConv3d; the            *|
|* mlirDialectHandle* functions that use them are MLIR's C API (MLIRCAPIIR). *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef CONV3D_C_DIALECTS_H
#define CONV3D_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__conv3d__(): mlirDialectHandleInsertDialect,
 * mlirDialectHandleLoadDialect, mlirDialectHandleGetNamespace ("conv3d"). */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Conv3d, conv3d);

/* The conv3d dialect with its interface models (registerConv3dDialects). */
MLIR_CAPI_EXPORTED void
mlirConv3dRegisterDialects(MlirDialectRegistry registry);

/* The upstream interface models the conv3d pipelines rely on
 * (registerConv3dPipelineDependencies). */
MLIR_CAPI_EXPORTED void
mlirConv3dRegisterPipelineDependencies(MlirDialectRegistry registry);

/* conv3d's passes and pipelines and the upstream pass groups they are
 * written with (registerConv3dPasses). */
MLIR_CAPI_EXPORTED void mlirConv3dRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* CONV3D_C_DIALECTS_H */
