//===- ImplicitGemm.cpp - conv3d-implicit-gemm ----------------------------===//
//
// A memref convolution becomes the tile-level loop nest every target shares:
//
//   scf.forall (%tm, %tn) in (ceil(M/TM), ceil(F/TN)) {   // grid
//     fill %acc (TM x TN, f32) with 0
//     scf.for %kt ... {                                     // K loop
//       conv3d.load_im2col_tile %in[%m0, %k0] ... into %a  // TM x TK
//       conv3d.load_filter_tile %w[%k0, %n0] ... into %b   // TK x TN
//       conv3d.tile_mma %a, %b, %acc
//     }
//     conv3d.store_output_tile %acc into %out[%m0, %n0] ...
//   } {conv3d.igemm_config = #conv3d.igemm_config<...>}
//
// With k_order = qslice_outer the K loop is one loop per depth slice q, each
// guarded by whether any row of the M tile reads a non-halo input depth for
// that slice (slices that can never contribute are not emitted at all).
// With split_k > 1 the grid gains a split dimension; each split stores its
// partial sums into its own slab of an f32 workspace (S x N x Do x Ho x Wo x
// F, no zeroing: every element is written once) and one conv3d.epilogue
// adds the slabs in split order and applies the epilogue. No atomics: the
// result is the same bits run to run (issue 21).
// A grouped convolution (groups G > 1) gains a group dimension in the grid:
// each iteration works on views of its group's channels of the input (and
// history, and prologue vectors), its filters, bias, residual and output
// columns, which are dense convolutions of C/G channels and F/G filters.
// With an RMS norm in the input prologue, a conv3d.voxel_rms_scale prepass
// before the grid computes each voxel's statistic once (one read of the
// input, one float per voxel); the tile loads read it as `norm_scale`.
//
// The tile buffers are plain allocations here: the CPU lowering computes on
// them, the GPU lowerings replace them with shared memory and registers.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"
#include "conv3d/Transforms/TileSchedule.h"

#include "conv3d/IR/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DIMPLICITGEMM
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// The operands one grid iteration reads and writes: the convolution's own,
/// or for a grouped convolution, views of one group's channels and filters.
struct TileOperands {
  Value input, history, filter, gamma, beta, bias, residual, dest;
};

/// A view of `source` holding [offset, offset + size) along `dim` (all of
/// every other dimension).
Value sliceDim(OpBuilder &b, Location loc, Value source, int64_t dim,
               Value offset, int64_t size) {
  if (!source)
    return source;
  auto type = cast<MemRefType>(source.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  offsets[dim] = offset;
  sizes[dim] = b.getIndexAttr(size);
  return memref::SubViewOp::create(b, loc, source, offsets, sizes, strides);
}

/// The operands of group `group` of a grouped convolution: its C/G input
/// channels and F/G filters; `dest` is the output or the split-K workspace
/// (F last in both).
TileOperands groupOperands(OpBuilder &b, Location loc, ConvOp conv, Value dest,
                           Value group) {
  ConvGeometry g = conv.getGeometry();
  int64_t cg = g.channelsPerGroup(), fg = g.filtersPerGroup();
  IRIndexMath math{b, loc};
  Value c0 = math.mul(group, cg), f0 = math.mul(group, fg);
  int64_t filterDim = conv.getFilterLayout() == FilterLayout::qrscf ? 4 : 0;
  int64_t destRank = cast<MemRefType>(dest.getType()).getRank();
  return {sliceDim(b, loc, conv.getInput(), 4, c0, cg),
          sliceDim(b, loc, conv.getHistory(), 4, c0, cg),
          sliceDim(b, loc, conv.getFilter(), filterDim, f0, fg),
          sliceDim(b, loc, conv.getNormGamma(), 0, c0, cg),
          sliceDim(b, loc, conv.getNormBeta(), 0, c0, cg),
          sliceDim(b, loc, conv.getBias(), 0, f0, fg),
          sliceDim(b, loc, conv.getResidual(), 4, f0, fg),
          sliceDim(b, loc, dest, destRank - 1, f0, fg)};
}

/// Builds the body of one grid iteration.
class TileKernelBuilder {
public:
  TileKernelBuilder(OpBuilder &b, Location loc, ConvOp conv,
                    IGemmConfigAttr config, Value normScale,
                    TileOperands operands)
      : b(b), loc(loc), conv(conv), config(config), normScale(normScale),
        operands(operands), geometry(conv.getGeometry()) {}

  /// Emits the K loop(s) accumulating into `acc`, for K tiles
  /// [ktBegin, ktEnd) of the flat order (taps_outer only).
  void emitKLoop(Value m0, Value n0, Value a, Value bTile, Value acc,
                 Value ktBegin, Value ktEnd) {
    Value kLimit = index(geometry.gemmK());
    auto loop = scf::ForOp::create(b, loc, ktBegin, ktEnd, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 =
        IRIndexMath{b, loc}.mul(loop.getInductionVar(), config.getTileK());
    emitKStep(m0, n0, k0, kLimit, a, bTile, acc);
  }

  /// Emits one guarded K loop per depth slice (qslice_outer).
  void emitSliceLoops(Value m0, Value n0, Value a, Value bTile, Value acc) {
    int64_t sliceK = geometry.gemmK() / geometry.window[kDepth];
    int64_t numKT = ceilDiv(sliceK, config.getTileK());
    bool anySlice = false;
    for (int64_t q = 0; q < geometry.window[kDepth]; ++q) {
      auto [lo, hi] = geometry.validOutputRange(kDepth, q);
      anySlice |= lo != hi;
    }
    if (!anySlice) {
      // Every tap reads only padding (the result is the epilogue of zero);
      // keep the one flat K loop so the kernel still has its tile ops.
      emitKLoop(m0, n0, a, bTile, acc, index(0),
                index(ceilDiv(geometry.gemmK(), config.getTileK())));
      return;
    }
    for (int64_t q = 0; q < geometry.window[kDepth]; ++q) {
      auto [lo, hi] = geometry.validOutputRange(kDepth, q);
      if (lo == hi)
        continue; // this slice reads only padding
      Value active = emitTileReadsDepthRange(b, loc, geometry,
                                             config.getTileM(), m0, lo, hi);
      auto guard = scf::IfOp::create(b, loc, active, /*withElse=*/false);
      OpBuilder::InsertionGuard insertionGuard(b);
      b.setInsertionPointToStart(guard.thenBlock());
      auto loop = scf::ForOp::create(b, loc, index(0), index(numKT), index(1));
      b.setInsertionPointToStart(loop.getBody());
      IRIndexMath math{b, loc};
      Value k0 = math.add(math.mul(loop.getInductionVar(), config.getTileK()),
                          index(q * sliceK));
      emitKStep(m0, n0, k0, index((q + 1) * sliceK), a, bTile, acc);
    }
  }

  Value index(int64_t value) { return IRIndexMath{b, loc}.constant(value); }

private:
  void emitKStep(Value m0, Value n0, Value k0, Value kLimit, Value a,
                 Value bTile, Value acc) {
    const ConvGeometry &g = geometry;
    std::optional<NVFP4Attr> quant = conv.getInputQuant();
    LoadIm2colTileOp::create(
        b, loc, operands.input, m0, k0, kLimit, a,
        quant ? conv.getAmax() : Value(), operands.history, operands.gamma,
        operands.beta, normScale, b.getDenseI64ArrayAttr(g.window),
        b.getDenseI64ArrayAttr(g.strides), b.getDenseI64ArrayAttr(g.dilations),
        b.getDenseI64ArrayAttr(g.padding()), quant ? *quant : NVFP4Attr(),
        conv.getNormEpsAttr(), conv.getInputActivationAttr());
    LoadFilterTileOp::create(b, loc, operands.filter, k0, n0, kLimit, bTile,
                             conv.getFilterLayoutAttr());
    TileMmaOp::create(b, loc, a, bTile, acc);
  }

  OpBuilder &b;
  Location loc;
  ConvOp conv;
  IGemmConfigAttr config;
  /// The per-voxel RMS norm statistic from the prepass (null without one).
  Value normScale;
  TileOperands operands;
  /// The geometry of one group (gemmK and gemmN are per group).
  ConvGeometry geometry;
};

/// The RMS norm prepass of a convolution with `rms_norm`: a buffer of the
/// input's voxels filled by conv3d.voxel_rms_scale, or null when there is no
/// norm or no input voxel to read.
Value emitNormScalePrepass(OpBuilder &b, Location loc, ConvOp conv) {
  auto inputType = cast<MemRefType>(conv.getInput().getType());
  if (!conv.getNormGamma() || inputType.getNumElements() == 0)
    return Value();
  Value scale = memref::AllocOp::create(
      b, loc,
      MemRefType::get(inputType.getShape().drop_back(), b.getF32Type()));
  VoxelRmsScaleOp::create(b, loc, conv.getInput(), scale,
                          conv.getNormEpsAttr());
  return scale;
}

} // namespace

FailureOr<scf::ForallOp>
mlir::conv3d::lowerConvToImplicitGemm(RewriterBase &rewriter, ConvOp conv,
                                      IGemmConfigAttr config) {
  if (conv.hasTensorSemantics())
    return rewriter.notifyMatchFailure(conv, "expected the memref form");
  if (conv.hasPackedFilter())
    return rewriter.notifyMatchFailure(conv, "a packed NVFP4 filter");
  ConvGeometry g = conv.getGeometry();
  auto outType = cast<MemRefType>(conv.getInit().getType());
  if (!g.hasStaticShape() || !outType.hasStaticShape())
    return rewriter.notifyMatchFailure(conv, "needs static shapes");
  std::optional<int64_t> blockSize;
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
    blockSize = quant->getBlockSize();
  if (checkConfigForConv(config, g, blockSize))
    return rewriter.notifyMatchFailure(conv, "config does not fit the conv");

  Location loc = conv.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(conv);
  Type inElem = getElementTypeOrSelf(conv.getInput().getType());
  Type f32 = rewriter.getF32Type();
  int64_t tileM = config.getTileM(), tileN = config.getTileN(),
          tileK = config.getTileK(), splitK = config.getSplitK();
  int64_t numKT = ceilDiv(g.gemmK(), tileK);
  splitK = std::min(splitK, numKT);

  // Split-K partial sums go to one slab each of an f32 workspace.
  Value dest = conv.getInit();
  StoreMode mode =
      conv.getOverwrite() ? StoreMode::overwrite : StoreMode::accumulate;
  Value workspace;
  if (splitK > 1) {
    SmallVector<int64_t> slabs = {splitK};
    llvm::append_range(slabs, outType.getShape());
    workspace =
        memref::AllocOp::create(rewriter, loc, MemRefType::get(slabs, f32));
    dest = workspace;
    mode = StoreMode::partial;
  }

  SmallVector<OpFoldResult> bounds;
  if (splitK > 1)
    bounds.push_back(rewriter.getIndexAttr(splitK));
  if (g.isGrouped())
    bounds.push_back(rewriter.getIndexAttr(g.gemmBatch()));
  bounds.push_back(rewriter.getIndexAttr(ceilDiv(g.gemmM(), tileM)));
  bounds.push_back(rewriter.getIndexAttr(ceilDiv(g.gemmN(), tileN)));
  auto grid = scf::ForallOp::create(rewriter, loc, bounds, ValueRange{},
                                    /*mapping=*/std::nullopt);
  // Record the split actually used (at most one per K tile).
  grid->setAttr(kIGemmConfigAttrName,
                IGemmConfigAttr::get(rewriter.getContext(), tileM, tileN, tileK,
                                     config.getStages(), config.getWarpsM(),
                                     config.getWarpsN(), config.getKOrder(),
                                     splitK, config.getKernel(),
                                     config.getSchedule(), config.getClusterM(),
                                     config.getMainloop()));

  rewriter.setInsertionPoint(grid);
  Value normScale = emitNormScalePrepass(rewriter, loc, conv);
  rewriter.setInsertionPointToStart(grid.getBody());
  SmallVector<Value> ivs = grid.getInductionVars();
  TileOperands operands{conv.getInput(),    conv.getHistory(),
                        conv.getFilter(),   conv.getNormGamma(),
                        conv.getNormBeta(), conv.getBias(),
                        conv.getResidual(), dest};
  if (g.isGrouped())
    operands =
        groupOperands(rewriter, loc, conv, dest, ivs[splitK > 1 ? 1 : 0]);
  TileKernelBuilder kernel(rewriter, loc, conv, config, normScale, operands);
  IRIndexMath math{rewriter, loc};
  Value m0 = math.mul(ivs[ivs.size() - 2], tileM);
  Value n0 = math.mul(ivs[ivs.size() - 1], tileN);
  Value a = memref::AllocOp::create(rewriter, loc,
                                    MemRefType::get({tileM, tileK}, inElem));
  Value bTile = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({tileK, tileN}, inElem));
  Value acc = memref::AllocOp::create(rewriter, loc,
                                      MemRefType::get({tileM, tileN}, f32));
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
  linalg::FillOp::create(rewriter, loc, zero, acc);

  if (config.getKOrder() == KOrder::qslice_outer) {
    kernel.emitSliceLoops(m0, n0, a, bTile, acc);
  } else if (splitK > 1) {
    // Split s takes K tiles [s * per, min((s + 1) * per, numKT)).
    int64_t per = ceilDiv(numKT, splitK);
    Value begin = math.mul(ivs[0], per);
    Value end = arith::MinUIOp::create(
        rewriter, loc, math.add(begin, kernel.index(per)), kernel.index(numKT));
    kernel.emitKLoop(m0, n0, a, bTile, acc, begin, end);
  } else {
    kernel.emitKLoop(m0, n0, a, bTile, acc, kernel.index(0),
                     kernel.index(numKT));
  }

  bool fusedEpilogue = splitK == 1;
  StoreOutputTileOp::create(
      rewriter, loc, acc, operands.dest, m0, n0,
      fusedEpilogue ? Value() : ivs[0], fusedEpilogue ? operands.bias : Value(),
      fusedEpilogue ? operands.residual : Value(),
      StoreModeAttr::get(rewriter.getContext(), mode),
      fusedEpilogue
          ? conv.getActivationAttr()
          : ActivationAttr::get(rewriter.getContext(), Activation::none));
  memref::DeallocOp::create(rewriter, loc, a);
  memref::DeallocOp::create(rewriter, loc, bTile);
  memref::DeallocOp::create(rewriter, loc, acc);

  if (normScale) {
    rewriter.setInsertionPointAfter(grid);
    memref::DeallocOp::create(rewriter, loc, normScale);
  }
  if (workspace) {
    rewriter.setInsertionPointAfter(grid);
    EpilogueOp::create(rewriter, loc, TypeRange{}, workspace, conv.getBias(),
                       conv.getResidual(), conv.getInit(),
                       conv.getActivationAttr(), conv.getOverwriteAttr());
    memref::DeallocOp::create(rewriter, loc, workspace);
  }
  rewriter.eraseOp(conv);
  return grid;
}

namespace {

/// Why the kernel that runs `config` on `target` cannot take `conv`'s
/// groups, or none. The sm80 lowering runs the group grid dimension this
/// pass emits (a block per group's tile, over the group's views); the TMA
/// kernels do not: a grouped convolution a family does not take is refused
/// here, with the family's reason, rather than computed as a dense one.
std::optional<std::string>
groupedKernelProblem(ConvOp conv, IGemmConfigAttr config, Target target) {
  if (target == Target::cpu || !conv.getGeometry().isGrouped())
    return std::nullopt;
  const KernelFamily *family = config ? getKernelFamilyFor(config, target)
                                      : &getDefaultKernelFamily(target);
  if (!family)
    return std::string("no kernel family of the target runs its "
                       "configuration");
  if (std::optional<std::string> why =
          family->canImplement(ConvProblem::fromConv(conv)))
    return "the " + family->getName().str() + " kernel cannot take it: " + *why;
  return std::nullopt;
}

/// Why a convolution with a packed NVFP4 filter gets no implicit-GEMM tiles
/// of the bf16/f16 tile ops.
constexpr llvm::StringLiteral kPackedFilterReason =
    "its filter is packed NVFP4 (filter_quant): conv3d-apply-nvfp4-mode "
    "unpacks it for nvfp4-mode=fake, and only the block-scaled sm100 kernel "
    "(nvfp4-mode=real, conv3d-lower-block-scaled-to-sm100) multiplies it "
    "packed";

struct ConvToImplicitGemm : OpRewritePattern<ConvOp> {
  ConvToImplicitGemm(MLIRContext *context, ImplicitGemmOptions options)
      : OpRewritePattern(context), options(std::move(options)) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (conv.hasTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "expected the memref form");
    if (options.shouldConvert && !options.shouldConvert(conv))
      return rewriter.notifyMatchFailure(conv, "excluded by the caller");
    if (conv.hasPackedFilter())
      return rewriter.notifyMatchFailure(conv, kPackedFilterReason);
    IGemmConfigAttr config = conv.getConfig().value_or(IGemmConfigAttr());
    if (!config && options.selectConfig)
      config = options.selectConfig(conv);
    if (!config) {
      if (!conv.getGeometry().hasStaticShape())
        return rewriter.notifyMatchFailure(conv, "needs static shapes");
      config = selectIGemmConfigForConv(conv, options.target);
    }
    if (std::optional<std::string> why =
            groupedKernelProblem(conv, config, options.target))
      return rewriter.notifyMatchFailure(conv, *why);
    if (failed(lowerConvToImplicitGemm(rewriter, conv, config)))
      return failure();
    return success();
  }

  ImplicitGemmOptions options;
};

struct ImplicitGemmPass
    : mlir::conv3d::impl::Conv3dImplicitGemmBase<ImplicitGemmPass> {
  using Base::Base;
  explicit ImplicitGemmPass(ImplicitGemmOptions options)
      : Base(Conv3dImplicitGemmOptions{options.target}),
        hooks(std::move(options)) {}

  void runOnOperation() override {
    ImplicitGemmOptions options = hooks;
    options.target = target;
    RewritePatternSet patterns(&getContext());
    populateImplicitGemmPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Say why any memref convolution is left.
    WalkResult result = getOperation()->walk([&](ConvOp conv) {
      if (conv.hasTensorSemantics()) {
        conv.emitError("conv3d-implicit-gemm works on the memref form; "
                       "bufferize first");
        return WalkResult::interrupt();
      }
      ConvGeometry g = conv.getGeometry();
      if (!g.hasStaticShape() ||
          !cast<ShapedType>(conv.getInit().getType()).hasStaticShape()) {
        conv.emitError("conv3d-implicit-gemm needs static shapes");
        return WalkResult::interrupt();
      }
      std::optional<int64_t> blockSize;
      if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
        blockSize = quant->getBlockSize();
      std::string reason = "unknown reason";
      if (hooks.shouldConvert && !hooks.shouldConvert(conv))
        reason = "the caller's hook excluded it";
      else if (conv.hasPackedFilter())
        reason = kPackedFilterReason;
      else if (std::optional<std::string> why = groupedKernelProblem(
                   conv, conv.getConfig().value_or(IGemmConfigAttr()), target))
        reason = *why;
      if (std::optional<IGemmConfigAttr> config = conv.getConfig())
        if (std::optional<std::string> problem =
                checkConfigForConv(*config, g, blockSize))
          reason = *problem;
      conv.emitError() << "conv3d-implicit-gemm cannot tile this "
                          "convolution: "
                       << reason;
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// The hooks of a host (createConv3dImplicitGemm); the target option wins.
  ImplicitGemmOptions hooks;
};

} // namespace

std::unique_ptr<Pass>
mlir::conv3d::createConv3dImplicitGemm(ImplicitGemmOptions options) {
  return std::make_unique<ImplicitGemmPass>(std::move(options));
}

void mlir::conv3d::populateImplicitGemmPatterns(
    RewritePatternSet &patterns, const ImplicitGemmOptions &options) {
  patterns.add<ConvToImplicitGemm>(patterns.getContext(), options);
}
