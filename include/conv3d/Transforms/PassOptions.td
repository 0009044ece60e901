//===- PassOptions.td - pass options of several layers -----*- tablegen -*-===//
//
// Options that the passes of more than one layer declare (the Transforms
// and the Conversion passes), spelled once.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_PASSOPTIONS_TD
#define CONV3D_TRANSFORMS_PASSOPTIONS_TD

include "mlir/Pass/PassBase.td"

// The one spelling of the target option (the dialect's Target enum): an
// unknown value is a command-line error that names it.
class Conv3dTargetOption<string description>
    : Option<"target", "target", "::mlir::conv3d::Target",
             /*default=*/"::mlir::conv3d::Target::cpu", description, [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::Target::cpu, "cpu", "CPU loops"),
            clEnumValN(::mlir::conv3d::Target::sm80, "sm80",
                       "mma.sync + cp.async (any sm_80+ GPU)"),
            clEnumValN(::mlir::conv3d::Target::sm90, "sm90",
                       "wgmma + TMA im2col (sm_90a)"),
            clEnumValN(::mlir::conv3d::Target::sm100, "sm100",
                       "tcgen05 + TMA im2col (sm_100a)"))
      }]>;

#endif // CONV3D_TRANSFORMS_PASSOPTIONS_TD
