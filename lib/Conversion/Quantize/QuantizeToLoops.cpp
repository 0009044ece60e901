//===- QuantizeToLoops.cpp - conv3d-quantize-to-loops ---------------------===//
//
// The NVFP4 prepass quantizes an activation in blocks of channels. Its
// reference lowering (conv3d-to-linalg) is two linalg ops, a block-maximum
// reduction and an elementwise op that recomputes the block scale and
// delinearizes a 5-D index per element; mapped to a GPU that reads the
// tensor twice and spends most of its time on 64-bit index arithmetic. When
// the blocks are contiguous runs of the flat buffer, one loop over the
// blocks does it all in a single pass: each iteration loads its block with
// vector loads, computes the maximum and scale once, and stores the block.
//
//===----------------------------------------------------------------------===//

#include "FlatView.h"
#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DQUANTIZETOLOOPS
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

bool mlir::conv3d::hasContiguousQuantBlocks(QuantizeOp op) {
  auto type = cast<ShapedType>(op.getInput().getType());
  ArrayRef<int64_t> axes = op.getBlockAxes();
  if (axes.empty() || axes.back() != type.getRank() - 1)
    return false;
  int64_t length = 1;
  for (int64_t axis : axes) {
    if (type.isDynamicDim(axis))
      return false;
    length *= type.getDimSize(axis);
  }
  return length % op.getFormat().getBlockSize() == 0;
}

namespace {

/// The elements one vector access moves: 16 bytes' worth, at most the block.
int64_t elementsPerAccess(Type elementType, int64_t blockSize) {
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  return std::min<int64_t>(blockSize, std::max<int64_t>(1, 16 / bytes));
}

struct QuantizeToBlockLoop : OpRewritePattern<QuantizeOp> {
  QuantizeToBlockLoop(MLIRContext *context, int64_t alignment)
      : OpRewritePattern(context), alignment(alignment) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = dyn_cast<MemRefType>(op.getInput().getType());
    auto outType = dyn_cast<MemRefType>(op.getInit().getType());
    if (!inType || !outType)
      return rewriter.notifyMatchFailure(op, "tensor form");
    if (!hasContiguousQuantBlocks(op))
      return rewriter.notifyMatchFailure(op, "blocks are not contiguous");
    if (!inType.getLayout().isIdentity() || !outType.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "operands are not contiguous");

    Location loc = op.getLoc();
    int64_t blockSize = op.getFormat().getBlockSize();
    Type elementType = inType.getElementType();
    int64_t width = elementsPerAccess(elementType, blockSize);
    llvm::MaybeAlign align =
        alignment > 0 ? llvm::MaybeAlign(alignment) : llvm::MaybeAlign();

    // Flat views and the number of blocks.
    Value input = flatView(rewriter, loc, op.getInput());
    Value output = flatView(rewriter, loc, op.getInit());
    Value numElements = memref::DimOp::create(rewriter, loc, input, 0);
    Value block = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
    Value numBlocks = arith::DivUIOp::create(rewriter, loc, numElements, block);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value amax = op.getAmax();
    auto vectorType = VectorType::get({width}, elementType);

    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{numBlocks}, ValueRange{one},
        [&](OpBuilder &b, Location nl, ValueRange ivs) {
          Value base = arith::MulIOp::create(b, nl, ivs[0], block);
          auto offset = [&](int64_t chunk) -> Value {
            return arith::AddIOp::create(
                b, nl, base,
                arith::ConstantIndexOp::create(b, nl, chunk * width));
          };
          SmallVector<Value> elements;
          for (int64_t chunk = 0; chunk < blockSize / width; ++chunk) {
            Value vec = vector::LoadOp::create(b, nl, vectorType, input,
                                               ValueRange{offset(chunk)},
                                               /*nontemporal=*/false, align);
            for (int64_t i = 0; i < width; ++i)
              elements.push_back(vector::ExtractOp::create(b, nl, vec, i));
          }
          SmallVector<Value> quantized =
              emitNVFP4QuantizeBlock(b, nl, elements, amax, elementType);
          for (int64_t chunk = 0; chunk < blockSize / width; ++chunk) {
            Value vec = vector::FromElementsOp::create(
                b, nl, vectorType,
                ArrayRef<Value>(quantized).slice(chunk * width, width));
            vector::StoreOp::create(b, nl, vec, output,
                                    ValueRange{offset(chunk)},
                                    /*nontemporal=*/false, align);
          }
        });
    rewriter.eraseOp(op);
    return success();
  }

  int64_t alignment;
};

/// conv3d.prologue as one loop over the voxels: each iteration sums the
/// squares of its voxel's channels with vector loads (when there is a norm),
/// then loads them again (from cache), transforms them with the same
/// emitters as the convolution loaders and stores them.
///
/// With `lanes` > 1 (GPU pipelines: 32), the loop is (voxels) x (lanes),
/// lanes innermost, so that once conv3d-lower-host-ops-to-gpu collapses it
/// and tiles it by a multiple of 32 each warp owns one voxel: lane l takes
/// the accesses l, l + lanes, ... (one coalesced 16 * lanes-byte row per
/// warp instruction) and the partial sums meet through gpu.shuffle xor. A
/// thread per voxel instead reads 16 bytes from 32 different rows per warp
/// instruction and loops over all C channels alone: it measured 52 us for
/// the 2.4M elements of a 1 x 60 x 104 x 384 chunk on the H100.
struct PrologueToVoxelLoop : OpRewritePattern<PrologueOp> {
  PrologueToVoxelLoop(MLIRContext *context, int64_t alignment, int64_t lanes)
      : OpRewritePattern(context), alignment(alignment), lanes(lanes) {}

  LogicalResult matchAndRewrite(PrologueOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = dyn_cast<MemRefType>(op.getInput().getType());
    auto outType = dyn_cast<MemRefType>(op.getInit().getType());
    if (!inType || !outType)
      return rewriter.notifyMatchFailure(op, "tensor form");
    if (!inType.getLayout().isIdentity() || !outType.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "operands are not contiguous");
    for (Value vector : {op.getNormGamma(), op.getNormBeta()})
      if (vector &&
          !cast<MemRefType>(vector.getType()).getLayout().isIdentity())
        return rewriter.notifyMatchFailure(op, "gamma/beta not contiguous");

    Location loc = op.getLoc();
    Type elementType = inType.getElementType();
    int64_t channels = inType.getDimSize(4);
    int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
    // 16-byte accesses where C allows; the alignment then holds for every
    // voxel (C * bytes is a multiple of 16).
    int64_t width = std::max<int64_t>(1, 16 / bytes);
    while (channels % width != 0)
      width /= 2;
    llvm::MaybeAlign align = alignment > 0 && width * bytes >= alignment
                                 ? llvm::MaybeAlign(alignment)
                                 : llvm::MaybeAlign();

    Value input = flatView(rewriter, loc, op.getInput());
    Value output = flatView(rewriter, loc, op.getInit());
    Value numElements = memref::DimOp::create(rewriter, loc, input, 0);
    Value channelCount =
        arith::ConstantIndexOp::create(rewriter, loc, channels);
    Value numVoxels =
        arith::DivUIOp::create(rewriter, loc, numElements, channelCount);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, width);
    auto vectorType = VectorType::get({width}, elementType);
    Value gamma = op.getNormGamma(), beta = op.getNormBeta();
    Activation activation = op.getInputActivation();
    std::optional<float> eps;
    if (FloatAttr attr = op.getNormEpsAttr())
      eps = attr.getValue().convertToFloat();

    auto loadChannels = [&](OpBuilder &b, Location nl, Value vector,
                            Value c) -> Value {
      auto type = cast<MemRefType>(vector.getType());
      return vector::LoadOp::create(
          b, nl, VectorType::get({width}, type.getElementType()), vector,
          ValueRange{c});
    };

    // No more lanes than accesses per voxel: a narrow voxel shares a warp
    // with its neighbours (the xor partners stay inside each lane group).
    int64_t lanes = this->lanes;
    while (lanes > 1 && lanes * width > channels)
      lanes /= 2;
    Value laneCount = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    // Lane l of a voxel starts at element l * width and strides by
    // lanes * width.
    Value stride = arith::ConstantIndexOp::create(rewriter, loc, lanes * width);
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero, zero}, ValueRange{numVoxels, laneCount},
        ValueRange{one, one}, [&](OpBuilder &b, Location nl, ValueRange ivs) {
          Value base = arith::MulIOp::create(b, nl, ivs[0], channelCount);
          Value first = arith::MulIOp::create(b, nl, ivs[1], step);
          auto at = [&](OpBuilder &ib, Value c) -> Value {
            return arith::AddIOp::create(ib, nl, base, c);
          };
          Value normScale;
          if (gamma) {
            Value f32Zero =
                arith::ConstantOp::create(b, nl, b.getF32FloatAttr(0.0f));
            auto sum = scf::ForOp::create(
                b, nl, first, channelCount, stride, ValueRange{f32Zero},
                [&](OpBuilder &fb, Location fl, Value c, ValueRange acc) {
                  Value vec = vector::LoadOp::create(
                      fb, fl, vectorType, input, ValueRange{at(fb, c)},
                      /*nontemporal=*/false, align);
                  Value total = acc[0];
                  for (int64_t i = 0; i < width; ++i) {
                    Value x = emitFloatCast(
                        fb, fl, vector::ExtractOp::create(fb, fl, vec, i),
                        fb.getF32Type());
                    total = arith::AddFOp::create(
                        fb, fl, total, arith::MulFOp::create(fb, fl, x, x));
                  }
                  scf::YieldOp::create(fb, fl, total);
                });
            Value total = sum.getResult(0);
            for (int64_t offset = lanes / 2; offset > 0; offset /= 2) {
              Value other =
                  gpu::ShuffleOp::create(
                      b, nl, total,
                      arith::ConstantOp::create(b, nl,
                                                b.getI32IntegerAttr(offset)),
                      arith::ConstantOp::create(b, nl, b.getI32IntegerAttr(32)),
                      gpu::ShuffleMode::XOR)
                      .getShuffleResult();
              total = arith::AddFOp::create(b, nl, total, other);
            }
            normScale = emitRmsNormScale(b, nl, total, channels, *eps);
          }
          scf::ForOp::create(
              b, nl, first, channelCount, stride, ValueRange{},
              [&](OpBuilder &fb, Location fl, Value c, ValueRange) {
                Value vec = vector::LoadOp::create(
                    fb, fl, vectorType, input, ValueRange{at(fb, c)},
                    /*nontemporal=*/false, align);
                Value y = emitInputPrologueVector(
                    fb, fl, vec, normScale,
                    gamma ? loadChannels(fb, fl, gamma, c) : Value(),
                    beta ? loadChannels(fb, fl, beta, c) : Value(), activation);
                vector::StoreOp::create(fb, fl, y, output,
                                        ValueRange{at(fb, c)},
                                        /*nontemporal=*/false, align);
                scf::YieldOp::create(fb, fl);
              });
        });
    rewriter.eraseOp(op);
    return success();
  }

  int64_t alignment;
  int64_t lanes;
};

struct QuantizeToLoopsPass
    : mlir::conv3d::impl::Conv3dQuantizeToLoopsBase<QuantizeToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The widest access is 16 bytes (elementsPerAccess): a larger alignment
    // would be claimed for accesses that do not have it.
    constexpr int64_t kMaxAlignment = 16;
    if (alignment < 0 || alignment > kMaxAlignment ||
        (alignment & (alignment - 1)) != 0) {
      emitError(getOperation()->getLoc())
          << "conv3d-quantize-to-loops: alignment must be 0 or a power of "
             "two up to "
          << kMaxAlignment << " (bytes, the widest access), got "
          << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    if (prologueLanes < 1 || prologueLanes > 32 ||
        (prologueLanes & (prologueLanes - 1)) != 0) {
      emitError(getOperation()->getLoc())
          << "conv3d-quantize-to-loops: prologue-lanes must be a power of two "
             "from 1 to 32, got "
          << static_cast<int64_t>(prologueLanes);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateQuantizeToLoopsPatterns(patterns, alignment);
    populatePackNVFP4ToLoopsPatterns(patterns, alignment);
    populatePrologueToLoopsPatterns(patterns, alignment, prologueLanes);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // A contiguous-block quantize on strided memrefs has no lowering here
    // (conv3d-to-linalg lowers every quantize while it is on tensors).
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (auto prologue = dyn_cast<PrologueOp>(op)) {
        if (prologue.hasTensorSemantics())
          return WalkResult::advance();
        op->emitError("conv3d-quantize-to-loops needs conv3d.prologue "
                      "operands with identity layouts");
        return WalkResult::interrupt();
      }
      auto quantize = dyn_cast<QuantizeOp>(op);
      if (!isa<PackNVFP4Op>(op) &&
          (!quantize || quantize.hasTensorSemantics() ||
           !hasContiguousQuantBlocks(quantize)))
        return WalkResult::advance();
      op->emitError("conv3d-quantize-to-loops needs operands with identity "
                    "layouts");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateQuantizeToLoopsPatterns(RewritePatternSet &patterns,
                                                   int64_t alignment) {
  patterns.add<QuantizeToBlockLoop>(patterns.getContext(), alignment);
}

void mlir::conv3d::populatePrologueToLoopsPatterns(RewritePatternSet &patterns,
                                                   int64_t alignment,
                                                   int64_t lanes) {
  patterns.add<PrologueToVoxelLoop>(patterns.getContext(), alignment, lanes);
}
