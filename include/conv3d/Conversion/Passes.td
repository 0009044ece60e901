//===- Passes.td - conv3d conversion passes ----------------*- tablegen -*-===//

#ifndef CONV3D_CONVERSION_PASSES_TD
#define CONV3D_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"
include "conv3d/Transforms/PassOptions.td"

def Conv3dFromLinalg : Pass<"conv3d-from-linalg"> {
  let summary = "Import linalg 3-D convolutions as conv3d.conv";
  let description = [{
    Rewrites `linalg.conv_3d_ndhwc_dhwcf` (filter DHWCF = QRSCF) and
    `linalg.conv_3d_ncdhw_fcdhw` (with explicit `linalg.transpose`s to
    NDHWC / FQRSC and back) on tensors into `conv3d.conv`. A `tensor.pad`
    producer of the input that pads only spatial dimensions with zero folds
    into the padding attribute, and a zero `linalg.fill` destination folds
    into `overwrite`. What a video VAE decoder puts in front of a causal
    convolution folds too: a `tensor.concat` of two tensors along depth
    (cached frames, new input) becomes the `history` operand, and an
    elementwise `linalg.generic` computing ReLU, SiLU or GELU-tanh of the
    input becomes `input_activation`, and an RMS norm over the channels (a
    reduction generic summing the squares into a zero fill, then an
    elementwise generic of the input, that sum, gamma and optionally beta;
    eps is read off its body) becomes `rms_norm`. Nothing folds where the
    result would change: a concatenation after a prologue was folded (the
    prologue would skip frames the graph transformed), an activation before
    a norm. Convolutions it cannot convert (other element types,
    memrefs, non-zero padding values, dynamic channel or window sizes) stay
    untouched, unless `refuse-unconverted` is set: the conv3d pipelines run
    this pass first with it, so that a convolution never takes upstream's
    generic lowering silently. Each one they cannot import is then an error
    naming why, except those a host's `ConvolutionHooks::shouldConvert`
    keeps; other linalg 3-D convolutions (depthwise, unbatched, quantized),
    which conv3d does not compute, get a warning.

    Note: linalg's named convolutions accumulate in the output element type;
    `conv3d.conv` always accumulates in f32 and rounds once, so for bf16 or
    f16 outputs the imported op is more accurate than the original.
  }];
  let options = [
    Option<"refuseUnconverted", "refuse-unconverted", "bool",
           /*default=*/"false",
           "Report each linalg.conv_3d_ndhwc_dhwcf / conv_3d_ncdhw_fcdhw "
           "left unconverted (and not kept by the host's hook) as an error "
           "naming why, and other linalg 3-D convolutions with a warning "
           "(the conv3d pipelines set it)">
  ];
  let dependentDialects = [
    "::mlir::conv3d::Conv3dDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def Conv3dToLinalg : Pass<"conv3d-to-linalg"> {
  let options = [
    Option<"lowerConv", "lower-conv", "bool", /*default=*/"true",
           "Also lower conv3d.conv (false: only conv3d.quantize and "
           "conv3d.epilogue, as the implicit-GEMM pipeline needs)">,
    Option<"lowerContiguousQuantize", "lower-contiguous-quantize", "bool",
           /*default=*/"true",
           "Also lower the prepasses that conv3d-quantize-to-loops takes: "
           "conv3d.quantize ops whose blocks are contiguous runs of the "
           "buffer, and conv3d.prologue (false: leave them to "
           "conv3d-quantize-to-loops after bufferization, one pass over the "
           "tensor)">,
    Option<"lowerDynamicConv", "lower-dynamic-conv", "bool",
           /*default=*/"false",
           "With lower-conv=false: still lower each conv3d.conv of dynamic "
           "shape (a dynamic batch or spatial size), which "
           "conv3d-implicit-gemm cannot tile, with a remark (the "
           "implicit-GEMM pipelines set it)">
  ];
  let summary = "Reference lowering of conv3d ops on tensors to linalg";
  let description = [{
    A deliberately straightforward lowering, used as the numerical reference
    inside the compiler and as a portable fallback:
    - `conv3d.conv`: zero `tensor.pad` of the input, one 9-loop
      `linalg.generic` accumulating in f32, and an epilogue
      `linalg.generic` (bias, activation, residual, cast). With input
      quantization, an explicit im2col matrix is built, quantized along K
      and multiplied by the K x F filter.
    - `conv3d.quantize`: a block-maximum reduction and an elementwise
      quantization, both `linalg.generic`.
    - `conv3d.epilogue`: one elementwise `linalg.generic`.
    Run it before bufferization. An op in memref form (a module written
    after bufferization) becomes the same op on tensors read from its
    buffers (`bufferization.to_tensor`), its result materialized into its
    output buffer (`bufferization.materialize_in_destination`), and is then
    lowered as above; its distinct buffers must not overlap.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def Conv3dLowerToCPU : Pass<"conv3d-lower-to-cpu"> {
  let summary = "Lower implicit-GEMM tile ops to scalar loops for the CPU";
  let description = [{
    The CPU target: each tile op becomes `scf.for` loops over the tile with
    `memref` loads and stores (gathers with clamped indices and a select for
    the padding halo, so no load is out of bounds), the NVFP4 block math of
    ScalarEmitters, and the epilogue. `conv3d.epilogue` on memrefs becomes a
    `linalg.generic`; `conv3d.voxel_rms_scale` (the RMS norm prepass) an
    `scf.parallel` over the voxels. This makes every target-independent
    transformation executable and checkable on a machine without a GPU.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def Conv3dLowerToSM80 : Pass<"conv3d-lower-to-sm80"> {
  let summary = "Lower implicit-GEMM grid loops to sm80 kernels (mma.sync)";
  let description = [{
    Each `scf.forall` grid loop of `conv3d-implicit-gemm` becomes one
    `gpu.launch` (a block per grid iteration) running an S-stage software
    pipeline: 16/8/4-byte `cp.async` with zero-fill for the padding halo and
    out-of-range rows (or a register-staged path for NVFP4 quantization and
    odd channel counts), XOR-swizzled shared memory read with `ldmatrix`,
    `mma.sync.m16n8k16` (bf16 or f16, f32 accumulators), and an epilogue
    through shared memory with 16-byte stores. The A loader reads a history
    operand (each access selects the history's or the input's memref by
    depth) and applies the input prologue with the `norm_scale` statistic
    of the prepass: on the landed `cp.async` tile one stage ahead of the
    MMAs (3+ stages), else on the register-staged path; halo voxels stay
    zero, history frames unchanged. A grouped convolution's grid (with a
    group dimension) becomes groups x M tiles x N tiles blocks: each
    computes its group from its block index, builds the grid body's views
    of the group's input channels, filters and output columns, and runs the
    dense kernel on them (the sm80 family takes groups of multiples of 8
    channels and filters). The code runs on any sm_80+ GPU. See
    SM80KernelPlan.h for the constraints on the configuration.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dLowerToSM90 : Pass<"conv3d-lower-to-sm90"> {
  let summary = "Lower implicit-GEMM grid loops to sm90 kernels (TMA im2col "
                "+ wgmma)";
  let description = [{
    Each `scf.forall` grid loop whose `#conv3d.igemm_config` is for the sm90
    kernel becomes one `gpu.launch` of a warp-specialized kernel for
    sm_90a: a producer warpgroup (`setmaxnreg` down) whose first thread
    issues, per K step (one filter tap x 64 channels), a rank-5 TMA im2col
    load of the activation tile (`cp.async.bulk.tensor ... im2col`, 128-byte
    swizzle, zeros in the halo and past the last row) and a tiled TMA load
    of the FQRSC filter tile, completing on a per-stage `mbarrier`; one or
    two consumer warpgroups (`setmaxnreg` up) that wait on it, issue
    `wgmma.mma_async` m64nNk16 (bf16/f16, f32 accumulators) from shared
    memory descriptors, and release the stage to the producer once the
    wgmmas of the step read it; then the shared staged epilogue (bias,
    activation, residual, accumulate or split-K atomics, cast). The host
    code encodes the two TMA descriptors before each launch
    (`conv3dTmaIm2colDescriptor`, `conv3dTmaTiledDescriptor`; device copies
    cached by the runtime) and skips the launch if the driver refused one.
    Past the rank-5 descriptor's limits (ConvGeometry::chooseTmaIm2colForm)
    the input is read through a rank-4 descriptor of its depth slices
    (`conv3dTmaIm2colSliceDescriptor`): tiles then stay in one output depth
    slice, a tile's K steps are its depth taps inside the input, and each
    load names its input slice.
    Grids whose config is for the sm80 kernel (the fallback
    `conv3d-select-config` records, with a remark, for convolutions this
    kernel cannot take) are lowered as `conv3d-lower-to-sm80` does.
    See SM90KernelPlan.h for the constraints on the configuration.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dLowerToSM100 : Pass<"conv3d-lower-to-sm100"> {
  let summary = "Lower implicit-GEMM grid loops to sm100 kernels (TMA im2col "
                "+ tcgen05 + TMEM)";
  let description = [{
    Each `scf.forall` grid loop whose `#conv3d.igemm_config` is for the
    sm100 kernel becomes one persistent `gpu.launch` of a warp-specialized
    kernel for sm_100a (192 threads, a block per multiprocessor): warp 0's
    first thread is the TMA producer shared with the sm90 kernel (per K
    step, one filter tap x 64 channels, a rank-5 TMA im2col load of the
    activation tile and a tiled TMA load of the FQRSC filter tile into a
    128-byte-swizzled `mbarrier` ring); warp 1 allocates the tensor memory
    (`tcgen05.alloc`, then `tcgen05.relinquish_alloc_permit`) and one
    elected thread issues `tcgen05.mma.cta_group::1.kind::f16` (M = 128,
    N = tile_n, bf16/f16 operands from tcgen05 shared-memory descriptors,
    f32 accumulators in TMEM), committing (`tcgen05.commit`) each stage
    back to the producer and each finished tile to the epilogue; warps 2-5
    read the accumulator with `tcgen05.ld.32x32b` (each warp its 32 TMEM
    lanes) and run the shared staged epilogue (bias, activation, residual,
    accumulate or split-K atomics, cast). Two accumulator buffers in TMEM
    let the epilogue of one tile overlap the MMAs of the next. With
    tile_m = 256 a tile is computed by a 2-CTA cluster with
    `tcgen05.mma.cta_group::2` (M = 256): each CTA loads its 128 rows of
    the activation and half of the filter rows, both CTAs' loads complete
    on the even CTA's full barrier, its commits arrive on both CTAs'
    barriers (multicast), and the odd CTA's epilogue hands its accumulator
    back through the even CTA's barrier.
    Grids whose config is for the sm80 kernel (the fallback
    `conv3d-select-config` records, with a remark, for convolutions the TMA
    kernel cannot take) are lowered as `conv3d-lower-to-sm80` does.
    No sm_100 GPU has run this code: it is generated and assembled, and
    checked structurally and by a host-side model of its plan.
    See SM100KernelPlan.h for the constraints on the configuration.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dLowerBlockScaledToSM100
    : Pass<"conv3d-lower-block-scaled-to-sm100"> {
  let summary = "Lower real-NVFP4 convolutions to the block-scaled sm100 "
                "kernel (tcgen05.mma kind::mxf4nvf4 block16)";
  let description = [{
    Each memref `conv3d.conv` with a packed NVFP4 filter (`filter_quant`,
    FQRSC, blocks of 16) and its input quantization fused (`quantize`,
    blocks of 16) becomes:

    - the packing prepass: `conv3d.pack_nvfp4` of the input into freshly
      allocated E2M1 codes (NDHW x C/2 bytes) and E4M3 scales (NDHW x C/16
      bytes), which `conv3d-quantize-to-loops` lowers to an ordinary
      parallel loop (a kernel of its own on the GPU);
    - four TMA descriptors made on the host (CU_TENSOR_MAP_DATA_TYPE_UINT8
      over the packed bytes, SM100BlockScaledTma.h): im2col over the
      activation's codes (128-byte swizzle) and scales, tiled over the
      filter's codes (128-byte swizzle) and scales;
    - one persistent `gpu.launch` of the block-scaled kernel for sm_100a
      (192 threads): warp 0's first thread loads the four boxes of each K
      step (one filter tap x 256 channels); warp 1 permutes the scale rows
      into tcgen05.cp atoms in shared memory, and its elected thread copies
      them to TMEM (`tcgen05.cp.cta_group::1.32x128b.warpx4`), issues four
      `tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16` (K = 64
      each) and commits; warps 2-5 read the f32 accumulators from TMEM,
      multiply them by gsA * gsB = (amax / 2688) * (filter_amax / 2688) and
      run the shared staged epilogue (bias, activation, residual,
      accumulate, cast).

    The tile is 128 x tile_n: `tile-n` and `stages` choose it, else the
    convolution's `config` (a forced configuration that
    `conv3d-select-config` attached: tile_m = 128, tile_k = 64, warps 4 x 1,
    no split-K, no qslice_outer, no other kernel, each refusal naming why),
    else tile_n is F rounded up to 16 (at most 256) with as many stages (up
    to 6) as fit beside epilogue chunks of at least 32 columns.
    Every convolution the kernel cannot take is an error naming why (the
    reasons of SM100BlockScaledPlan.h and SM100BlockScaledTma.h, and the
    operand checks). Convolutions without a packed filter are left alone.
    No sm_100 GPU has run this code: it is generated and assembled by
    ptxas, and its data layout is replayed by the schedule model
    (SM100ScheduleModelTest.cpp).
  }];
  let options = [
    Option<"tileN", "tile-n", "int64_t", /*default=*/"0",
           "N of the tile (a multiple of 16 up to 256); 0: the "
           "convolution's config's, else F rounded up to 16, at most 256">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Stages of the TMA ring (at least 2); 0: the convolution's "
           "config's, else as many as fit, up to 6, beside epilogue chunks "
           "of at least 32 columns">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dSetKernelOccupancy : Pass<"conv3d-set-kernel-occupancy"> {
  let summary = "Give kernels that move registers between warpgroups, or "
                "allocate tensor memory, a register count at entry";
  let description = [{
    `setmaxnreg` (warp-specialized kernels hand registers from the producer
    to the consumers) takes effect only when ptxas knows the register count
    at the kernel's entry; otherwise it is ignored (note C7508). Outlined
    GPU kernels (`gpu.func` with the kernel attribute) that contain
    `nvvm.setmaxregister` get `nvvm.minctasm = 1` (`.minnctapersm 1`),
    which with their fixed block size determines it. Runs after
    `gpu-kernel-outlining`; the attribute becomes the PTX directive in
    `convert-gpu-to-nvvm`.

    Kernels that allocate tensor memory (`nvvm.tcgen05.alloc`: the sm100
    kernel, persistent, one block per multiprocessor) get the same: without
    it ptxas keeps a 192-thread kernel to 64 registers and spills.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def Conv3dQuantizeToLoops : Pass<"conv3d-quantize-to-loops"> {
  let summary = "Lower conv3d.quantize on memrefs with contiguous blocks to "
                "one parallel loop over the blocks";
  let description = [{
    When the blocks of a `conv3d.quantize` are contiguous runs of
    `block_size` elements of the row-major buffer (its block axes are the
    trailing axes and their flattened length is a multiple of the block
    size, as for the NVFP4 prepass of an activation), the op becomes a
    one-dimensional `scf.parallel` over the blocks. Each iteration loads its
    block with vector loads, computes the block maximum and scale once, and
    stores the quantized block: one read and one write of the tensor. On a
    GPU, `conv3d-lower-host-ops-to-gpu` maps the loop to threads (a thread
    per block); on the CPU it runs as a loop. Other quantize ops are left
    alone (`conv3d-to-linalg` lowers them on tensors). Operands must have
    identity layouts.

    `conv3d.pack_nvfp4` (the packing prepass of real NVFP4) becomes the
    same kind of loop: each iteration stores its block's E2M1 codes, two
    per byte, and its E4M3 scale byte.

    `conv3d.prologue` (the input prologue placed in a prepass) becomes a
    loop over (voxels) x (`prologue-lanes`): the lanes of a voxel sum its
    squares (with a norm) over interleaved 16-byte accesses, combine them
    with gpu.shuffle xor when there are several, then transform and store
    its channels.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"0",
           "Byte alignment the vector loads and stores may assume: 0 (the "
           "element's) or a power of two up to 16, the widest access; the "
           "GPU pipeline uses 16 for 128-bit accesses">,
    Option<"prologueLanes", "prologue-lanes", "int64_t", /*default=*/"1",
           "Iterations that share one voxel of conv3d.prologue, reducing "
           "through gpu.shuffle xor (a power of two up to 32; above 1 only "
           "where the loop becomes GPU threads, tiled by a multiple of 32: "
           "the GPU pipelines use 32, a warp per voxel)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dLowerDepthwise : Pass<"conv3d-lower-depthwise"> {
  let summary = "Lower depthwise convolutions to a direct, memory-bound "
                "loop nest (the depthwise kernel of the GPU targets)";
  let description = [{
    A grouped memref `conv3d.conv`, above all a depthwise one (one input
    channel and one filter per group, `groups = C = F`), becomes a parallel
    loop nest over (n, do, ho, W blocks, output channel vectors) instead of
    an implicit GEMM (whose N and K of 1 and 27 leave the tensor cores
    idle): each iteration computes `w-block` consecutive outputs along W of
    V consecutive output channels (V channels of 16 bytes for a depthwise
    convolution; V filters of one group otherwise, whose input channels are
    read in chunks and broadcast against the taps' filter vectors). The input vectors of a window row are loaded once per row
    and reused by every output of the W block and every tap along W
    (register blocking; channels-last vector loads and stores); taps are
    accumulated in f32 with the filter's tap vectors in registers, and the
    epilogue (bias, activation, residual, accumulation onto the output,
    cast) is applied before the store. Strides, dilations and padding are
    those of the op (halo taps read zeros). In a GPU pipeline,
    `conv3d-lower-host-ops-to-gpu` makes the loop nest a kernel, a thread
    per iteration, consecutive threads on consecutive channel vectors.

    It takes the grouped convolutions that `takesDepthwiseKernel` (the
    target layer's statement of the boundary, conv3d/Target/Families.h)
    gives it on `target`: on `cpu`, depthwise ones (one channel per group;
    the CPU's implicit GEMM tiles the others over a group grid dimension);
    on a GPU target, those no kernel family of the target implements (the
    sm80 kernel's grouped implicit GEMM takes groups of multiples of 8
    channels and filters, so this kernel keeps depthwise convolutions,
    channel multipliers and smaller or unaligned groups). The others, and
    the convolutions it cannot compute (`depthwiseKernelProblem`), are left
    to `conv3d-implicit-gemm`.
  }];
  let options = [
    Option<"wBlock", "w-block", "int64_t", /*default=*/"4",
           "Consecutive outputs along W per iteration (1 to 16)">,
    Conv3dTargetOption<"Target whose pipeline runs the pass: which grouped "
                       "convolutions it takes">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def Conv3dLowerHostOpsToGPU : Pass<"conv3d-lower-host-ops-to-gpu"> {
  let summary = "Move the remaining buffer operations of a GPU pipeline to "
                "the device";
  let description = [{
    After the convolutions became kernels, a GPU pipeline can still hold
    buffer work in host code: the NVFP4 prepass and the Q-slice accumulator
    as `linalg` ops, split-K's `conv3d.epilogue`, allocations of temporaries
    and copies. All memrefs there are device memory, so:
    - `conv3d.epilogue` becomes a `linalg.generic`;
    - `conv3d.voxel_rms_scale` (the input prologue's RMS norm prepass)
      becomes a parallel loop over the voxels, a thread per voxel;
    - `conv3d.quantize` with contiguous blocks (the NVFP4 prepass) becomes a
      parallel loop over its blocks (conv3d-quantize-to-loops, with 16-byte
      vector accesses), a thread per block;
    - a copy of a contiguous operand into the channel window of a wider
      buffer (channels padded for TMA) becomes a parallel loop over
      (voxels) x (channel chunks) moving up to 16 bytes per access, behind a
      host check of the operand's alignment (the element-wise copy below
      otherwise);
    - any other copy between strided views whose innermost runs are
      contiguous, with every stride and offset a multiple of a vector of up
      to 16 bytes (the data gradient's stride phases inserted into every
      other voxel of the input gradient) becomes a parallel loop over (the
      outer positions) x (run chunks) of vector accesses, behind a host
      check of both base pointers' alignment;
    - a `linalg.generic` marked `conv3d.gpu_transpose_dims = array<i64: a,
      b>` (no inputs, its body reading sources by its indices, contiguously
      along dimension a; b the output's innermost) becomes a shared-memory
      tiled transpose: 32 x 32 tiles of (a, b), the body computed by 32 x 8
      threads with consecutive threads along a, staged in a 32 x 33
      workgroup buffer, then stored with consecutive threads along b, so
      that reads and writes are both coalesced (conv3d-lower-conv-gradients
      marks the weight gradient's operand gathers; other generics with the
      mark take the element-wise path);
    - each `linalg` op becomes parallel loops (reductions stay sequential
      inside), collapsed to one dimension and tiled by `block-size`, for
      `gpu-map-parallel-loops` and `convert-parallel-loops-to-gpu` to turn
      into a kernel (outer loop: blocks, inner loop: threads); so is every
      other one-dimensional parallel loop left in host code;
    - `memref.alloc`, `memref.dealloc` and `memref.copy` become `gpu.alloc`,
      `gpu.dealloc` and `gpu.memcpy`, ordered on the stream.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the generated elementwise kernels (1 to "
           "1024)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // CONV3D_CONVERSION_PASSES_TD
