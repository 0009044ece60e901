//===- PassEnums.td - the choices the conv3d passes take ---*- tablegen -*-===//
//
// The typed options of the graph passes and the pipelines (PipelineOptions):
// one string table each (stringify / symbolize), the pass options' cl values
// (Passes.td) and the pipelines' parser read it. Not IR: no attribute carries
// them, so they are plain enums (genSpecializedAttr = 0) in a header without
// MLIR IR headers (PassEnums.h), which the pipelines and the runtime include.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_PASSENUMS_TD
#define CONV3D_TRANSFORMS_PASSENUMS_TD

include "mlir/IR/EnumAttr.td"

class Conv3d_PassEnum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_QSliceStrategy : Conv3d_PassEnum<"QSliceStrategy",
    "Q-slice decomposition of convolutions (conv3d-qslice)", [
      // fused when depth padding makes some slices halo-only, else none.
      I32EnumAttrCase<"Auto", 0, "auto">,
      I32EnumAttrCase<"None", 1, "none">,
      // One kernel, the slices outermost in its K loop.
      I32EnumAttrCase<"Fused", 2, "fused">,
      // Q convolutions accumulating in f32, then one epilogue.
      I32EnumAttrCase<"Separate", 3, "separate">
    ]>;

def Conv3d_QuantPlacement : Conv3d_PassEnum<"QuantPlacement",
    "where NVFP4 input quantization runs (conv3d-fuse-quant)", [
      // The cost model of FuseQuant.cpp.
      I32EnumAttrCase<"Auto", 0, "auto">,
      // In the im2col tile loads.
      I32EnumAttrCase<"Tile", 1, "tile">,
      // A separate pass over the input.
      I32EnumAttrCase<"Prepass", 2, "prepass">
    ]>;

def Conv3d_ProloguePlacement : Conv3d_PassEnum<"ProloguePlacement",
    "where an input prologue runs (conv3d-place-prologue)", [
      // A separate conv3d.prologue over the input: every kernel.
      I32EnumAttrCase<"Prepass", 0, "prepass">,
      // In the loads of the CPU and sm80 kernels.
      I32EnumAttrCase<"Fused", 1, "fused">
    ]>;

def Conv3d_NVFP4Mode : Conv3d_PassEnum<"NVFP4Mode",
    "how NVFP4 operands are multiplied (conv3d-apply-nvfp4-mode)", [
      // Quantized, dequantized to the compute type: every target.
      I32EnumAttrCase<"Fake", 0, "fake">,
      // E2M1 codes and E4M3 scales into the block-scaled sm100 MMA.
      I32EnumAttrCase<"Real", 1, "real">
    ]>;

def Conv3d_WgradFoldPolicy : Conv3d_PassEnum<"WgradFoldPolicy",
    "which output axes a weight gradient contracts as channels "
    "(conv3d-lower-conv-gradients; GradientGeometry's WgradFold)", [
      // The fold chooseWgradFold prices cheaper for the target.
      I32EnumAttrCase<"Auto", 0, "auto">,
      // Wo x N channels, a window of Do x Ho taps.
      I32EnumAttrCase<"Width", 1, "width">,
      // Ho x Wo x N channels, a window of Do taps.
      I32EnumAttrCase<"HeightWidth", 2, "height-width">
    ]>;

def Conv3d_DgradActivationPolicy : Conv3d_PassEnum<"DgradActivationPolicy",
    "where a data gradient through an activation applies the activation's "
    "derivative (conv3d-lower-conv-gradients)", [
      // Fused, except for an unstrided gradient whose phase a GPU target
      // would store by TMA (LowerConvGradients.cpp's fusesDerivative).
      I32EnumAttrCase<"Auto", 0, "auto">,
      // In every phase convolution's epilogue.
      I32EnumAttrCase<"Fused", 1, "fused">,
      // One element-wise pass over the plain data gradient.
      I32EnumAttrCase<"Separate", 2, "separate">
    ]>;

#endif // CONV3D_TRANSFORMS_PASSENUMS_TD
