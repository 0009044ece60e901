//===- LowerToSM90.cpp - conv3d-lower-to-sm90 -----------------------------===//
//
// Turns each implicit-GEMM grid loop whose configuration is for the sm90
// kernel into one gpu.launch of a warp-specialized kernel (grids configured
// for the sm80 kernel, the fallback conv3d-select-config chose, go to
// lowerGridToSM80):
//
//   host:  the input's rank-5 im2col TMA descriptor and the filter's tiled
//          one (conv3dTma*Descriptor, cached device copies); no launch if
//          either was refused (the run reports the driver's message)
//   setup: thread 0 initializes a full and an empty mbarrier per stage
//   warpgroup 0 (producer, setmaxnreg down): thread 0, for each K step t
//          (one filter tap x 64 channels):
//            wait empty[t % S] (the consumers released step t - S)
//            expect the step's bytes on full[t % S]
//            TMA im2col: tile_m output positions x 64 channels of the tap
//            TMA tile:   tile_n filters x 64 channels of the tap
//   warpgroups 1..G (consumers, setmaxnreg up), for each step t:
//            wait full[t % S]; wgmma m64nNk16 x 4 over the stage;
//            commit; wait for step t-1's wgmmas; release empty[(t-1) % S]
//   epilogue (consumers): accumulators -> f32 staging tile (its own shared
//          memory: the producer is already loading the next tile) -> the
//          shared staged epilogue; or, for an overwritten dense 16-bit
//          output without residual and N tiles of whole 64-column boxes,
//          the epilogue applied in registers -> a 16-bit swizzled staging
//          tile -> TMA stores of the output's third descriptor, issued by
//          one thread while the consumers go on with the next tile
// The kernel is persistent: min(multiprocessors, tiles) blocks walk the
// tiles, the ring's position carried across them. Cooperative: both
// consumer warpgroups split every tile's rows. Ping-pong: each owns every
// other tile, their mainloops alternating (order barriers), so one's
// epilogue overlaps the other's wgmmas.
//
// The K steps are (tap, channel block) pairs with q outermost, so split-K
// ranges and the active depth slices of qslice_outer are contiguous step
// ranges (buildStepRange). Channels past C in the last block are TMA's
// out-of-bounds zeros on both operands.
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Conversion/SM90/SM90KernelPlan.h"
#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOSM90
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// CUtensorMapDataType and CUtensorMapSwizzle values.
constexpr int64_t kTmaFloat16 = 6, kTmaBFloat16 = 9, kTmaSwizzle64B = 2,
                  kTmaSwizzle128B = 3;

constexpr StringLiteral kIm2colDescriptorFn = "conv3dTmaIm2colDescriptor";
constexpr StringLiteral kTiledDescriptorFn = "conv3dTmaTiledDescriptor";
constexpr StringLiteral kSMCountFn = "conv3dMultiprocessorCount";

/// Declares `name` as an external function of `module` (i64 arguments and
/// result; the runtime's wrappers) unless it exists.
func::FuncOp declareDescriptorFunction(ModuleOp module, StringRef name,
                                       int64_t numArgs) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = b.getI64Type();
  auto fn = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType(SmallVector<Type>(numArgs, i64), {i64}));
  fn.setPrivate();
  return fn;
}

/// The device address of a memref's first element (its offset applied), as
/// i64.
Value baseAddress(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  int64_t bytes =
      getElementTypeOrSelf(memref.getType()).getIntOrFloatBitWidth() / 8;
  Value offset = arith::MulIOp::create(
      b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value address = arith::AddIOp::create(b, loc, base, offset);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

/// Whether the output can take the TMA-store epilogue: a tile overwritten
/// with no residual to read (no accumulate, no split-K partial sums), in a
/// 16-bit type, whose (n, d, h, w) dimensions collapse into one of 16-byte
/// rows: the dense [M][F] matrix a tiled descriptor describes.
bool outputTakesTmaStore(const GridKernel &kernel) {
  StoreOutputTileOp store = kernel.store;
  if (store.getMode() != StoreMode::overwrite || store.getResidual())
    return false;
  Value output = store.getOutput();
  auto type = cast<MemRefType>(output.getType());
  Type elem = type.getElementType();
  SmallVector<int64_t> strides;
  int64_t offset;
  if ((!elem.isBF16() && !elem.isF16()) || type.getRank() != 5 ||
      !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || strides[4] != 1)
    return false;
  for (int64_t d = 0; d < 3; ++d)
    if (strides[d] != strides[d + 1] * type.getDimSize(d + 1))
      return false;
  return strides[3] % 8 == 0 && elementAlignment(output) >= 8;
}

} // namespace

LogicalResult mlir::conv3d::lowerGridToSM90(RewriterBase &rewriter,
                                            scf::ForallOp grid) {
  FailureOr<GridKernel> found = analyzeGrid(grid);
  if (failed(found))
    return grid.emitError("conv3d-lower-to-sm90: not an implicit-GEMM grid "
                          "loop produced by conv3d-implicit-gemm");
  GridKernel &kernel = *found;
  IGemmConfigAttr config = kernel.config;
  // conv3d-select-config gave convolutions the sm90 kernel cannot take an
  // sm80 configuration.
  if (config.getKernel() == Target::sm80)
    return lowerGridToSM80(rewriter, grid);
  if (config.getKernel() == Target::sm100)
    return grid.emitError()
           << "conv3d-lower-to-sm90: " << config << " is for the sm100 kernel";
  if (failed(checkGpuOperands(kernel, "sm90")))
    return failure();
  ConvGeometry g = kernel.geometry();
  Type inElem = kernel.inputElementType();
  Location loc = grid.getLoc();
  bool quantizes = kernel.im2col.getQuant().has_value();
  Value input = kernel.im2col.getInput(),
        filter = kernel.filterLoad.getFilter();
  std::optional<std::string> problem =
      getSM90KernelProblem(g, kernel.filterLayout(), inElem, quantizes);
  // TMA reads from 16-byte-aligned addresses with 16-byte strides.
  if (!problem && (elementAlignment(input) < 8 || elementAlignment(filter) < 8))
    problem = "TMA needs the input's and the filter's offsets and strides "
              "in multiples of 16 bytes";
  if (problem)
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;

  int64_t epilogueAlignment =
      std::min({elementAlignment(kernel.store.getOutput()),
                elementAlignment(kernel.store.getResidual()),
                elementAlignment(kernel.store.getBias())});
  SM90KernelPlan plan;
  if (std::optional<std::string> problem = SM90KernelPlan::build(
          g, config.getTileM(), config.getTileN(), config.getTileK(),
          config.getStages(), config.getWarpsM(), config.getWarpsN(),
          config.getKOrder(), config.getSplitK(), epilogueAlignment, plan,
          config.getSchedule(), outputTakesTmaStore(kernel)))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << *problem;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  FailureOr<KernelOperands> flat = flattenOperands(rewriter, loc, kernel);
  if (failed(flat))
    return grid.emitError("sm90 needs operands with static strides");
  KernelOperands &ops = *flat;
  bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, kChannelBlock);

  int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  int64_t numTiles = numMT * numNT * plan.splitK;
  // Tile indices and rows are i32 in the kernel.
  if (numTiles >= (int64_t(1) << 31) ||
      g.gemmM() + plan.tileM >= (int64_t(1) << 31))
    return grid.emitError()
           << "cannot lower " << config << " to the sm90 kernel: " << numTiles
           << " tiles or M = " << g.gemmM() << " do not fit 31 bits";

  // Host: the two descriptors (device copies, cached by the runtime).
  ModuleOp module = grid->getParentOfType<ModuleOp>();
  if (!module)
    return grid.emitError("conv3d-lower-to-sm90 needs an enclosing module "
                          "(for the descriptor functions)");
  func::FuncOp im2colFn =
      declareDescriptorFunction(module, kIm2colDescriptorFn, 23);
  func::FuncOp tiledFn =
      declareDescriptorFunction(module, kTiledDescriptorFn, 11);
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), v)
        .getResult();
  };
  int64_t dataType = inElem.isBF16() ? kTmaBFloat16 : kTmaFloat16;
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  SmallVector<Value> im2colArgs = {baseAddress(rewriter, loc, input),
                                   i64(dataType),
                                   i64(g.batch),
                                   i64(g.inputSize[0]),
                                   i64(g.inputSize[1]),
                                   i64(g.inputSize[2]),
                                   i64(g.channels),
                                   i64(ops.input.strides[0]),
                                   i64(ops.input.strides[1]),
                                   i64(ops.input.strides[2]),
                                   i64(ops.input.strides[3]),
                                   i64(lower[0]),
                                   i64(lower[1]),
                                   i64(lower[2]),
                                   i64(upper[0]),
                                   i64(upper[1]),
                                   i64(upper[2]),
                                   i64(g.strides[0]),
                                   i64(g.strides[1]),
                                   i64(g.strides[2]),
                                   i64(kChannelBlock),
                                   i64(plan.tileM),
                                   i64(kTmaSwizzle128B)};
  Value descA =
      func::CallOp::create(rewriter, loc, im2colFn, im2colArgs).getResult(0);
  // The FQRSC filter as an [F][Q*R*S][C] tensor (its (q, r, s, c)
  // dimensions collapse: flattenOperands checked it); a box is tile_n
  // filters x one tap x 64 channels.
  SmallVector<Value> tiledArgs = {baseAddress(rewriter, loc, filter),
                                  i64(dataType),
                                  i64(g.channels),
                                  i64(plan.taps),
                                  i64(g.filters),
                                  i64(g.channels * ops.filter.strides[0]),
                                  i64(ops.filter.strides[1]),
                                  i64(kChannelBlock),
                                  i64(1),
                                  i64(plan.tileN),
                                  i64(kTmaSwizzle128B)};
  Value descB =
      func::CallOp::create(rewriter, loc, tiledFn, tiledArgs).getResult(0);
  // The TMA-store epilogue's output: the [M][F] matrix (a third dimension
  // of 1), stored in boxes of tile_m rows x 64 channels (128-byte swizzle)
  // or 32 (64-byte swizzle).
  Value descC;
  if (plan.tmaStore) {
    Value output = kernel.store.getOutput();
    Type outElem = kernel.outputElementType();
    int64_t rowStride = ops.output.strides[3];
    SmallVector<Value> outputArgs = {
        baseAddress(rewriter, loc, output),
        i64(outElem.isBF16() ? kTmaBFloat16 : kTmaFloat16),
        i64(g.filters),
        i64(g.gemmM()),
        i64(1),
        i64(rowStride),
        i64(g.gemmM() * rowStride),
        i64(plan.storeBoxColumns),
        i64(plan.tileM),
        i64(1),
        i64(plan.storeBoxColumns == kChannelBlock ? kTmaSwizzle128B
                                                  : kTmaSwizzle64B)};
    descC =
        func::CallOp::create(rewriter, loc, tiledFn, outputArgs).getResult(0);
  }
  Value zero = i64(0);
  auto isSet = [&](Value descriptor) {
    return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                 descriptor, zero)
        .getResult();
  };
  Value aSet = isSet(descA), bSet = isSet(descB);
  Value ready = arith::AndIOp::create(rewriter, loc, aSet, bSet);
  if (descC)
    ready = arith::AndIOp::create(rewriter, loc, ready, isSet(descC));
  auto launchIf = scf::IfOp::create(rewriter, loc, ready, false);
  rewriter.setInsertionPointToStart(launchIf.thenBlock());

  // Persistent: one block per multiprocessor (the device's count, from the
  // runtime), or one per tile when there are fewer.
  func::FuncOp smCountFn = declareDescriptorFunction(module, kSMCountFn, 0);
  Value smCount = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      func::CallOp::create(rewriter, loc, smCountFn, ValueRange{})
          .getResult(0));
  Value blocks = arith::MinUIOp::create(
      rewriter, loc, smCount,
      arith::ConstantIndexOp::create(rewriter, loc, numTiles));
  createKernelLaunch(rewriter, loc, blocks, plan.threads, plan.sharedBytes,
                     [&](gpu::LaunchOp launch) {
                       Type indexType = narrowIndices
                                            ? Type(rewriter.getI32Type())
                                            : Type(rewriter.getIndexType());
                       SM90Kernel k{rewriter,
                                    loc,
                                    plan,
                                    g,
                                    inElem,
                                    kernel.outputElementType(),
                                    ops,
                                    kernel.store.getMode(),
                                    kernel.store.getActivation(),
                                    indexType};
                       k.descA = descA;
                       k.descB = descB;
                       k.descC = descC;
                       k.numMT = numMT;
                       k.numNT = numNT;
                       k.numTiles = numTiles;
                       buildSM90Kernel(k, launch);
                     });
  rewriter.eraseOp(grid);
  return success();
}

namespace {
struct LowerToSM90Pass
    : mlir::conv3d::impl::Conv3dLowerToSM90Base<LowerToSM90Pass> {
  void runOnOperation() override {
    if (failed(lowerConfiguredGrids(getOperation(), lowerGridToSM90)))
      signalPassFailure();
  }
};
} // namespace
