//===- Conv3dDialect.td - conv3d dialect definition --------*- tablegen -*-===//

#ifndef CONV3D_IR_CONV3DDIALECT_TD
#define CONV3D_IR_CONV3DDIALECT_TD

include "mlir/IR/OpBase.td"

def Conv3d_Dialect : Dialect {
  let name = "conv3d";
  let cppNamespace = "::mlir::conv3d";
  let summary = "3-D convolutions lowered through implicit GEMM";
  let description = [{
    The `conv3d` dialect carries 3-D convolutions from the graph level
    (`conv3d.conv` on tensors, in destination-passing style) through the
    implicit-GEMM tile level (`conv3d.load_im2col_tile`, `conv3d.tile_mma`,
    ... on memrefs) to the target lowerings. Geometry conventions: input
    NDHWC, filter QRSCF or FQRSC, output NDHWC (channels = F).
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Conv3d_Op<string mnemonic, list<Trait> traits = []>
    : Op<Conv3d_Dialect, mnemonic, traits>;

#endif // CONV3D_IR_CONV3DDIALECT_TD
