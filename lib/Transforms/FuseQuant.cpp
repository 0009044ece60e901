//===- FuseQuant.cpp - conv3d-fuse-quant ----------------------------------===//
//
// NVFP4 quantization of a convolution's input can run in two places:
//
// - tile: inside the im2col tile load. No extra memory traffic, but every
//   element is quantized once per (filter tap that reads it) x (N tile):
//   M*K im2col elements per N tile, i.e. about Q*R*S*ceil(F/tile_n) times
//   per input element.
// - prepass: a separate conv3d.quantize over the input, once per element,
//   for one extra read and write of the input.
//
// The two compute the same values exactly when C is a multiple of the block
// size (each K block is then one voxel's channel group); otherwise blocks
// straddle filter taps and only the tile placement has the spec's semantics.
//
// Cost model, in seconds, with rates measured on an H100 with the sm80
// kernels (bench/RESULTS.md, `run_bench.py --nvfp4`):
//   tile    = ceil(F / tile_n) * M * K / kTileRate
//   prepass = inputElements * (bytesPerElement / 2) / kPrepassRate
//             + kLaunchSeconds (GPU targets: one more kernel)
// kTileRate is the extra throughput of quantizing inside the tile load (in
// shared memory after cp.async) over the plain bf16 kernel: 0.7-1.1 T
// quantized elements per second (4.3 ms more for the 4.5e9 of wan_mid_full,
// 0.19 ms for the 1.5e8 of pointwise_384); the quantization's arithmetic
// bounds it. kPrepassRate is that of the prepass kernel of
// conv3d-quantize-to-loops on bf16, which runs at the memory bandwidth (one
// 2-byte read and write per element at about 3 TB/s: 67 us for the 5e7
// elements of pointwise_384). The choice thus follows the repetition factor
// Q*R*S*ceil(F/tile_n)*(output/input voxels): above about 1.3 (a 3x3x3
// convolution, a strided or multi-N-tile 1x1x1 one) the prepass wins; small
// tensors, where the launch dominates, take the tile.
//
// On the TMA targets the placement decides the kernel too. sm90's kernel
// quantizes in its tiles where a block lies inside one K step (16, 32 or 64
// channels, C a multiple of it): its consumer warpgroups quantize each
// landed stage in place while the tensor cores run the previous step's
// wgmmas. kSM90TileRate is an estimate, not yet a measurement: about 14
// instructions per element (the PTX of TileQuantization.cpp has ~20 before
// ptxas folds abs/neg/copysign), one warp instruction per cycle on each of
// a multiprocessor's 4 schedulers, 132 multiprocessors at ~1.75 GHz: ~2e12
// elements/s if nothing overlapped; the overlap with the wgmmas hides part
// of it, the shared-memory latency and the warpgroup barrier add some. Where
// the TMA kernel takes the convolution but not its tile quantization (sm100;
// sm90 with blocks of 128 or 256), the tile placement would move it to the
// sm80 kernel: the prepass. Where the TMA kernel cannot take it at all, the
// sm80 kernel runs it either way and its rates decide.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "EmptyLike.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DFUSEQUANT
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

static constexpr double kTileRate = 1.0e12;
static constexpr double kSM90TileRate = 2.0e12;
static constexpr double kPrepassRate = 750e9;
static constexpr double kLaunchSeconds = 5e-6;

/// Whether quantizing the NDHWC input along C equals the conv's K-block
/// quantization.
static bool prepassIsEquivalent(const ConvGeometry &g, int64_t blockSize) {
  return g.channels % blockSize == 0;
}

/// The cheaper placement of quantization with `blockSize` for a convolution
/// of geometry `g` on `target`, under `config` (the conv's, or when null
/// the heuristic's for the kernel that runs it).
static QuantPlacement costModel(const ConvGeometry &g, int64_t blockSize,
                                IGemmConfigAttr config, Type elemType,
                                Target target, MLIRContext *context) {
  if (!prepassIsEquivalent(g, blockSize) || !g.hasStaticShape())
    return QuantPlacement::Tile;
  double tileRate = kTileRate;
  // The problem as the target's kernels would see it; the filter is
  // assumed K-major (conv3d-relayout-filter makes it so where that is all
  // the TMA kernels lack).
  ConvProblem problem;
  problem.geometry = g;
  problem.filterLayout = FilterLayout::fqrsc;
  problem.inputType = elemType;
  problem.quantBlockSize = blockSize;
  const KernelFamily *kernel = &getDefaultKernelFamily(target);
  if (target == Target::sm90 || target == Target::sm100) {
    // The kernel each placement runs on (see the top of the file); a
    // convolution configured for the sm80 kernel stays there.
    bool sm80Config = config && config.getKernel() == Target::sm80;
    auto tmaKernelTakes = [&](bool quantizesInTile) {
      ConvProblem placed = problem;
      placed.quantizesInTile = quantizesInTile;
      return !sm80Config && !kernel->canImplement(placed);
    };
    if (tmaKernelTakes(/*quantizesInTile=*/true))
      tileRate = kSM90TileRate;
    else if (tmaKernelTakes(/*quantizesInTile=*/false))
      return QuantPlacement::Prepass;
    else
      kernel = &getDefaultKernelFamily(Target::sm80);
  }
  if (!config)
    config = heuristicConfig(context, *kernel, problem, target);
  double nTiles = double(ceilDiv(g.gemmN(), config.getTileN()));
  double tileCost = nTiles * double(g.gemmM()) * double(g.gemmK()) / tileRate;
  double inputElements = double(g.batch) * g.inputSize[0] * g.inputSize[1] *
                         g.inputSize[2] * g.channels;
  double bytes = elemType.getIntOrFloatBitWidth() / 8.0;
  double prepassCost = inputElements * (bytes / 2) / kPrepassRate +
                       (target == Target::cpu ? 0.0 : kLaunchSeconds);
  return prepassCost < tileCost ? QuantPlacement::Prepass
                                : QuantPlacement::Tile;
}

/// The placement of quantization with `blockSize` for a convolution of
/// geometry `g` and input type `elemType`: `requested` unless it is Auto,
/// else the cost model under `config` (the conv's, or null).
static QuantPlacement decidePlacement(QuantPlacement requested,
                                      const ConvGeometry &g, int64_t blockSize,
                                      IGemmConfigAttr config, Type elemType,
                                      Target target, MLIRContext *context) {
  if (requested != QuantPlacement::Auto)
    return requested;
  if (!g.hasStaticShape())
    return QuantPlacement::Tile;
  return costModel(g, blockSize, config, elemType, target, context);
}

QuantPlacement mlir::conv3d::chooseQuantPlacement(ConvOp conv, Target target) {
  std::optional<NVFP4Attr> quant = conv.getInputQuant();
  if (!quant)
    return QuantPlacement::Tile;
  return decidePlacement(QuantPlacement::Auto, conv.getGeometry(),
                         quant->getBlockSize(),
                         conv.getConfig().value_or(IGemmConfigAttr()),
                         getElementTypeOrSelf(conv.getInput().getType()),
                         target, conv.getContext());
}

namespace {

/// quantize(x) -> conv  ==>  conv(x) with `quantize(...)`, where equivalent
/// and the placement is the tile.
struct FoldQuantizeIntoConv : OpRewritePattern<ConvOp> {
  FoldQuantizeIntoConv(MLIRContext *context, QuantPlacement placement,
                       Target target)
      : OpRewritePattern(context), placement(placement), target(target) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics() || conv.getInputQuant())
      return failure();
    // A prologue transforms the input before the quantization could; the
    // history frames were not quantized by the producer of the input.
    if (conv.hasHistoryOrPrologue())
      return rewriter.notifyMatchFailure(
          conv, "the conv has a history operand or an input prologue");
    auto quantize = conv.getInput().getDefiningOp<QuantizeOp>();
    if (!quantize || !quantize.hasTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "input is not quantized");
    if (quantize.getBlockAxes() != ArrayRef<int64_t>{4})
      return rewriter.notifyMatchFailure(conv, "blocks not along channels");
    int64_t blockSize = quantize.getFormat().getBlockSize();
    if (!prepassIsEquivalent(conv.getGeometry(), blockSize))
      return rewriter.notifyMatchFailure(
          conv, "C is not a multiple of the block size: channel blocks "
                "differ from the conv's K blocks");
    // A configuration on the op must be able to quantize whole blocks.
    if (std::optional<IGemmConfigAttr> config = conv.getConfig())
      if (checkConfigForConv(*config, conv.getGeometry(), blockSize))
        return rewriter.notifyMatchFailure(
            conv, "the conv's tile configuration cannot hold NVFP4 blocks");
    // Fold only where the folded conv keeps its quantization in the tile;
    // otherwise the prepass pattern would undo the fold.
    QuantPlacement decided =
        decidePlacement(placement, conv.getGeometry(), blockSize,
                        conv.getConfig().value_or(IGemmConfigAttr()),
                        getElementTypeOrSelf(quantize.getInput().getType()),
                        target, getContext());
    if (decided != QuantPlacement::Tile)
      return rewriter.notifyMatchFailure(conv, "placement is the prepass");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(quantize.getInput());
      conv.getAmaxMutable().assign(quantize.getAmax());
      conv.setInputQuantAttr(quantize.getFormat());
    });
    return success();
  }

  QuantPlacement placement;
  Target target;
};

/// conv with `quantize(...)` placed in a prepass  ==>  quantize(x) -> conv.
struct MoveQuantizeToPrepass : OpRewritePattern<ConvOp> {
  MoveQuantizeToPrepass(MLIRContext *context, QuantPlacement placement,
                        Target target,
                        std::function<void(ConvOp, StringRef)> onImpossible)
      : OpRewritePattern(context), placement(placement), target(target),
        onImpossible(std::move(onImpossible)) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    std::optional<NVFP4Attr> quant = conv.getInputQuant();
    if (!conv.hasTensorSemantics() || !quant)
      return failure();
    QuantPlacement decided = decidePlacement(
        placement, conv.getGeometry(), quant->getBlockSize(),
        conv.getConfig().value_or(IGemmConfigAttr()),
        getElementTypeOrSelf(conv.getInput().getType()), target, getContext());
    if (decided != QuantPlacement::Prepass)
      return rewriter.notifyMatchFailure(conv, "tile placement");
    ConvGeometry g = conv.getGeometry();
    if (!prepassIsEquivalent(g, quant->getBlockSize())) {
      if (onImpossible)
        onImpossible(conv, "prepass placement needs C to be a multiple of "
                           "the NVFP4 block size (C = " +
                               std::to_string(g.channels) + ", block size " +
                               std::to_string(quant->getBlockSize()) +
                               "): otherwise blocks straddle filter taps");
      return failure();
    }
    Location loc = conv.getLoc();
    Value input = conv.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Value empty = createEmptyLike(rewriter, loc, input);
    auto quantize = QuantizeOp::create(rewriter, loc, TypeRange{inputType},
                                       input, conv.getAmax(), empty, *quant,
                                       rewriter.getDenseI64ArrayAttr({4}));
    // Blocks are channel blocks of one voxel here, so the history frames
    // quantize on their own exactly as inside the concatenation.
    Value quantizedHistory;
    if (Value history = conv.getHistory()) {
      auto historyType = cast<RankedTensorType>(history.getType());
      Value historyEmpty = createEmptyLike(rewriter, loc, history);
      quantizedHistory =
          QuantizeOp::create(rewriter, loc, TypeRange{historyType}, history,
                             conv.getAmax(), historyEmpty, *quant,
                             rewriter.getDenseI64ArrayAttr({4}))
              .getResult()[0];
    }
    rewriter.modifyOpInPlace(conv, [&] {
      if (quantizedHistory)
        conv.getHistoryMutable().assign(quantizedHistory);
      conv.getInputMutable().assign(quantize.getResult()[0]);
      conv.getAmaxMutable().clear();
      conv.removeInputQuantAttr();
    });
    return success();
  }

  QuantPlacement placement;
  Target target;
  std::function<void(ConvOp, StringRef)> onImpossible;
};

struct FuseQuantPass : mlir::conv3d::impl::Conv3dFuseQuantBase<FuseQuantPass> {
  using Base::Base;

  void runOnOperation() override {
    // Patterns may revisit an op; report each impossible one once.
    llvm::SmallPtrSet<Operation *, 4> reported;
    RewritePatternSet patterns(&getContext());
    populateFuseQuantPatterns(patterns, placement, target,
                              [&](ConvOp conv, StringRef reason) {
                                if (reported.insert(conv).second)
                                  conv.emitError() << reason;
                              });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))) ||
        !reported.empty())
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateFuseQuantPatterns(
    RewritePatternSet &patterns, QuantPlacement placement, Target target,
    std::function<void(ConvOp, StringRef)> onImpossible) {
  patterns.add<FoldQuantizeIntoConv>(patterns.getContext(), placement, target);
  patterns.add<MoveQuantizeToPrepass>(patterns.getContext(), placement, target,
                                      std::move(onImpossible));
}
