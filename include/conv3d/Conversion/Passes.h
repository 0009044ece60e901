//===- Passes.h - conv3d conversion passes ----------------------*- C++ -*-===//

#ifndef CONV3D_CONVERSION_PASSES_H
#define CONV3D_CONVERSION_PASSES_H

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
} // namespace mlir

namespace mlir::conv3d {

class ConvOp;
class QuantizeOp;

#define GEN_PASS_DECL
#include "conv3d/Conversion/Passes.h.inc"

/// Patterns of `conv3d-from-linalg`: linalg 3-D convolutions to conv3d.conv,
/// plus the folds of zero padding and zero-filled destinations. A
/// convolution for which `shouldConvert` (if set) returns false is left.
void populateConvFromLinalgPatterns(
    RewritePatternSet &patterns,
    std::function<bool(Operation *)> shouldConvert = nullptr);

/// conv3d-from-linalg importing only what `shouldConvert` accepts.
std::unique_ptr<Pass>
createConv3dFromLinalg(std::function<bool(Operation *)> shouldConvert);
std::unique_ptr<Pass>
createConv3dFromLinalg(const Conv3dFromLinalgOptions &options,
                       std::function<bool(Operation *)> shouldConvert);

/// Patterns of `conv3d-to-linalg`: the reference lowering of the tensor
/// forms of conv3d.conv (if `includeConv`; else, if `includeDynamicConv`,
/// of those of dynamic shape, with a remark), conv3d.quantize (those with
/// contiguous blocks if `includeContiguousQuantize`) and conv3d.epilogue.
void populateConv3dToLinalgPatterns(RewritePatternSet &patterns,
                                    bool includeConv = true,
                                    bool includeContiguousQuantize = true,
                                    bool includeDynamicConv = false);

/// Whether conv3d-implicit-gemm cannot tile `conv` for its dynamic shape
/// (a dynamic batch, spatial size or destination).
bool hasDynamicConvShape(ConvOp conv);

/// Whether the blocks of `op` are contiguous runs of block_size elements
/// of its row-major operands: the block axes are the trailing axes, with a
/// static flattened length that is a multiple of the block size.
bool hasContiguousQuantBlocks(QuantizeOp op);

/// Patterns of `conv3d-quantize-to-loops`: conv3d.quantize on memrefs with
/// contiguous blocks (and identity layouts) to one scf.parallel over the
/// blocks, whose vector loads and stores assume `alignment` bytes (0: the
/// element's).
void populateQuantizeToLoopsPatterns(RewritePatternSet &patterns,
                                     int64_t alignment = 0);

/// Patterns of `conv3d-quantize-to-loops` for conv3d.pack_nvfp4 (identity
/// layouts): one scf.parallel over the blocks storing codes and scale
/// bytes; vector accesses assume up to `alignment` bytes (0: none).
void populatePackNVFP4ToLoopsPatterns(RewritePatternSet &patterns,
                                      int64_t alignment = 0);

/// Patterns of `conv3d-quantize-to-loops` for conv3d.prologue (identity
/// layouts): one scf.parallel over (voxels) x (lanes), the `lanes`
/// iterations of a voxel normalizing and activating its channels with
/// vector accesses. `lanes` > 1 (a power of two up to 32) reduces through
/// gpu.shuffle: only for loops that become GPU threads, a warp per voxel.
void populatePrologueToLoopsPatterns(RewritePatternSet &patterns,
                                     int64_t alignment = 0, int64_t lanes = 1);

/// Lowers one implicit-GEMM grid loop to an sm80 kernel launch (reports the
/// reason on the loop when it cannot).
LogicalResult lowerGridToSM80(RewriterBase &rewriter, scf::ForallOp grid);

/// Lowers one implicit-GEMM grid loop to a launch of the sm90 kernel (TMA
/// im2col + wgmma, warp-specialized), or of the sm80 kernel when its config
/// is for that one (conv3d-select-config's fallback); reports the reason
/// on the loop when it cannot.
LogicalResult lowerGridToSM90(RewriterBase &rewriter, scf::ForallOp grid);

/// Lowers one implicit-GEMM grid loop to a launch of the sm100 kernel (TMA
/// im2col + tcgen05.mma into TMEM, warp-specialized), or of the sm80 kernel
/// when its config is for that one (conv3d-select-config's fallback);
/// reports the reason on the loop when it cannot.
LogicalResult lowerGridToSM100(RewriterBase &rewriter, scf::ForallOp grid);

/// Lowers one memref convolution with a packed NVFP4 filter and fused input
/// quantization to the packing prepass of its input and a launch of the
/// block-scaled sm100 kernel (tcgen05.mma kind::mxf4nvf4 block16); reports
/// why on the convolution when it cannot.
/// `tileN` and `stages` choose the tile (0: the defaults of
/// conv3d-lower-block-scaled-to-sm100).
LogicalResult lowerBlockScaledConvToSM100(RewriterBase &rewriter, ConvOp conv,
                                          int64_t tileN = 0,
                                          int64_t stages = 0);

/// Patterns of `conv3d-lower-to-cpu`: tile ops to scalar loops, and
/// conv3d.epilogue on memrefs to linalg.generic.
void populateTileOpsToLoopsPatterns(RewritePatternSet &patterns);

/// conv3d.epilogue on memrefs to a linalg.generic (shared by the CPU and GPU
/// targets).
void populateEpilogueToLinalgPatterns(RewritePatternSet &patterns);

/// conv3d.voxel_rms_scale (the RMS norm prepass) to an scf.parallel over the
/// voxels (shared by the CPU and GPU targets).
void populateVoxelRmsScaleToLoopsPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "conv3d/Conversion/Passes.h.inc"

} // namespace mlir::conv3d

#endif // CONV3D_CONVERSION_PASSES_H
