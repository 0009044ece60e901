//===- Passes.td - conv3d graph and tile passes ------------*- tablegen -*-===//

#ifndef CONV3D_TRANSFORMS_PASSES_TD
#define CONV3D_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

include "conv3d/Transforms/PassOptions.td"

// How a kernel family's configuration is chosen (the target layer's
// SelectionPolicy, conv3d/Target/KernelFamily.h).
class Conv3dSelectionOption
    : Option<"selection", "selection", "::mlir::conv3d::SelectionPolicy",
             /*default=*/"::mlir::conv3d::SelectionPolicy::CostModel",
             "Configuration choice: model (the cost model among the "
             "heuristic's and the tuner's candidates, sm90) or heuristic", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::SelectionPolicy::CostModel, "model",
                       "the cheapest predicted candidate (sm90)"),
            clEnumValN(::mlir::conv3d::SelectionPolicy::Heuristic,
                       "heuristic", "the families' rules"))
      }]>;

// The Q-slice strategy (PassEnums.td), as conv3d-qslice applies it and as
// conv3d-select-config chooses for it.
class Conv3dQSliceOption<string name, string description>
    : Option<name, name, "::mlir::conv3d::QSliceStrategy",
             /*default=*/"::mlir::conv3d::QSliceStrategy::Auto", description, [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::QSliceStrategy::Auto, "auto",
                       "fused where depth padding makes slices halo-only"),
            clEnumValN(::mlir::conv3d::QSliceStrategy::None, "none",
                       "unchanged"),
            clEnumValN(::mlir::conv3d::QSliceStrategy::Fused, "fused",
                       "slices outermost in one kernel's K loop"),
            clEnumValN(::mlir::conv3d::QSliceStrategy::Separate, "separate",
                       "Q convolutions accumulating in f32"))
      }]>;

// The typed options of PassEnums.td, spelled as the pipelines spell them.
class Conv3dQuantPlacementOption
    : Option<"placement", "placement", "::mlir::conv3d::QuantPlacement",
             /*default=*/"::mlir::conv3d::QuantPlacement::Auto",
             "Quantization placement: auto, tile or prepass", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::QuantPlacement::Auto, "auto",
                       "the cost model's choice"),
            clEnumValN(::mlir::conv3d::QuantPlacement::Tile, "tile",
                       "in the tile loads"),
            clEnumValN(::mlir::conv3d::QuantPlacement::Prepass, "prepass",
                       "a separate pass over the input"))
      }]>;

def Conv3dFuseQuant : Pass<"conv3d-fuse-quant"> {
  let summary = "Fold NVFP4 input quantization into convolutions and place it";
  let description = [{
    A `conv3d.quantize` of a convolution's input with channel blocks
    (`axes = [4]`) folds into the convolution (`quantize(...)` on
    `conv3d.conv`) when the two are equivalent, i.e. when C is a multiple of
    the block size (each K block is then one voxel's channel group).

    Then every quantized convolution gets a placement:
    - `tile`: the conv keeps its `quantize(...)`; the im2col tile load
      quantizes each block as it is loaded. This work repeats once per N
      tile and once per filter tap that reads the element.
    - `prepass`: a separate `conv3d.quantize` of the input (one extra read
      and write of it) feeds a plain convolution. Only possible when C is a
      multiple of the block size.
    With `placement=auto`, a cost model (see FuseQuant.cpp) picks the cheaper
    one; the choice is visible in the IR as one form or the other.
  }];
  let options = [
    Conv3dQuantPlacementOption<>,
    Conv3dTargetOption<"Target whose tile configuration the cost model "
                       "assumes">
  ];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect"];
}

def Conv3dPlacePrologue : Pass<"conv3d-place-prologue"> {
  let summary = "Place each convolution's input prologue: prepass or fused";
  let description = [{
    A convolution's input prologue (`rms_norm`, `input_activation`) runs
    either
    - `prepass` (default): in a `conv3d.prologue` over the input, which
      transforms each element once, feeding the convolution without a
      prologue; every kernel takes that convolution. A `history` operand is
      not transformed (it holds already transformed frames) and stays on
      the convolution;
    - `fused`: in the convolution's loads (the CPU implicit-GEMM loops and
      the sm80 kernel; the sm90/sm100 selection sends such a convolution to
      the sm80 kernel with a remark). Each element is transformed once per
      filter tap and N tile, which measured 5-10x slower on the H100.
    See PlacePrologue.cpp for the costs.
  }];
  let options = [
    Option<"placement", "placement", "::mlir::conv3d::ProloguePlacement",
           /*default=*/"::mlir::conv3d::ProloguePlacement::Prepass",
           "Prologue placement: prepass or fused", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::ProloguePlacement::Prepass, "prepass",
                       "a conv3d.prologue over the input"),
            clEnumValN(::mlir::conv3d::ProloguePlacement::Fused, "fused",
                       "in the CPU and sm80 loads"))
      }]>
  ];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Conv3dFoldUpsample : Pass<"conv3d-fold-upsample"> {
  let summary = "Fold nearest-neighbour upsampling into the convolution that "
                "reads it";
  let description = [{
    A convolution of an input repeated twice along D, H or W is the data
    gradient (transposed convolution) of the unrepeated input: along an
    upsampled axis with window K and padding (lo, hi), lo and hi at most
    K - 1, output o sees input i through taps K - 1 - t and K - t with
    t = o - 2i + K - 1 - lo, so the data gradient of a stride-2 forward
    convolution with window K + 1, padding (K - 1 - lo, K - 1 - hi) and tap
    t = w[K-1-t] + w[K-t] computes it; an axis that is not upsampled takes
    the rotated window (stride 1, the same padding rule).

    Matches a `conv3d.conv` on static tensors with unit strides and
    dilations, one group and no clause beyond its geometry (epilogue,
    prologue, history, quantization and config stay on convolutions of the
    upsampled tensor), whose input is a nearest-neighbour upsampling: a
    `linalg.generic` with one input that it yields unchanged, an identity
    output map and the input map
    `(n, d, h, w, c) -> (n, d floordiv sd, h floordiv sh, w floordiv sw, c)`
    (each s 1 or 2, one of them 2). It becomes a
    `conv3d.conv_backward_data` of the upsampling's source with that
    filter (in the convolution's filter layout, so that FQRSC stays K-major
    for the sm90 kernel: a `linalg.generic` over the filter zero-padded by
    one tap on the upsampled axes; the taps summed in f32, rounded once to
    the filter's type), the same `outs` and `overwrite`.
    `conv3d-lower-conv-gradients` then lowers it by stride phase into dense
    convolutions of the low-resolution tensor: the upsampled tensor is
    never formed, and each output reads ceil((K + 1) / 2) taps per
    upsampled axis instead of K (4 instead of 9 for a 3 x 3 window after a
    2-D upsampling).

    The pipelines run it after the import, before
    `conv3d-lower-conv-gradients`.
  }];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def Conv3dLowerConvGradients : Pass<"conv3d-lower-conv-gradients"> {
  let summary = "Rewrite convolution gradients into forward convolutions";
  let description = [{
    Rewrites each `conv3d.conv_backward_data` and `conv3d.conv_backward_filter`
    on tensors into `conv3d.conv` forward convolutions, so that every
    forward kernel (the CPU implicit GEMM, sm80, sm90, sm100) computes the
    gradients (`conv3d/Geometry/GradientGeometry.h` holds the geometry):

    - data gradient: one forward convolution per stride phase (stride_d x
      stride_h x stride_w of them; one for stride 1), each dense and of
      stride 1: the output gradient (sliced where the phase's padding
      would be negative) convolved with the phase's taps of the filter,
      rotated and C <-> F transposed (a `linalg.generic` over the filter),
      dilation dil / gcd(stride, dil); its result is inserted at the
      phase's strided positions (`tensor.insert_slice` with strides).
      Phases no tap reaches are zeros (or keep `outs` when accumulating).
    - weight gradient: one forward convolution of batch 1 whose window is
      the output gradient, Do x Ho x 1 (stride = the forward's dilation,
      dilation = the forward's stride), and whose channels are Wo x N
      (zero-padded to a multiple of 8): the input gathered per width tap
      and channel into 1 x D x H x (S*C) x (Wo*N) and the output gradient
      made its FQRSC filter, each by one `linalg.generic` that writes the
      padding's zeros itself; its 1 x Q x R x (S*C) x F result is the
      QRSCF gradient reshaped (transposed to FQRSC where that is the
      filter's layout). With `wgrad-fold=height-width` the height is folded
      into the channels too: Ho x Wo x N channels, the input gathered per
      height and width tap into 1 x D x 1 x (R*S*C) x (Ho*Wo*N), a window
      of Do taps, the result 1 x Q x 1 x (R*S*C) x F. Long K loops per tap
      where the width fold's are one or two K steps; R*S gathered copies of
      the input instead of S. `wgrad-fold=auto` (the default) takes the
      height-width fold on a GPU target where `target`'s cost model,
      corrected for the short K loops it underprices, plus the gathers'
      memory traffic, says it is faster (`chooseWgradFold`); the cpu
      target keeps the width fold (less memory).

    A data gradient through an activation (`pre_activation`) multiplies
    by the derivative at the pre-activation. `dgrad-activation=fused` does
    it in every phase convolution's epilogue (`activation = *_backward`,
    the phase's strided view of the pre-activation as its residual, the
    phase writing its strided positions of the gradient in place);
    `separate` lowers the plain gradient and then multiplies in one
    `linalg.generic`. `auto` (the default) fuses, except for an unstrided
    gradient on a GPU target whose phase would store its tiles by TMA
    (overwritten, 16-bit, C a multiple of 8): a residual epilogue cannot,
    and there the TMA-stored phase plus the element-wise pass ran faster
    on all 8 of the suite's unstrided shapes on the H200; strided, the
    fused phases write their positions in place and were faster on both
    (bench/RESULTS.md, twelfth session).

    The pipelines run it first, after the import.
  }];
  let options = [
    Conv3dTargetOption<"Target whose kernels will run the forward forms "
                       "(the weight gradient's fold is priced for it)">,
    Option<"wgradFold", "wgrad-fold", "::mlir::conv3d::WgradFoldPolicy",
           /*default=*/"::mlir::conv3d::WgradFoldPolicy::Auto",
           "How a weight gradient's output positions become channels", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::WgradFoldPolicy::Auto, "auto",
                       "the fold the target's cost model prices cheaper"),
            clEnumValN(::mlir::conv3d::WgradFoldPolicy::Width, "width",
                       "Wo x N channels, a window of Do x Ho taps"),
            clEnumValN(::mlir::conv3d::WgradFoldPolicy::HeightWidth,
                       "height-width",
                       "Ho x Wo x N channels, a window of Do taps"))
      }]>,
    Option<"dgradActivation", "dgrad-activation",
           "::mlir::conv3d::DgradActivationPolicy",
           /*default=*/"::mlir::conv3d::DgradActivationPolicy::Auto",
           "Where a data gradient through an activation applies the "
           "derivative", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::DgradActivationPolicy::Auto, "auto",
                       "fused unless the phases would store by TMA"),
            clEnumValN(::mlir::conv3d::DgradActivationPolicy::Fused, "fused",
                       "in every phase convolution's epilogue"),
            clEnumValN(::mlir::conv3d::DgradActivationPolicy::Separate,
                       "separate",
                       "one element-wise pass over the data gradient"))
      }]>
  ];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def Conv3dFuseEpilogue : Pass<"conv3d-fuse-epilogue"> {
  let summary = "Fold elementwise consumers of a convolution into its epilogue";
  let description = [{
    Folds, in order, a per-channel bias add, an activation (ReLU, SiLU, GELU
    with tanh), a residual add and an f32 -> bf16/f16 cast that consume a
    single-use `conv3d.conv` on tensors. The consumers may be
    `linalg.generic` ops, each computing any consecutive part of the
    epilogue (a bias add alone, `relu(x + b)` in one generic, a whole
    `cast(act(x + b) + r)`): their scalar bodies are recognized by
    evaluation, not by their ops, so any algebraic form of the same function
    matches; or `linalg.add` (a residual). A consumer that would change the
    epilogue's order (a bias after an activation, say) is not folded.
  }];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect"];
}

def Conv3dRelayoutFilter : Pass<"conv3d-relayout-filter"> {
  let summary = "Lay filters out as their kernels read them";
  let description = [{
    The sm90 kernel loads filter tiles K-major by TMA, so it takes FQRSC
    filters; `linalg.conv_3d_ndhwc_dhwcf` and most C++ callers hand over
    QRSCF. For `target=sm90`, a convolution on tensors with a QRSCF filter
    that the sm90 kernel could otherwise take gets a `linalg.transpose` of
    its filter to FQRSC (one pass over the filter, a few microseconds on
    a GPU: filters are small next to activations) instead of falling back
    to the sm80 kernel. A channel count that is not a multiple of 8 (TMA
    strides are multiples of 16 bytes) is padded with zero channels in the
    input and the FQRSC filter (`tensor.pad`) where the sm90 kernel then
    takes the convolution (C >= 57; not with a history operand, an input
    prologue or NVFP4). On every target (cpu included), a convolution on
    tensors that the depthwise kernel takes (`takesDepthwiseKernel`) with
    an FQRSC filter (PyTorch's layout) gets a `linalg.transpose` of its
    filter to QRSCF, where each tap's weights of consecutive filters are
    one vector load rather than a scalar load per filter. Other
    convolutions are left alone.
  }];
  let options = [
    Conv3dTargetOption<"Target whose kernel the filters are laid out for">
  ];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Conv3dSelectConfig : Pass<"conv3d-select-config"> {
  let summary = "Attach an implicit-GEMM tile configuration to convolutions";
  let description = [{
    A config already on the op wins; then a config given as an option; then
    the target's kernel families: the first that takes the convolution,
    with its heuristic's configuration or, with `selection=model` (the
    default) on sm90, the candidate the cost model predicts fastest
    (conv3d/Target/KernelFamily.h, CostModel.h). `qslice=fused` says that
    conv3d-qslice will run the chosen configuration's K loop slice by slice
    (`k_order = qslice_outer`): the choice is then the rules' (the cost
    model's split-K candidates cannot take that order) among the families
    that take the order (not the sm90 halo mainloop).
  }];
  let options = [
    Conv3dTargetOption<"Target whose heuristic chooses the config">,
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "Force this config (key=value pairs separated by commas)">,
    Conv3dSelectionOption<>,
    Conv3dQSliceOption<"qslice", "The Q-slice strategy conv3d-qslice applies "
                       "next (fused: a configuration that takes "
                       "k_order = qslice_outer)">
  ];
  let dependentDialects = ["::mlir::conv3d::Conv3dDialect"];
}

def Conv3dApplyNVFP4Mode : Pass<"conv3d-apply-nvfp4-mode"> {
  let summary = "Apply the pipeline's NVFP4 mode to convolutions";
  let description = [{
    `mode = fake` (the default): a packed NVFP4 filter (`filter_quant`) is
    multiplied as its dequantized values, so it is unpacked on the tensor
    form by a `linalg.generic` (code x E4M3 scale x amax / 2688, rounded to
    the input's element type: bit for bit the fake quantization of the
    filter it was packed from), and the convolution loses `filter_quant`.

    `mode = real` (`nvfp4-mode=real`, target sm100) asks for real FP4: the
    E2M1 codes and E4M3 scales of both operands multiplied by the
    block-scaled `tcgen05.mma` (kind::mxf4nvf4, block16). A convolution with
    an NVFP4 operand is checked for that kernel, and one it cannot take is an
    error naming why, never a silent fallback to fake quantization: both
    operands NVFP4 (the input quantized with blocks of 16, fused or by a
    `conv3d.quantize` along C; the filter packed, `filter_quant`), no
    history operand, and the kernel's plan and TMA maps
    (SM100BlockScaledPlan.h, SM100BlockScaledTma.h: C a multiple of 32, the
    im2col limits). A convolution that passes gets its input quantization
    fused (a `conv3d.quantize` feeding it becomes its `quantize`, erased if
    nothing else reads it) for `conv3d-lower-block-scaled-to-sm100`, which
    packs the original input itself. Convolutions without NVFP4 operands
    are left alone.
  }];
  let options = [
    Conv3dTargetOption<"Target the convolutions are compiled for">,
    Option<"mode", "mode", "::mlir::conv3d::NVFP4Mode",
           /*default=*/"::mlir::conv3d::NVFP4Mode::Fake",
           "NVFP4 mode: fake or real", [{
        ::llvm::cl::values(
            clEnumValN(::mlir::conv3d::NVFP4Mode::Fake, "fake",
                       "quantize, dequantize, bf16/f16 MMA"),
            clEnumValN(::mlir::conv3d::NVFP4Mode::Real, "real",
                       "the block-scaled sm100 MMA"))
      }]>
  ];
  let dependentDialects = [
    "::mlir::conv3d::Conv3dDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def Conv3dQSlice : Pass<"conv3d-qslice"> {
  let summary = "Decompose convolutions into depth (Q) slices";
  let description = [{
    `out[n,d,h,w,f] = sum_q conv2d(in[n, d*sd - pad + q*dd], filter[q])`.
    - `fused`: the slices become the outermost part of the K loop of one
      kernel (`k_order = qslice_outer` in the tile configuration); the f32
      accumulator stays in place across slices, and slices whose input
      depth is in the padding halo for a whole tile are skipped.
    - `separate`: Q convolutions with a one-deep window, each on the depth
      range of the output it contributes to, accumulate into an f32 buffer;
      one `conv3d.epilogue` applies the epilogue and the cast.
    - `auto`: `fused` when depth padding makes some slices halo-only, else
      unchanged. `none`: unchanged.
    Intermediate sums are never rounded to the output type.
  }];
  let options = [
    Conv3dQSliceOption<"strategy", "Strategy: auto, fused, separate or none">,
    Conv3dTargetOption<"Target whose heuristic picks a config when none "
                       "is attached">,
    Conv3dSelectionOption<>
  ];
  let dependentDialects = [
    "::mlir::conv3d::Conv3dDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def Conv3dImplicitGemm : Pass<"conv3d-implicit-gemm"> {
  let summary = "Rewrite memref convolutions into implicit-GEMM tile loops";
  let description = [{
    Each `conv3d.conv` on memrefs becomes an `scf.forall` grid over
    (M tile, N tile) (and split-K ranges) whose body loops over K tiles
    with `conv3d.load_im2col_tile`, `conv3d.load_filter_tile` and
    `conv3d.tile_mma` into an f32 accumulator, then
    `conv3d.store_output_tile`. M = N*Do*Ho*Wo, N = F, K = Q*R*S*C. No
    im2col buffer is materialized. The grid loop carries the tile
    configuration as `conv3d.igemm_config` for the target lowerings.
    A history operand and the input prologue go to the A-tile load; with
    `rms_norm`, a `conv3d.voxel_rms_scale` prepass before the grid computes
    each input voxel's statistic once, read by the tile loads as
    `norm_scale`. Needs static shapes.
  }];
  let options = [
    Conv3dTargetOption<"Target whose heuristic picks a config when none "
                       "is attached">
  ];
  let dependentDialects = [
    "::mlir::conv3d::Conv3dDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def Conv3dCheckPipelineInput : Pass<"conv3d-check-pipeline-input"> {
  let summary = "Refuse a module the conv3d pipelines cannot take";
  let description = [{
    The first pass of the conv3d pipelines. They take a module before
    buffer deallocation: conv3d and upstream ops on tensors, or on memrefs
    without deallocations. A module that already frees its buffers
    (`memref.dealloc`, `bufferization.dealloc`: the output of a pipeline,
    or of `buffer-deallocation-pipeline`) is an error on its first
    deallocation saying so, instead of upstream's deallocation pass failing
    on it with "memory free side-effect on MemRef value not supported!".
  }];
}

def Conv3dCheckAllocations : Pass<"conv3d-check-allocations", "::mlir::ModuleOp"> {
  let summary = "Size-check the host buffers compiled code allocates";
  let description = [{
    Host code frees nothing it cannot allocate: each `memref.alloc` and
    `memref.alloca` of static shape outside GPU code (the temporaries of
    bufferization, split-K and Q-slice workspaces, the NVFP4 prepass) has
    its byte count computed with overflow checks, and one that needs more
    than 2^63 bytes is an error naming its type (lowered as is, its size
    would wrap and `malloc` would return a buffer too small). The sum over
    the module, an upper bound of what the code holds at once, is recorded
    as the module attribute `conv3d.host_allocation_bytes`, which the engine
    checks against the machine's memory before it runs the code (an error
    naming the bytes, never an out-of-memory abort). With `max-bytes`, an
    allocation or a total above it is an error here. Allocations of dynamic
    shape are not counted.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"0",
           "Refuse an allocation, or a module total, above this many bytes "
           "(0: no limit)">
  ];
}

#endif // CONV3D_TRANSFORMS_PASSES_TD
