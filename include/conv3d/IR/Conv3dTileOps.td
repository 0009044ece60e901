//===- Conv3dTileOps.td - implicit-GEMM tile operations ----*- tablegen -*-===//
//
// The tile level produced by `conv3d-implicit-gemm` (layer 3 of DESIGN.md).
// All operands are memrefs. A GEMM view of the convolution is implied:
// rows m index output positions (n, do, ho, wo), columns n index filters f,
// and k = ((q*R + r)*S + s)*C + c indexes the reduction. No im2col matrix is
// ever materialized: the tile loads gather from the NDHWC input directly.
// Each target lowering turns these ops into its own data movement and MMA
// operations (scalar loops on the CPU).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_CONV3DTILEOPS_TD
#define CONV3D_IR_CONV3DTILEOPS_TD

include "conv3d/IR/Conv3dAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Conv3d_LoadIm2colTileOp
    : Conv3d_Op<"load_im2col_tile", [AttrSizedOperandSegments]> {
  let summary = "gather one implicit-GEMM A tile from an NDHWC input";
  let description = [{
    Writes `tile[i][j] = A[m0 + i][k0 + j]` for the implicit im2col matrix A
    of the convolution described by `window` (Q, R, S), `strides`,
    `dilations` and `padding`. Elements whose input position lies in the
    padding halo, whose row is past M, or whose column is at or past
    `k_end` are zero. With `quantize`, each row of the tile is NVFP4
    fake-quantized in blocks of `block_size` columns (block boundaries at
    multiples of the block size in k, so `k0` and the tile width must be
    multiples of it; zeros past `k_end` and in the halo take part in their
    block).

    With `history` (N x Dh x H x W x C), the convolution's input is
    `concat(history, input)` along depth: depth index d is read from
    `history` when d < Dh and from `input` at d - Dh otherwise (the window
    and padding describe the concatenation). With `rms_norm` and/or
    `input_activation`, each non-halo voxel read from `input` is normalized
    over its channels (`x * rsqrt(mean_c(x^2) + eps) * gamma[c] + beta[c]`)
    and activated before it is stored (and quantized); halo zeros and
    history voxels are taken as they are. With `norm_scale` (N x D x H x W
    f32, the input's own depth), the voxel's `rsqrt(mean_c(x^2) + eps)` is
    read from it (computed once per voxel by the prepass that
    `conv3d-implicit-gemm` emits) instead of being computed from the voxel.

    ```mlir
    conv3d.load_im2col_tile %in[%m0, %k0] limit %K into %a
        window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1]
        : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "NDHWC input", [MemRead]>:$input,
    Index:$m0, Index:$k0, Index:$k_end,
    Arg<AnyMemRef, "tile", [MemWrite]>:$tile,
    Optional<F32>:$amax,
    Arg<Optional<AnyMemRef>, "NDHWC frames preceding the input",
        [MemRead]>:$history,
    Arg<Optional<AnyMemRef>, "RMS norm scale per channel", [MemRead]>:$norm_gamma,
    Arg<Optional<AnyMemRef>, "RMS norm shift per channel", [MemRead]>:$norm_beta,
    Arg<Optional<AnyMemRef>, "RMS norm scale per input voxel",
        [MemRead]>:$norm_scale,
    DenseI64ArrayAttr:$window,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1, 1}">:$dilations,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0, 0, 0}">:$padding,
    OptionalAttr<Conv3d_NVFP4Attr>:$quant,
    OptionalAttr<F32Attr>:$norm_eps,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$input_activation
  );

  // The builder of the operands and attributes before `history` and the
  // prologue, so that code written against them keeps building.
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$m0,
      "::mlir::Value":$k0, "::mlir::Value":$k_end, "::mlir::Value":$tile,
      "::mlir::Value":$amax, "::mlir::DenseI64ArrayAttr":$window,
      "::mlir::DenseI64ArrayAttr":$strides,
      "::mlir::DenseI64ArrayAttr":$dilations,
      "::mlir::DenseI64ArrayAttr":$padding,
      "::mlir::conv3d::NVFP4Attr":$quant), [{
      build($_builder, $_state, input, m0, k0, k_end, tile, amax,
            /*history=*/::mlir::Value(), /*norm_gamma=*/::mlir::Value(),
            /*norm_beta=*/::mlir::Value(), /*norm_scale=*/::mlir::Value(),
            window, strides, dilations,
            padding, quant, /*norm_eps=*/::mlir::FloatAttr(),
            ::mlir::conv3d::ActivationAttr::get($_builder.getContext(),
                ::mlir::conv3d::Activation::none));
    }]>
  ];

  let assemblyFormat = [{
    $input `[` $m0 `,` $k0 `]` `limit` $k_end `into` $tile
    (`history` `(` $history^ `:` type($history) `)`)?
    (`rms_norm` `(` $norm_gamma^ `:` type($norm_gamma) `)`)?
    (`norm_beta` `(` $norm_beta^ `:` type($norm_beta) `)`)?
    (`norm_scale` `(` $norm_scale^ `:` type($norm_scale) `)`)?
    (`norm_eps` `=` $norm_eps^)?
    (`input_activation` `=` custom<EnumKeyword>($input_activation)^)?
    (`quantize` `(` qualified($quant)^ `,` $amax `)`)?
    `window` `=` $window
    (`strides` `=` $strides^)?
    (`dilations` `=` $dilations^)?
    (`padding` `=` $padding^)?
    attr-dict `:` type($input) `,` type($tile)
  }];

  let extraClassDeclaration = [{
    /// Geometry of the convolution this tile belongs to (F is unknown to the
    /// A operand and set to 1). With `history`, its input depth is D + Dh
    /// and `historyDepth` is Dh.
    ::mlir::conv3d::ConvGeometry getGeometry();
    /// Whether the input is transformed as it is loaded.
    bool hasPrologue() {
      return getNormGamma() ||
             getInputActivation() != ::mlir::conv3d::Activation::none;
    }
  }];
  let hasVerifier = 1;
}

def Conv3d_LoadFilterTileOp : Conv3d_Op<"load_filter_tile"> {
  let summary = "load one implicit-GEMM B tile (K x F view of the filter)";
  let description = [{
    Writes `tile[i][j] = B[k0 + i][n0 + j]` where B is the filter seen as a
    K x F matrix (k = ((q*R + r)*S + s)*C + c). Rows at or past `k_end` and
    columns past F are zero.

    ```mlir
    conv3d.load_filter_tile %w[%k0, %n0] limit %K into %b
        : memref<3x3x3x96x96xbf16>, memref<32x64xbf16>
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "filter", [MemRead]>:$filter,
    Index:$k0, Index:$n0, Index:$k_end,
    Arg<AnyMemRef, "tile", [MemWrite]>:$tile,
    DefaultValuedAttr<Conv3d_FilterLayoutAttr,
                      "::mlir::conv3d::FilterLayout::qrscf">:$filter_layout
  );

  let assemblyFormat = [{
    $filter `[` $k0 `,` $n0 `]` `limit` $k_end `into` $tile
    (`filter_layout` `=` custom<EnumKeyword>($filter_layout)^)?
    attr-dict `:` type($filter) `,` type($tile)
  }];
  let hasVerifier = 1;
}

def Conv3d_TileMmaOp : Conv3d_Op<"tile_mma"> {
  let summary = "acc += a * b on tiles, accumulating in f32";
  let description = [{
    `acc[i][j] += sum_k a[i][k] * b[k][j]`, products and sums in f32.

    ```mlir
    conv3d.tile_mma %a, %b, %acc
        : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x64xf32>
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "A tile", [MemRead]>:$a,
    Arg<AnyMemRef, "B tile", [MemRead]>:$b,
    Arg<AnyMemRef, "accumulator", [MemRead, MemWrite]>:$acc
  );

  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Conv3d_StoreOutputTileOp
    : Conv3d_Op<"store_output_tile", [AttrSizedOperandSegments]> {
  let summary = "apply the epilogue to an f32 tile and store it";
  let description = [{
    For each tile element (i, j) with m = m0 + i < M and f = n0 + j < F,
    where m indexes the positions (n, do, ho, wo) of the NDHWF `output`:
    - `overwrite`: `out = cast(act(acc + bias[f]) + residual)`;
    - `accumulate`: the same with `acc + out` in place of `acc`;
    - `partial`: `out[split, n, do, ho, wo, f] = acc`, into an f32
      S x N x Do x Ho x Wo x F workspace, one slab per split-K index
      (no epilogue). Every element of a slab is written by exactly one
      tile, so the slabs need no zeroing, and `conv3d.epilogue` adds them
      in the order of `split`: the result is the same bits run to run,
      whatever order the tiles ran in (no atomics).

    ```mlir
    conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite
        activation = relu : memref<64x64xf32>, memref<1x8x32x32x96xbf16>
    conv3d.store_output_tile %acc into %ws[%m0, %n0] split(%s) mode = partial
        : memref<64x64xf32>, memref<4x1x8x32x32x96xf32>
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "accumulator", [MemRead]>:$acc,
    Arg<AnyMemRef, "NDHWF output", [MemRead, MemWrite]>:$output,
    Index:$m0, Index:$n0,
    Optional<Index>:$split,
    Arg<Optional<AnyMemRef>, "bias", [MemRead]>:$bias,
    Arg<Optional<AnyMemRef>, "residual", [MemRead]>:$residual,
    Conv3d_StoreModeAttr:$mode,
    DefaultValuedAttr<Conv3d_ActivationAttr,
                      "::mlir::conv3d::Activation::none">:$activation
  );

  let assemblyFormat = [{
    $acc `into` $output `[` $m0 `,` $n0 `]`
    (`split` `(` $split^ `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    `mode` `=` custom<EnumKeyword>($mode)
    (`activation` `=` custom<EnumKeyword>($activation)^)?
    attr-dict `:` type($acc) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Conv3d_VoxelRmsScaleOp : Conv3d_Op<"voxel_rms_scale"> {
  let summary = "the RMS norm statistic of every voxel of an NDHWC input";
  let description = [{
    Writes `scale[n, d, h, w] = rsqrt(mean_c(input[n, d, h, w, c]^2) + eps)`,
    the sum of squares and the result in f32. `conv3d-implicit-gemm` emits
    it before the grid loop of a convolution with `rms_norm`: one read of
    the input and one float per voxel, after which every tile load applies
    the norm from `norm_scale` instead of re-reading the voxel's channels
    once per tap and N tile. It lowers to a parallel loop over the voxels
    (`conv3d-lower-to-cpu` on the CPU, `conv3d-lower-host-ops-to-gpu` as a
    device loop on GPU targets).

    ```mlir
    conv3d.voxel_rms_scale %in into %scale eps = 1.0e-06
        : memref<1x4x32x32x96xbf16>, memref<1x4x32x32xf32>
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "NDHWC input", [MemRead]>:$input,
    Arg<AnyMemRef, "N x D x H x W f32 scales", [MemWrite]>:$scale,
    F32Attr:$eps
  );

  let assemblyFormat = [{
    $input `into` $scale `eps` `=` $eps attr-dict `:` type($input) `,`
    type($scale)
  }];
  let hasVerifier = 1;
}

#endif // CONV3D_IR_CONV3DTILEOPS_TD
