//===- KernelCommon.h - what every GPU convolution kernel shares -*- C++
//-*-===//
//
// Internal to lib/Conversion. A GPU convolution kernel is a tile scheduler x
// a mainloop x an epilogue. The sm80 and sm90 lowerings differ in the
// mainloop (cp.async + mma.sync, or TMA + mbarriers + wgmma); what is the
// same for both lives here, written once:
// - reading an implicit-GEMM grid loop (its config and tile ops),
// - the operands as flat 1-D memrefs with their logical strides,
// - the kernel's integer arithmetic (i32 when every index fits),
// - the K schedule of a block (split-K ranges, active Q slices),
// - the epilogue from an f32 staging tile in shared memory to the output
//   (bias, activation, residual, accumulate, cast, 16-byte stores).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_GPU_KERNELCOMMON_H
#define CONV3D_LIB_CONVERSION_GPU_KERNELCOMMON_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/IndexMath.h"
#include "conv3d/Target/KernelFamily.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace mlir::conv3d {

/// IRIndexMath (the ConvGeometry decompositions) plus the operations the
/// kernel layouts and loaders need; the IR counterpart of ScalarLayoutMath.
/// Values have type `type`: i32 when every tensor of the kernel has fewer
/// than 2^31 elements (half the registers of 64-bit math), else `index`
/// (64-bit addressing). toIndex() converts for memory accesses.
struct KernelMath : IRIndexMath {
  KernelMath(OpBuilder &b, Location loc, Type type)
      : IRIndexMath{b, loc, type} {}

  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  using IRIndexMath::mul;
  Value mul(Value x, Value y) const {
    return arith::MulIOp::create(b, loc, x, y);
  }
  Value bitXor(Value x, Value y) const {
    return arith::XOrIOp::create(b, loc, x, y);
  }
  Value bitAnd(Value x, int64_t c) const {
    return arith::AndIOp::create(b, loc, x, constant(c));
  }
  Value minU(Value x, Value y) const {
    return arith::MinUIOp::create(b, loc, x, y);
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value cmp(arith::CmpIPredicate pred, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  }
  Value ult(Value x, Value y) const {
    return cmp(arith::CmpIPredicate::ult, x, y);
  }
  Value andI(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  /// 0 <= x < bound for a possibly negative value.
  Value inRange(Value x, int64_t bound) const {
    return andI(cmp(arith::CmpIPredicate::sge, x, constant(0)),
                cmp(arith::CmpIPredicate::slt, x, constant(bound)));
  }
  Value trueValue() const {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  }
  /// `x` as an `index` (for memref indices and loop bounds of that type).
  Value toIndex(Value x) const {
    if (x.getType().isIndex())
      return x;
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  }
  /// An `index` value in this math's type.
  Value fromIndex(Value x) const {
    if (type.isIndex())
      return x;
    return arith::IndexCastOp::create(b, loc, type, x);
  }
};

/// A global-memory operand seen as a flat 1-D memref, with the element
/// strides of its logical dimensions (so subviews work too).
struct FlatOperand {
  Value memref;
  SmallVector<int64_t> strides;

  explicit operator bool() const { return static_cast<bool>(memref); }
};

struct KernelOperands {
  FlatOperand input;    ///< NDHWC
  FlatOperand filter;   ///< strides = {k, n}: the K x F view's strides
  FlatOperand output;   ///< NDHWF
  FlatOperand bias;     ///< [F], optional
  FlatOperand residual; ///< NDHWF, optional
  Value amax;           ///< f32, with input quantization
  /// N x Dh x H x W x C frames preceding the input along depth, optional
  /// (the sm80 loaders read depth d < Dh from it).
  FlatOperand history;
  /// The input prologue's operands, optional: the per-voxel RMS norm
  /// statistic from the prepass (strides of n, d, h, w) and the norm's
  /// per-channel gamma and beta.
  FlatOperand normScale, normGamma, normBeta;
  std::array<int64_t, 5> outputShape;
};

/// What one implicit-GEMM grid loop computes, read off its tile ops.
struct GridKernel {
  // Op handles are values whose accessors are not const.
  mutable scf::ForallOp grid;
  IGemmConfigAttr config;
  mutable LoadIm2colTileOp im2col;
  mutable LoadFilterTileOp filterLoad;
  mutable StoreOutputTileOp store;

  /// A grouped convolution's grid (conv3d-implicit-gemm's group dimension,
  /// after split-K's): the number of groups, and the grid's induction
  /// variable of the group, from which the grid body computes the tile ops'
  /// operands (views of one group's channels, filters and output columns).
  /// 1 and null for a dense convolution.
  int64_t groups = 1;
  Value groupIv;

  /// The convolution's geometry (F read off the filter): one group's (its
  /// views' channels and filters) for a grouped grid.
  ConvGeometry geometry() const;
  FilterLayout filterLayout() const { return filterLoad.getFilterLayout(); }
  Type inputElementType() const;
  Type outputElementType() const;
  /// The convolution as the kernel families see it, with the memref
  /// operands' layouts (KernelProblem.cpp). Whether the output takes TMA
  /// stores is left to the sm90 plan, which decides it per mainloop.
  ConvProblem problem() const;
};

/// The grid loop's kernel, or failure when `grid` is not a loop that
/// conv3d-implicit-gemm produced.
FailureOr<GridKernel> analyzeGrid(scf::ForallOp grid);

/// The checks every GPU kernel makes of the operands before planning: 16-bit
/// input and filter of one type, unit innermost strides, a history operand
/// and an input prologue only for the sm80 kernel (whose loaders read them).
/// Reports on the grid loop, naming `target`.
LogicalResult checkGpuOperands(const GridKernel &kernel, StringRef target);

/// A flat 1-D view of a memref (host side, before the launch), so the kernel
/// addresses every operand with one index and the logical strides. Null in,
/// null out.
FailureOr<FlatOperand> flattenOperand(OpBuilder &b, Location loc, Value memref);

/// The operands of `kernel` flattened (host side), or failure when a stride
/// is dynamic or the filter's (q, r, s, c) dimensions do not collapse.
FailureOr<KernelOperands> flattenOperands(OpBuilder &b, Location loc,
                                          const GridKernel &kernel);

/// Clones into the kernel (at `b`'s insertion point) the grid body's
/// computation of a grouped grid's operand views for group `group` (an
/// index), and maps each view of the tile ops to its clone in `views`.
/// Fails when a view depends on another induction variable of the grid or
/// on an op with side effects or regions.
LogicalResult cloneGroupViews(OpBuilder &b, const GridKernel &kernel,
                              Value group, IRMapping &views);

/// flattenOperands of the group views cloned by cloneGroupViews (`views`).
FailureOr<KernelOperands> flattenOperands(OpBuilder &b, Location loc,
                                          const GridKernel &kernel,
                                          const IRMapping &views);

/// The largest power of two up to 8 dividing the offset and every stride
/// but the innermost of `memref` (1 when one is dynamic; 8 for null). A
/// dynamic offset of a memref.subview (a group's view) counts with what is
/// known of its offsets: multiples of constants (group * C/G).
int64_t elementAlignment(Value memref);
/// Whether the NDHWC `memref`'s voxels are further apart than its channels
/// (a view of some of each voxel's channels: a group's).
bool isChannelSlice(Value memref);
/// The alignment (elements, up to 8) every operand of `kernel`'s epilogue
/// has: its output, residual and bias.
int64_t epilogueAlignmentOf(const GridKernel &kernel);

/// Whether every flat index of `ops` (and M*K, the largest intermediate of
/// the decompositions, with `tileM`/`tileK` of slack) fits in 31 bits.
bool fitsI32Indices(const KernelOperands &ops, const ConvGeometry &g,
                    int64_t tileM, int64_t tileK);

/// The K steps of one block: how many, and the K range of step t.
struct KSchedule {
  Value numSteps;
  std::function<std::pair<Value, Value>(Value)> range; // t -> (k0, kLimit)
};

/// The K steps of the block at `m0` with flat K tiles of `tileK`: a contiguous
/// range of steps for split-K (`splitIndex` of `splitK`), or the steps of
/// the depth slices the tile reads outside the halo (qslice_outer).
KSchedule buildKSchedule(KernelMath math, const ConvGeometry &g, Value m0,
                         int64_t tileM, int64_t tileK, KOrder kOrder,
                         int64_t splitK, Value splitIndex);

/// The range [begin, end) of steps of `stepsPerSlice` K steps per depth slice
/// (qslice_outer: the slices the tile reads outside the halo) or of
/// `totalSteps` split `splitK` ways (taps_outer), as step indices.
std::pair<Value, Value> buildStepRange(KernelMath math, const ConvGeometry &g,
                                       Value m0, int64_t tileM,
                                       int64_t stepsPerSlice,
                                       int64_t totalSteps, KOrder kOrder,
                                       int64_t splitK, Value splitIndex);

/// The epilogue's view of a block: an f32 tile of tileM x tileN accumulators
/// staged in shared memory (row stride `stagingStride`), written out by
/// `threads` threads (this one is `tid` among them) with `outputVector`
/// elements per access.
struct StagedTile {
  Value staging;
  int64_t stagingStride = 0;
  int64_t tileM = 0, tileN = 0;
  int64_t outputVector = 1;
  Value tid;
  int64_t threads = 0;
  Value m0, n0;
  /// The first row past the tile's own (null: M); rows from there on are
  /// not stored.
  Value rowEnd = {};
  /// StoreMode::partial: the tile's split-K index, its slab of the f32
  /// workspace (ops.output, S x N x Do x Ho x Wo x F).
  Value split = {};
};

/// Stores one pair of adjacent accumulators at (row, col) of the staging
/// tile (8-byte vector store).
void stageAccumulatorPair(KernelMath &math, const StagedTile &tile, Value row,
                          Value col, Value first, Value second);

/// The coalesced pass from the staging tile to the output: bias, residual
/// and the old output read, the epilogue applied (ScalarEmitters', as on
/// every target) and the result written, `outputVector` channels a thread;
/// or, for StoreMode::partial, the f32 partial sums written to the tile's
/// slab (`tile.split`) of the split-K workspace. The caller orders the
/// staging writes before it (a barrier).
void emitStagedEpilogue(KernelMath &math, const StagedTile &tile,
                        const ConvGeometry &geometry, const KernelOperands &ops,
                        StoreMode mode, Activation activation, Type outElem);

/// One stream-ordered gpu.launch of `blocks` x `threads` with `sharedBytes`
/// of dynamic shared memory (in clusters of `clusterSize` blocks along x
/// when it is over 1), its body built by `buildBody` (the terminator is
/// added), ordered after earlier GPU work and waited for by the host code
/// that follows.
gpu::LaunchOp createKernelLaunch(OpBuilder &b, Location loc,
                                 OpFoldResult blocks, int64_t threads,
                                 int64_t sharedBytes,
                                 function_ref<void(gpu::LaunchOp)> buildBody,
                                 int64_t clusterSize = 1);

/// The body of the target lowering passes: every grid loop under `root`
/// carrying a tile configuration, lowered by `lower` (which reports its own
/// errors).
LogicalResult lowerConfiguredGrids(
    Operation *root,
    function_ref<LogicalResult(RewriterBase &, scf::ForallOp)> lower);

} // namespace mlir::conv3d

#endif // CONV3D_LIB_CONVERSION_GPU_KERNELCOMMON_H
