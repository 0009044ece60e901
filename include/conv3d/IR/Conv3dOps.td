//===- Conv3dOps.td - conv3d graph-level operations --------*- tablegen -*-===//
//
// Operations on tensors or memrefs in destination-passing style: the
// convolution itself, NVFP4 fake quantization and a stand-alone epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_CONV3DOPS_TD
#define CONV3D_IR_CONV3DOPS_TD

include "conv3d/IR/Conv3dAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"

def Conv3d_RankedTensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef]>;

// Shared extra declarations of the DPS ops: ranked tensor or memref operands,
// a single optional tensor result.
class Conv3d_DpsOp<string mnemonic, list<Trait> traits = []>
    : Conv3d_Op<mnemonic, !listconcat(traits, [
          DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
          DestinationStyleOpInterface])> {
  let results = (outs Variadic<AnyRankedTensor>:$result);
  code dpsExtraDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// True when the op works on tensors (and has one result).
    bool hasTensorSemantics() {
      return ::llvm::isa<::mlir::RankedTensorType>(getInit().getType());
    }
  }];
}

def Conv3d_ConvOp : Conv3d_DpsOp<"conv", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition",
        "generateResultTileValue"]>]> {
  let summary = "3-D convolution with a fused epilogue";
  let description = [{
    A 3-D convolution in destination-passing style.

    - `input`: NDHWC; `filter`: QRSCF or FQRSC (`filter_layout`);
      `init` (the `outs` operand) and the result: NDHWC with F channels.
    - `strides` and `dilations` per axis (d, h, w); `padding` per side as
      `[d_lo, d_hi, h_lo, h_hi, w_lo, w_hi]`, so causal temporal padding
      (`[2, 0, ...]` for a 3-tap window) is an attribute, never a copy.
    - Accumulation is in f32. The result is
      `cast(act(acc + bias[f]) + residual)` with
      `acc = (overwrite ? 0 : init) + conv(input, filter)`: without
      `overwrite`, a convolution accumulates onto its destination, so f32
      accumulation across several convolutions is expressible.
    - `bias` (optional): F values; `residual` (optional): output-shaped;
      `activation`: none, relu, silu, gelu_tanh.
    - `quantize(#conv3d.nvfp4<...>, %amax)` (optional): the input operand is
      NVFP4 fake-quantized in blocks along the GEMM K dimension
      (k = ((q*R + r)*S + s)*C + c) of each output position, halo zeros
      included (`spec/nvfp4.md`).
    - `config` (optional): the implicit-GEMM tile configuration.
    - `history` (optional): N x Dh x H x W x C frames that logically precede
      the input along depth (a streaming decoder's cached frames). The
      convolution runs over `concat(history, input)` along D, which is never
      materialized: lowerings read depth index d from `history` when
      d < Dh and from `input` at d - Dh otherwise. Padding applies to the
      concatenation, so the output depth follows from D + Dh.
    - Input prologue (optional), applied to every input voxel as it is
      loaded, before the MMA: `rms_norm(gamma)` normalizes the voxel over its
      C channels, `x * rsqrt(mean_c(x^2) + eps) * gamma[c] (+ beta[c])`
      (`norm_beta` and `norm_eps` go with it), then `input_activation`
      (none, relu, silu, gelu_tanh). Padding halo voxels stay zero, as in
      the unfused graph where padding follows the activation; `history`
      frames are taken as they are (they were transformed as the previous
      chunk's input). The statistic and the activation are computed in
      f32, the result rounded to the input element type.
    - `filter_quant(#conv3d.nvfp4<block_size = 16>, %scales, %filter_amax)`
      (optional): the filter is real NVFP4, packed offline by
      `conv3d.pack_nvfp4` (`Engine::quantizeFilter`): `filter` holds the
      E2M1 codes of an FQRSC filter (K-major, as the block-scaled MMA
      requires), i8 `F x Q x R x S x C/2` with two codes per byte, and
      `%scales` its E4M3 block scales, i8 `F x Q x R x S x C/16`; the filter
      value is `code * scale * filter_amax / 2688` (`spec/nvfp4.md`).
      Only blocks of 16 (the block16 scales of `tcgen05.mma` kind::mxf4nvf4)
      are taken. Such a convolution is computed only by the block-scaled
      sm100 kernel (`target=sm100 nvfp4-mode=real`, with the input
      quantized too); the other lowerings refuse it.

    - `groups` (default 1): a grouped convolution. The C input channels and
      the F filters split into `groups` equal groups; filter group
      `g = f / (F/groups)` sees only input channels
      `[g*C/groups, (g+1)*C/groups)`. The filter's channel dimension holds
      the C/groups channels of a group (as PyTorch's weight does), so a
      depthwise convolution (`groups = C`) has a filter of one channel:
      `Q x R x S x 1 x F` (QRSCF). C and F must be multiples of `groups`.
      Input quantization and packed NVFP4 filters take `groups = 1` only.

    Element types: input and filter bf16, f16 or f32 (the same; i8 codes
    for a `filter_quant` filter); init f32 or the input type.

    The clauses after `outs(...)` (`overwrite`, `strides`, `dilations`,
    `padding`, `groups`, `filter_layout`, `activation`, `config`) may come
    in any order, each at most once; they print in that order, defaults
    omitted.

    Example (a causal 3x3x3 convolution of a video VAE):

    ```mlir
    %y = conv3d.conv ins(%x, %w : tensor<1x10x32x32x96xbf16>,
                                  tensor<3x3x3x96x96xbf16>)
           outs(%init : tensor<1x8x32x32x96xbf16>) overwrite
           padding = [0, 0, 1, 1, 1, 1] -> tensor<1x8x32x32x96xbf16>
    ```

    A depthwise 3x3x3 convolution of 432 channels (X3D):

    ```mlir
    %z = conv3d.conv ins(%x, %w : tensor<1x16x14x14x432xbf16>,
                                  tensor<3x3x3x1x432xbf16>)
           outs(%init : tensor<1x16x14x14x432xbf16>) overwrite
           padding = [1, 1, 1, 1, 1, 1] groups = 432
           -> tensor<1x16x14x14x432xbf16>
    ```
  }];

  let arguments = (ins
    Conv3d_RankedTensorOrMemRef:$input,
    Conv3d_RankedTensorOrMemRef:$filter,
    Optional<Conv3d_RankedTensorOrMemRef>:$bias,
    Optional<Conv3d_RankedTensorOrMemRef>:$residual,
    Optional<F32>:$amax,
    Conv3d_RankedTensorOrMemRef:$init,
    Optional<Conv3d_RankedTensorOrMemRef>:$history,
    Optional<Conv3d_RankedTensorOrMemRef>:$norm_gamma,
    Optional<Conv3d_RankedTensorOrMemRef>:$norm_beta,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$dilations,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<Conv3d_FilterLayoutAttr,
                      "::mlir::conv3d::FilterLayout::qrscf">:$filter_layout,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$activation,
    OptionalAttr<Conv3d_NVFP4Attr>:$input_quant,
    UnitAttr:$overwrite,
    OptionalAttr<Conv3d_IGemmConfigAttr>:$config,
    OptionalAttr<F32Attr>:$norm_eps,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$input_activation,
    Optional<Conv3d_RankedTensorOrMemRef>:$filter_scales,
    Optional<F32>:$filter_amax,
    OptionalAttr<Conv3d_NVFP4Attr>:$filter_quant,
    DefaultValuedAttr<I64Attr, "1">:$groups
  );

  // The builder of the operands and attributes before `history` and the
  // prologue (no history, no prologue), so that code written against them
  // keeps building.
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::Value":$input,
      "::mlir::Value":$filter, "::mlir::Value":$bias,
      "::mlir::Value":$residual, "::mlir::Value":$amax, "::mlir::Value":$init,
      "::mlir::DenseI64ArrayAttr":$strides,
      "::mlir::DenseI64ArrayAttr":$dilations,
      "::mlir::DenseI64ArrayAttr":$padding,
      "::mlir::conv3d::FilterLayoutAttr":$filter_layout,
      "::mlir::conv3d::ActivationAttr":$activation,
      "::mlir::conv3d::NVFP4Attr":$input_quant,
      "::mlir::UnitAttr":$overwrite,
      "::mlir::conv3d::IGemmConfigAttr":$config), [{
      build($_builder, $_state, resultTypes, input, filter, bias, residual,
            amax, init, /*history=*/::mlir::Value(),
            /*norm_gamma=*/::mlir::Value(), /*norm_beta=*/::mlir::Value(),
            strides, dilations, padding, filter_layout, activation,
            input_quant, overwrite, config, /*norm_eps=*/::mlir::FloatAttr(),
            ::mlir::conv3d::ActivationAttr::get($_builder.getContext(),
                ::mlir::conv3d::Activation::none),
            /*filter_scales=*/::mlir::Value(), /*filter_amax=*/::mlir::Value(),
            /*filter_quant=*/::mlir::conv3d::NVFP4Attr(),
            /*groups=*/$_builder.getI64IntegerAttr(1));
    }]>
  ];

  let assemblyFormat = [{
    `ins` `(` $input `,` $filter `:` type($input) `,` type($filter) `)`
    (`history` `(` $history^ `:` type($history) `)`)?
    (`rms_norm` `(` $norm_gamma^ `:` type($norm_gamma) `)`)?
    (`norm_beta` `(` $norm_beta^ `:` type($norm_beta) `)`)?
    (`norm_eps` `=` $norm_eps^)?
    (`input_activation` `=` custom<EnumKeyword>($input_activation)^)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`quantize` `(` qualified($input_quant)^ `,` $amax `)`)?
    (`filter_quant` `(` qualified($filter_quant)^ `,` $filter_scales `:`
       type($filter_scales) `,` $filter_amax `)`)?
    `outs` `(` $init `:` type($init) `)`
    ``custom<ConvAttributeClauses>($overwrite, $strides, $dilations, $padding,
                                   $groups, $filter_layout, $activation,
                                   $config)
    attr-dict (`->` type($result)^)?
  }];

  let extraClassDeclaration = dpsExtraDeclaration # [{
    /// The convolution's geometry, from the operand shapes and attributes.
    /// Dynamic sizes stay dynamic (ConvGeometry::kDynamic).
    ::mlir::conv3d::ConvGeometry getGeometry();
    /// Whether the op has a fused epilogue beyond the plain sum.
    bool hasEpilogue() {
      return getBias() || getResidual() ||
             getActivation() != ::mlir::conv3d::Activation::none;
    }
    /// Whether the input is transformed as it is loaded (RMS norm and/or an
    /// activation).
    bool hasPrologue() {
      return getNormGamma() ||
             getInputActivation() != ::mlir::conv3d::Activation::none;
    }
    /// Whether the op reads anything beyond one contiguous, untransformed
    /// input: a history operand or a prologue. Passes that rebuild the
    /// input operand check this.
    bool hasHistoryOrPrologue() { return getHistory() || hasPrologue(); }
    /// Whether the filter is packed real NVFP4 (`filter_quant`): only the
    /// block-scaled sm100 kernel computes such a convolution.
    bool hasPackedFilter() { return getFilterQuant().has_value(); }
  }];

  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Conv3d_QuantizeOp : Conv3d_DpsOp<"quantize"> {
  let summary = "NVFP4 fake quantization of a tensor";
  let description = [{
    Maps `input` to the values it takes after an NVFP4 quantize -> dequantize
    round trip (`spec/nvfp4.md`), rounded back to the element type.
    `amax` is the per-tensor absolute maximum (f32, given at run time).
    Blocks of `block_size` elements run along the row-major flattening of
    the contiguous dimensions `block_axes`, separately for every index of
    the other dimensions; the last block is zero-filled past the end.

    - Activations (NDHWC): `axes = [4]` (blocks of channels of one voxel).
    - Filters, in the convolution's K order per output channel:
      `axes = [0, 1, 2, 3]` for QRSCF, `axes = [1, 2, 3, 4]` for FQRSC.

    ```mlir
    %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
           ins(%x : tensor<1x8x32x32x64xbf16>) amax(%amax)
           outs(%e : tensor<1x8x32x32x64xbf16>) -> tensor<1x8x32x32x64xbf16>
    ```
  }];

  let arguments = (ins
    Conv3d_RankedTensorOrMemRef:$input,
    F32:$amax,
    Conv3d_RankedTensorOrMemRef:$init,
    Conv3d_NVFP4Attr:$format,
    DenseI64ArrayAttr:$block_axes
  );

  let assemblyFormat = [{
    qualified($format) `axes` `=` $block_axes
    `ins` `(` $input `:` type($input) `)` `amax` `(` $amax `)`
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];

  let extraClassDeclaration = dpsExtraDeclaration;
  let hasVerifier = 1;
}

def Conv3d_PrologueOp : Conv3d_DpsOp<"prologue", [AttrSizedOperandSegments]> {
  let summary = "the convolution input prologue as a stand-alone pass";
  let description = [{
    Applies `conv3d.conv`'s input prologue to every voxel of an NDHWC
    tensor: `rms_norm(gamma)` normalizes the voxel over its C channels,
    `x * rsqrt(mean_c(x^2) + eps) * gamma[c] (+ beta[c])`, then
    `input_activation`; statistic and activation in f32, the result rounded
    to the element type. It computes exactly the values the convolution's
    loads would (the same scalar emitters), once per voxel instead of once
    per tap: `conv3d-hoist-prologue` moves a convolution's prologue into
    this op (the prepass placement), after which the convolution reads the
    transformed tensor and no longer needs a prologue-capable kernel.

    ```mlir
    %t = conv3d.prologue ins(%x : tensor<1x4x32x32x96xbf16>)
           rms_norm(%g : tensor<96xf32>) norm_eps = 1.0e-06
           input_activation = silu
           outs(%e : tensor<1x4x32x32x96xbf16>) -> tensor<1x4x32x32x96xbf16>
    ```
  }];

  let arguments = (ins
    Conv3d_RankedTensorOrMemRef:$input,
    Optional<Conv3d_RankedTensorOrMemRef>:$norm_gamma,
    Optional<Conv3d_RankedTensorOrMemRef>:$norm_beta,
    Conv3d_RankedTensorOrMemRef:$init,
    OptionalAttr<F32Attr>:$norm_eps,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$input_activation
  );

  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    (`rms_norm` `(` $norm_gamma^ `:` type($norm_gamma) `)`)?
    (`norm_beta` `(` $norm_beta^ `:` type($norm_beta) `)`)?
    (`norm_eps` `=` $norm_eps^)?
    (`input_activation` `=` custom<EnumKeyword>($input_activation)^)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];

  let extraClassDeclaration = dpsExtraDeclaration;
  let hasVerifier = 1;
}

def Conv3d_PackNVFP4Op : Conv3d_Op<"pack_nvfp4", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "real NVFP4 quantization: E2M1 codes and E4M3 block scales";
  let description = [{
    Quantizes `input` (bf16, f16 or f32 memref) to NVFP4 as the block-scaled
    `tcgen05.mma` (kind::mxf4nvf4, block16) consumes it: blocks of
    `block_size` consecutive elements of the last dimension, with the
    per-block computation of `conv3d.quantize` (`spec/nvfp4.md`) kept as
    codes instead of dequantized values.

    - `codes`: i8, the input's shape with the last dimension halved; byte i
      of a row holds element 2i in its low nibble and 2i + 1 in its high
      one, each `sign << 3 | E2M1 index` (magnitudes 0, .5, 1, 1.5, 2, 3,
      4, 6);
    - `scales`: i8, the last dimension divided by `block_size`; the E4M3
      bits of each block's scale `s8` (the value is `s8 * amax / 2688`).
      A longer last dimension pads each row: its bytes past the row's
      scales are written as 0 (the block-scaled sm100 kernel reads a
      voxel's scales by TMA, whose row strides are multiples of 16 bytes).

    Each code decodes to exactly the fake-quantized f32 value (before its
    rounding to the compute type); a NaN input, which FP4 cannot hold,
    becomes +0. The last dimension must be a static multiple of the block
    size. The op works on memrefs (the prepass of the real NVFP4 path and
    of `Engine::packNVFP4`).

    ```mlir
    conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16>
      ins(%x : memref<1x8x32x32x64xbf16>) amax(%amax)
      outs(%codes : memref<1x8x32x32x32xi8>, %scales : memref<1x8x32x32x4xi8>)
    ```
  }];

  let arguments = (ins
    AnyMemRef:$input,
    F32:$amax,
    AnyMemRef:$codes,
    AnyMemRef:$scales,
    Conv3d_NVFP4Attr:$format
  );

  let assemblyFormat = [{
    qualified($format)
    `ins` `(` $input `:` type($input) `)` `amax` `(` $amax `)`
    `outs` `(` $codes `:` type($codes) `,` $scales `:` type($scales) `)`
    attr-dict
  }];

  let hasVerifier = 1;
}

def Conv3d_EpilogueOp : Conv3d_DpsOp<"epilogue", [AttrSizedOperandSegments]> {
  let summary = "the convolution epilogue applied to an f32 accumulator";
  let description = [{
    Elementwise `init = cast(act(acc + bias[f]) + residual)` with
    `acc = (overwrite ? 0 : init) + sum`, where `sum` is an f32 NDHWF
    accumulator produced elsewhere (the Q-slice `separate` strategy
    produces one). It has exactly the epilogue semantics of `conv3d.conv`.

    `sum` may also be an f32 S x N x D x H x W x F stack of split-K partial
    sums (`conv3d.store_output_tile ... mode = partial`): then
    `sum = ((s_0 + s_1) + s_2) + ... + s_{S-1}`, added in that order, so
    the result does not depend on how the partial sums were scheduled.

    ```mlir
    %y = conv3d.epilogue ins(%acc : tensor<1x8x8x8x32xf32>)
           bias(%b : tensor<32xf32>) outs(%o : tensor<1x8x8x8x32xbf16>)
           overwrite activation = silu -> tensor<1x8x8x8x32xbf16>
    ```
  }];

  let arguments = (ins
    Conv3d_RankedTensorOrMemRef:$sum,
    Optional<Conv3d_RankedTensorOrMemRef>:$bias,
    Optional<Conv3d_RankedTensorOrMemRef>:$residual,
    Conv3d_RankedTensorOrMemRef:$init,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$activation,
    UnitAttr:$overwrite
  );

  let assemblyFormat = [{
    `ins` `(` $sum `:` type($sum) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    `outs` `(` $init `:` type($init) `)`
    (`overwrite` $overwrite^)?
    (`activation` `=` custom<EnumKeyword>($activation)^)?
    attr-dict (`->` type($result)^)?
  }];

  let extraClassDeclaration = dpsExtraDeclaration;
  let hasVerifier = 1;
}

// The gradients of conv3d.conv. Their own ops rather than a `kind` on
// conv3d.conv: the operands play other roles (dgrad reads the output
// gradient and the filter and writes the input's shape; wgrad reads the
// input and the output gradient and writes the filter's shape), and none of
// the forward's clauses beyond its geometry (epilogue, quantization,
// history, prologue, packed filter, tile config) applies to them, so a kind
// would make every clause's verifier and every pass ask which kind it sees.
class Conv3d_GradientOp<string mnemonic>
    : Conv3d_Op<mnemonic, [Pure, DestinationStyleOpInterface]> {
  let results = (outs AnyRankedTensor:$result);
  code gradientExtraDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// The forward convolution's geometry (sizes from the operand shapes,
    /// strides, dilations and padding from the attributes).
    ::mlir::conv3d::ConvGeometry getGeometry();
  }];
  let hasVerifier = 1;
}

def Conv3d_ConvBackwardDataOp : Conv3d_GradientOp<"conv_backward_data"> {
  let summary = "data gradient of a 3-D convolution (and transposed "
                "convolution)";
  let description = [{
    The gradient of `conv3d.conv` with respect to its input:
    `dx[n, i, c] = sum_{o, t, f : o*stride - pad_lo + t*dil = i} dy[n, o, f]
    * w[t, c, f]` (per axis), i.e. the adjoint of the forward convolution of
    the same geometry. `acc = (overwrite ? 0 : init) + dx`, accumulated in
    f32.

    - `grad_output`: NDHWF, the forward's output shape;
      `filter`: QRSCF or FQRSC (`filter_layout`), the forward's filter;
      `init` (the `outs` operand) and the result: NDHWC, the forward's
      input shape.
    - `strides`, `dilations`, `padding` (`[d_lo, d_hi, h_lo, h_hi, w_lo,
      w_hi]`): the forward's. The forward input size along each axis is the
      outs shape's; one forward output size has `stride` input sizes, and
      the difference is a transposed convolution's output padding
      (`ConvGeometry::transposedOutputPadding`), so a `ConvTranspose3d` is
      this op with the transposed convolution's input as `grad_output`.
    - `pre_activation(%z)` with `activation = relu|silu|gelu_tanh`
      (optional, together): the data gradient continues through the
      activation that produced the forward's input from `z` (the input's
      shape, bf16, f16 or f32): the result is `cast(act'(z) * acc)`, the
      chain rule's factor fused into the convolutions' epilogue. With
      `init` holding another path's gradient of the same input (a residual
      connection's) and no `overwrite`, the paths are added before the
      factor applies: `act'(z) * (init + dx)`.

    Element types: `grad_output` and `filter` bf16, f16 or f32 (the same);
    outs f32 or that type. Static shapes; tensors only:
    `conv3d-lower-conv-gradients` rewrites it into forward convolutions
    (one per stride phase) before bufferization.

    ```mlir
    %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x4x4x4x32xbf16>,
                                                  tensor<3x3x3x16x32xbf16>)
            outs(%e : tensor<1x8x8x8x16xbf16>) overwrite
            strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
            -> tensor<1x8x8x8x16xbf16>
    %dz = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>,
                                                  tensor<3x3x3x16x32xbf16>)
            pre_activation(%z : tensor<1x8x8x8x16xbf16>)
            outs(%e : tensor<1x8x8x8x16xbf16>) overwrite
            padding = [1, 1, 1, 1, 1, 1] activation = silu
            -> tensor<1x8x8x8x16xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$grad_output,
    AnyRankedTensor:$filter,
    Optional<AnyRankedTensor>:$pre_activation,
    AnyRankedTensor:$init,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$dilations,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<Conv3d_FilterLayoutAttr,
                      "::mlir::conv3d::FilterLayout::qrscf">:$filter_layout,
    UnitAttr:$overwrite,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$activation
  );
  let assemblyFormat = [{
    `ins` `(` $grad_output `,` $filter `:` type($grad_output) `,`
      type($filter) `)`
    (`pre_activation` `(` $pre_activation^ `:` type($pre_activation) `)`)?
    `outs` `(` $init `:` type($init) `)`
    (`overwrite` $overwrite^)?
    (`strides` `=` $strides^)?
    (`dilations` `=` $dilations^)?
    (`padding` `=` $padding^)?
    (`filter_layout` `=` custom<EnumKeyword>($filter_layout)^)?
    (`activation` `=` custom<EnumKeyword>($activation)^)?
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = gradientExtraDeclaration;
}

def Conv3d_ConvBackwardFilterOp : Conv3d_GradientOp<"conv_backward_filter"> {
  let summary = "weight gradient of a 3-D convolution";
  let description = [{
    The gradient of `conv3d.conv` with respect to its filter:
    `dw[t, c, f] = sum_{n, o} x[n, o*stride - pad_lo + t*dil, c] *
    dy[n, o, f]` (halo terms zero). `acc = (overwrite ? 0 : init) + dw`,
    accumulated in f32 (so gradient accumulation over micro-batches is
    `init` without `overwrite`).

    - `input`: NDHWC, the forward's input; `grad_output`: NDHWF, the
      forward's output shape; `init` (the `outs` operand) and the result:
      the forward's filter shape, QRSCF or FQRSC (`filter_layout`).
    - `strides`, `dilations`, `padding`: the forward's.

    Element types: `input` and `grad_output` bf16, f16 or f32 (the same);
    outs f32 or that type. Static shapes; tensors only:
    `conv3d-lower-conv-gradients` rewrites it into a forward convolution
    (batch 1, channels Wo x N, window Do x Ho x 1) before bufferization.

    ```mlir
    %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>,
                                                    tensor<1x4x4x4x32xbf16>)
            outs(%e : tensor<3x3x3x16x32xf32>) overwrite
            strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
            -> tensor<3x3x3x16x32xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    AnyRankedTensor:$grad_output,
    AnyRankedTensor:$init,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$dilations,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<Conv3d_FilterLayoutAttr,
                      "::mlir::conv3d::FilterLayout::qrscf">:$filter_layout,
    UnitAttr:$overwrite
  );
  let assemblyFormat = [{
    `ins` `(` $input `,` $grad_output `:` type($input) `,`
      type($grad_output) `)`
    `outs` `(` $init `:` type($init) `)`
    (`overwrite` $overwrite^)?
    (`strides` `=` $strides^)?
    (`dilations` `=` $dilations^)?
    (`padding` `=` $padding^)?
    (`filter_layout` `=` custom<EnumKeyword>($filter_layout)^)?
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = gradientExtraDeclaration;
}

#endif // CONV3D_IR_CONV3DOPS_TD
