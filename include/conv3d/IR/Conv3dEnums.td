//===- Conv3dEnums.td - conv3d enumerations ----------------*- tablegen -*-===//
//
// Plain C++ enums shared by the IR, the geometry type and the runtime. They
// are generated without attribute classes (genSpecializedAttr = 0) so that
// headers outside the IR library can include them without MLIR IR headers;
// Conv3dAttrs.td wraps them in EnumAttrs.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_CONV3DENUMS_TD
#define CONV3D_IR_CONV3DENUMS_TD

include "mlir/IR/EnumAttr.td"

def Conv3d_FilterLayout : I32EnumAttr<"FilterLayout",
    "layout of a 3-D convolution filter", [
      I32EnumAttrCase<"qrscf", 0>,
      I32EnumAttrCase<"fqrsc", 1>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_ConvKind : I32EnumAttr<"ConvKind",
    "what a convolution spec computes", [
      // The forward convolution: output from input and filter.
      I32EnumAttrCase<"fprop", 0>,
      // The data gradient (and transposed convolution): the input's
      // gradient from the output gradient and the filter.
      I32EnumAttrCase<"dgrad", 1>,
      // The weight gradient: the filter's gradient from the input and the
      // output gradient.
      I32EnumAttrCase<"wgrad", 2>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

// The `*_backward` cases are the epilogue of a data gradient through an
// activation: `(acc + bias) * act'(z)`, with the forward's pre-activation z
// read as the residual operand (the chain rule's factor). They are cases of
// this enum rather than a second attribute so that every lowering, which
// already carries the activation from the op to emitEpilogue, computes them
// without knowing they exist; verifiers keep them out of the input
// prologue and demand the residual operand.
def Conv3d_Activation : I32EnumAttr<"Activation",
    "activation applied by a fused epilogue", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"silu", 2>,
      I32EnumAttrCase<"gelu_tanh", 3>,
      I32EnumAttrCase<"relu_backward", 4>,
      I32EnumAttrCase<"silu_backward", 5>,
      I32EnumAttrCase<"gelu_tanh_backward", 6>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_KOrder : I32EnumAttr<"KOrder",
    "order in which the implicit-GEMM K loop walks the filter taps", [
      // One K loop over the flat index k = ((q*R + r)*S + s)*C + c.
      I32EnumAttrCase<"taps_outer", 0>,
      // An outer loop over depth slices q, then the flat (r, s, c) index of
      // the slice; slices that touch only the padding halo are skipped.
      I32EnumAttrCase<"qslice_outer", 1>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_StoreMode : I32EnumAttr<"StoreMode",
    "how an output tile combines with the destination", [
      // out = epilogue(acc)
      I32EnumAttrCase<"overwrite", 0>,
      // out = epilogue(out + acc)
      I32EnumAttrCase<"accumulate", 1>,
      // out[split] = acc: one split-K partial sum per slab of an f32
      // workspace (no epilogue); conv3d.epilogue adds the slabs in order
      I32EnumAttrCase<"partial", 2>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_Target : I32EnumAttr<"Target",
    "code generation target of the implicit-GEMM lowerings", [
      // Loops on the host: every target-independent transformation runs
      // and is checked here without a GPU.
      I32EnumAttrCase<"cpu", 0>,
      // mma.sync + cp.async (runs on any sm_80+ GPU).
      I32EnumAttrCase<"sm80", 1>,
      // wgmma + TMA im2col, warp-specialized (sm_90a).
      I32EnumAttrCase<"sm90", 2>,
      // tcgen05 + TMEM + TMA im2col (sm_100a).
      I32EnumAttrCase<"sm100", 3>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_Mainloop : I32EnumAttr<"Mainloop",
    "how a TMA kernel loads the activation operand", [
      // One TMA im2col load per (filter tap, channel block): the rows of the
      // tile, gathered for that tap.
      I32EnumAttrCase<"im2col", 0>,
      // One tiled TMA load per (depth tap, channel block) of the input patch
      // the tile's output rows read (their halo included), which the MMAs of
      // all R x S taps read at shifted rows: a ninth of im2col's traffic
      // for a 3x3 window.
      I32EnumAttrCase<"halo", 1>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

def Conv3d_KernelSchedule : I32EnumAttr<"KernelSchedule",
    "how the consumer warpgroups of a warp-specialized kernel share tiles", [
      // The consumer warpgroups split each tile's rows and run the epilogue
      // together.
      I32EnumAttrCase<"cooperative", 0>,
      // Each consumer warpgroup owns whole tiles, alternating: one runs its
      // epilogue while the other's MMAs run.
      I32EnumAttrCase<"pingpong", 1>
    ]> {
  let cppNamespace = "::mlir::conv3d";
  let genSpecializedAttr = 0;
}

#endif // CONV3D_IR_CONV3DENUMS_TD
