//===- ConvModuleBuilder.h - a ConvSpec as an MLIR module -------*- C++ -*-===//
//
// The module the engine compiles for a spec: one function on memrefs (the
// caller's buffers) whose body is the tensor-level IR the graph passes work
// on:
//
//   func.func @conv3d(%input, %filter, [%bias], [%residual], [%amax: f32],
//                     %output) attributes {llvm.emit_c_interface} {
//     %x = bufferization.to_tensor %input restrict ...
//     %y = conv3d.conv ins(%x, %w ...) outs(...) ...
//     bufferization.materialize_in_destination %y in restrict writable %output
//   }
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_CONVMODULEBUILDER_H
#define CONV3D_RUNTIME_CONVMODULEBUILDER_H

#include "conv3d/Runtime/ConvSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::conv3d {

/// The name of the function buildConvModule creates.
inline constexpr llvm::StringLiteral kConvFunctionName = "conv3d";
/// The name of the function buildFilterQuantizeModule creates.
inline constexpr llvm::StringLiteral kQuantizeFunctionName = "quantize_filter";
/// The name of the function buildNVFP4PackModule creates.
inline constexpr llvm::StringLiteral kPackNVFP4FunctionName = "pack_nvfp4";

/// The MLIR element type of an ElementType.
Type getMLIRType(MLIRContext *context, ElementType type);

/// Builds the module of a (validated) spec.
OwningOpRef<ModuleOp> buildConvModule(MLIRContext *context,
                                      const ConvSpec &spec);

/// Builds `quantize_filter(%filter, %amax, %out)`: NVFP4 fake quantization
/// of a filter in the convolution's K order per output channel (blocks over
/// (q, r, s, c) for each f), the offline counterpart of input quantization.
OwningOpRef<ModuleOp> buildFilterQuantizeModule(MLIRContext *context,
                                                const ConvSpec &spec,
                                                int64_t blockSize);

/// Builds `pack_nvfp4(%x, %amax, %codes, %scales)`: conv3d.pack_nvfp4 of a
/// row-major tensor of `shape` and `type` with blocks of `blockSize` along
/// its last dimension (a multiple of it), into i8 codes (last dimension
/// halved) and i8 scales (last dimension / blockSize).
OwningOpRef<ModuleOp> buildNVFP4PackModule(MLIRContext *context,
                                           ElementType type,
                                           const std::vector<int64_t> &shape,
                                           int64_t blockSize);

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_CONVMODULEBUILDER_H
