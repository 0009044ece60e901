//===- Conv3dAttrs.td - conv3d attributes ------------------*- tablegen -*-===//

#ifndef CONV3D_IR_CONV3DATTRS_TD
#define CONV3D_IR_CONV3DATTRS_TD

include "conv3d/IR/Conv3dDialect.td"
include "conv3d/IR/Conv3dEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Conv3d_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Conv3d_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Conv3d_FilterLayoutAttr
    : EnumAttr<Conv3d_Dialect, Conv3d_FilterLayout, "filter_layout">;
def Conv3d_ActivationAttr
    : EnumAttr<Conv3d_Dialect, Conv3d_Activation, "activation">;
def Conv3d_StoreModeAttr
    : EnumAttr<Conv3d_Dialect, Conv3d_StoreMode, "store_mode">;

def Conv3d_NVFP4Attr : Conv3d_Attr<"NVFP4", "nvfp4"> {
  let summary = "NVFP4 fake quantization (E2M1 values, E4M3 block scales)";
  let description = [{
    Quantize -> dequantize round trip of `spec/nvfp4.md`: blocks of
    `block_size` consecutive elements (16, 32, 64, 128 or 256), one E4M3
    scale per block, one f32 global scale derived from a run-time amax.
  }];
  let parameters = (ins "int64_t":$block_size);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Conv3d_IGemmConfigAttr : Conv3d_Attr<"IGemmConfig", "igemm_config"> {
  let summary = "implicit-GEMM tile configuration";
  let description = [{
    The single description of how a convolution is tiled, produced by the
    `conv3d-select-config` heuristic, by the user, or by a tuner, and consumed
    by every lowering:
    - `tile_m`, `tile_n`, `tile_k`: the block tile of the GEMM view
      (M = N*Do*Ho*Wo output positions, N = F filters, K = Q*R*S*C);
    - `stages`: depth of the shared-memory ring on GPU targets (ignored by
      the CPU lowering);
    - `warps_m`, `warps_n`: warp layout of a block on GPU targets;
    - `k_order`: `taps_outer` (one loop over the flat K index) or
      `qslice_outer` (depth slices outermost, halo-only slices skipped);
    - `split_k`: number of independent K ranges whose partial sums are
      added in an f32 workspace;
    - `kernel`: the GPU kernel family the configuration is for (`sm80`,
      `sm90`, `sm100`). The default, `cpu` (not printed), leaves it to the
      target the pipeline compiles for; `conv3d-select-config` records
      `sm80` when the target's own kernel cannot take the convolution and
      the sm80 kernel runs it instead;
    - `schedule`: on sm90, `cooperative` (the default: two consumer
      warpgroups split each tile) or `pingpong` (each consumer warpgroup
      owns whole tiles of `tile_m` rows, alternating, so that one's
      epilogue overlaps the other's MMAs; `warps_m` = 4);
    - `cluster_m`: on sm90, blocks per thread-block cluster along M (1, the
      default, or 2). The two blocks of a cluster compute the tiles of rows
      2p*tile_m and (2p+1)*tile_m of one N tile; each loads half of the
      filter tile and multicasts it to both, halving the filter's reads
      from L2;
    - `mainloop`: on sm90, how the activation operand is loaded: `im2col`
      (the default: one TMA im2col load per filter tap and 64 channels) or
      `halo` (one tiled TMA load per depth tap and channel block of the
      input patch that the tile's output rows and their halo read, shared
      by the MMAs of all R x S taps at shifted rows). A `halo` tile is
      `tile_m` / 64 output rows of 64 consecutive output columns; it needs
      unit strides in H and W and an output the TMA-store epilogue takes.
  }];
  let parameters = (ins
    "int64_t":$tile_m,
    "int64_t":$tile_n,
    "int64_t":$tile_k,
    DefaultValuedParameter<"int64_t", "1">:$stages,
    DefaultValuedParameter<"int64_t", "1">:$warps_m,
    DefaultValuedParameter<"int64_t", "1">:$warps_n,
    DefaultValuedParameter<"::mlir::conv3d::KOrder",
                           "::mlir::conv3d::KOrder::taps_outer">:$k_order,
    DefaultValuedParameter<"int64_t", "1">:$split_k,
    DefaultValuedParameter<"::mlir::conv3d::Target",
                           "::mlir::conv3d::Target::cpu">:$kernel,
    DefaultValuedParameter<"::mlir::conv3d::KernelSchedule",
                           "::mlir::conv3d::KernelSchedule::cooperative">:$schedule,
    DefaultValuedParameter<"int64_t", "1">:$cluster_m,
    DefaultValuedParameter<"::mlir::conv3d::Mainloop",
                           "::mlir::conv3d::Mainloop::im2col">:$mainloop
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // CONV3D_IR_CONV3DATTRS_TD
