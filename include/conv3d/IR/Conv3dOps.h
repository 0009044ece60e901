//===- Conv3dOps.h - conv3d operations --------------------------*- C++ -*-===//

#ifndef CONV3D_IR_CONV3DOPS_H
#define CONV3D_IR_CONV3DOPS_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#define GET_OP_CLASSES
#include "conv3d/IR/Conv3dOps.h.inc"

#define GET_OP_CLASSES
#include "conv3d/IR/Conv3dTileOps.h.inc"

namespace mlir::conv3d {

/// The element types the dialect computes with: bf16, f16 and f32.
bool isSupportedComputeType(Type type);

/// Static 5-element shape of a rank-5 shaped type (sizes may be kDynamic).
std::array<int64_t, 5> getShape5(Type shapedType);

/// The NDHWC `input` tensor padded with zeros per `geometry` (a tensor.pad;
/// the padding of the spatial axes, none on N and C).
Value createZeroPaddedInput(OpBuilder &b, Location loc, Value input,
                            const ConvGeometry &geometry);

/// Registers the interface models of the dialect's ops that live outside the
/// dialect (bufferization).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::conv3d

#endif // CONV3D_IR_CONV3DOPS_H
