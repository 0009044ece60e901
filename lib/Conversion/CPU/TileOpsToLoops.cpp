//===- TileOpsToLoops.cpp - conv3d-lower-to-cpu ---------------------------===//
//
// The CPU target lowering: every tile op becomes loops over its tile. The
// index math comes from ConvGeometry (instantiated with IRIndexMath), the
// quantization and epilogue math from ScalarEmitters: the same sources the
// GPU lowerings use, so a CPU run checks them.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/IndexMath.h"
#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERTOCPU
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Small helpers for building the loop bodies.
struct LoopBuilder {
  OpBuilder &b;
  Location loc;

  IRIndexMath math() const { return {b, loc}; }
  Value index(int64_t v) const { return math().constant(v); }

  /// `scf.for %i = 0 to n` with the body built by `body(i)`.
  void forRange(int64_t n, function_ref<void(Value)> body) const {
    auto loop = scf::ForOp::create(b, loc, index(0), index(n), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  Value cmp(arith::CmpIPredicate pred, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  }
  Value andI(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  /// `value < bound` for non-negative index values.
  Value below(Value value, Value bound) const {
    return cmp(arith::CmpIPredicate::ult, value, bound);
  }
  /// 0 <= value < bound for a possibly negative index value.
  Value inRange(Value value, int64_t bound) const {
    return andI(cmp(arith::CmpIPredicate::sge, value, index(0)),
                cmp(arith::CmpIPredicate::slt, value, index(bound)));
  }
  /// `value` clamped to [0, bound - 1] so that a load at it is in bounds.
  Value clamp(Value value, int64_t bound) const {
    Value low = arith::MaxSIOp::create(b, loc, value, index(0));
    return arith::MinSIOp::create(b, loc, low, index(bound - 1));
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value zeroOf(Type type) const {
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  }
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

/// NVFP4 quantization of each row of `tile` in blocks of `blockSize`
/// columns.
void quantizeTileRows(const LoopBuilder &lb, Value tile, Value amax,
                      int64_t blockSize) {
  OpBuilder &b = lb.b;
  Location loc = lb.loc;
  ArrayRef<int64_t> shape = shapeOf(tile);
  Type elem = getElementTypeOrSelf(tile.getType());
  lb.forRange(shape[0], [&](Value i) {
    lb.forRange(shape[1] / blockSize, [&](Value block) {
      IRIndexMath math = lb.math();
      Value start = math.mul(block, blockSize);
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      auto reduce = scf::ForOp::create(b, loc, lb.index(0), lb.index(blockSize),
                                       lb.index(1), ValueRange{zero});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(reduce.getBody());
        Value j = math.add(start, reduce.getInductionVar());
        Value v = memref::LoadOp::create(b, loc, tile, ValueRange{i, j});
        Value next = emitAbsMaxUpdate(b, loc, reduce.getRegionIterArg(0), v);
        scf::YieldOp::create(b, loc, next);
      }
      NVFP4BlockScale scale =
          emitNVFP4BlockScale(b, loc, reduce.getResult(0), amax);
      lb.forRange(blockSize, [&](Value e) {
        Value j = lb.math().add(start, e);
        Value v = memref::LoadOp::create(b, loc, tile, ValueRange{i, j});
        Value q =
            emitFloatCast(b, loc, emitNVFP4Quantize(b, loc, v, scale), elem);
        memref::StoreOp::create(b, loc, q, tile, ValueRange{i, j});
      });
    });
  });
}

/// The RMS norm scale rsqrt(mean_c(x^2) + eps) of the input voxel at
/// `indices` (its channel index is ignored): a loop over the voxel's
/// channels.
Value emitVoxelNormScale(const LoopBuilder &lb, LoadIm2colTileOp op,
                         ArrayRef<Value> indices, int64_t channels) {
  OpBuilder &b = lb.b;
  Location loc = lb.loc;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto sum = scf::ForOp::create(b, loc, lb.index(0), lb.index(channels),
                                lb.index(1), ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sum.getBody());
    SmallVector<Value> voxel(indices.begin(), indices.end());
    voxel[4] = sum.getInductionVar();
    Value v = emitFloatCast(
        b, loc, memref::LoadOp::create(b, loc, op.getInput(), voxel),
        b.getF32Type());
    Value next = arith::AddFOp::create(b, loc, sum.getRegionIterArg(0),
                                       arith::MulFOp::create(b, loc, v, v));
    scf::YieldOp::create(b, loc, next);
  }
  float eps = op.getNormEpsAttr().getValue().convertToFloat();
  return emitRmsNormScale(b, loc, sum.getResult(0), channels, eps);
}

/// Reads input voxel (n, d, h, w) at channel c (indices of the input
/// operand) and applies the op's prologue, if any, with the voxel's norm
/// scale `normScale` (when the op has a norm).
Value loadInputWithPrologue(const LoopBuilder &lb, LoadIm2colTileOp op,
                            ArrayRef<Value> indices, Value normScale) {
  OpBuilder &b = lb.b;
  Location loc = lb.loc;
  Value x = memref::LoadOp::create(b, loc, op.getInput(), indices);
  if (!op.hasPrologue())
    return x;
  Value gamma, beta;
  Value c = indices[4];
  if (op.getNormGamma()) {
    gamma = memref::LoadOp::create(b, loc, op.getNormGamma(), ValueRange{c});
    if (op.getNormBeta())
      beta = memref::LoadOp::create(b, loc, op.getNormBeta(), ValueRange{c});
  }
  return emitInputPrologue(b, loc, x, op.getNormGamma() ? normScale : Value(),
                           gamma, beta, op.getInputActivation(), x.getType());
}

/// conv3d.voxel_rms_scale as an scf.parallel over the voxels, each summing
/// the squares of its channels in f32: host loops on the CPU, a device loop
/// once conv3d-lower-host-ops-to-gpu has shaped it for a GPU.
struct LowerVoxelRmsScale : OpRewritePattern<VoxelRmsScaleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(VoxelRmsScaleOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = cast<MemRefType>(op.getInput().getType());
    if (!inputType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    LoopBuilder lb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = inputType.getShape();
    SmallVector<Value> lower(4, lb.index(0)), steps(4, lb.index(1)), upper;
    for (int64_t size : shape.drop_back())
      upper.push_back(lb.index(size));
    int64_t channels = shape[4];
    float eps = op.getEps().convertToFloat();
    scf::ParallelOp::create(
        rewriter, loc, lower, upper, steps,
        [&](OpBuilder &b, Location loc, ValueRange voxel) {
          Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
          auto sum = scf::ForOp::create(
              b, loc, lb.index(0), lb.index(channels), lb.index(1),
              ValueRange{zero},
              [&](OpBuilder &b, Location loc, Value c, ValueRange acc) {
                SmallVector<Value> at(voxel.begin(), voxel.end());
                at.push_back(c);
                Value x = emitFloatCast(
                    b, loc, memref::LoadOp::create(b, loc, op.getInput(), at),
                    b.getF32Type());
                Value next = arith::AddFOp::create(
                    b, loc, acc[0], arith::MulFOp::create(b, loc, x, x));
                scf::YieldOp::create(b, loc, next);
              });
          Value scale =
              emitRmsNormScale(b, loc, sum.getResult(0), channels, eps);
          memref::StoreOp::create(b, loc, scale, op.getScale(), voxel);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerLoadIm2colTile : OpRewritePattern<LoadIm2colTileOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LoadIm2colTileOp op,
                                PatternRewriter &rewriter) const override {
    LoopBuilder lb{rewriter, op.getLoc()};
    ConvGeometry g = op.getGeometry();
    if (!g.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    ArrayRef<int64_t> tileShape = shapeOf(op.getTile());
    Type elem = getElementTypeOrSelf(op.getTile().getType());
    Value m0 = op.getM0(), k0 = op.getK0(), kEnd = op.getKEnd();
    // Depth coordinates below historyDepth read the history operand.
    int64_t historyDepth = op.getHistory() ? g.historyDepth : 0;
    lb.forRange(tileShape[0], [&](Value i) {
      IRIndexMath math = lb.math();
      Value m = math.add(m0, i);
      Value mValid = lb.below(m, lb.index(g.gemmM()));
      auto out = g.decomposeM(math, lb.select(mValid, m, lb.index(0)));
      // The column loop; with a norm it carries the norm scale of the voxel
      // under the previous column, recomputed when a voxel starts (c = 0)
      // or the row does (j = 0): once per voxel and tap, not per element.
      auto columns = [&](Value j, Value carriedScale) -> Value {
        IRIndexMath math = lb.math();
        Value k = math.add(k0, j);
        Value kValid = lb.below(k, kEnd);
        auto tap = g.decomposeK(math, lb.select(kValid, k, lb.index(0)));
        Value valid = lb.andI(mValid, kValid);
        SmallVector<Value> indices = {out[0]};
        for (unsigned axis = 0; axis < 3; ++axis) {
          Value coord = g.inputCoord(math, axis, out[axis + 1], tap[axis]);
          valid = lb.andI(valid, lb.inRange(coord, g.inputSize[axis]));
          indices.push_back(lb.clamp(coord, g.inputSize[axis]));
        }
        indices.push_back(tap[3]);
        // Every load is in bounds (coordinates clamped); the select zeroes
        // the halo, rows past M and columns past k_end.
        Value x;
        if (!op.getHistory() && !op.hasPrologue()) {
          x = memref::LoadOp::create(rewriter, lb.loc, op.getInput(), indices);
        } else {
          // Depth d of concat(history, input): history[d] when d < Dh, else
          // input[d - Dh], the prologue applied; both read at clamped
          // depths, one selected. An empty operand is never read.
          Value depth = indices[1];
          int64_t inputDepth = g.inputOperandDepth();
          Value fromInput = lb.zeroOf(elem), fromHistory = lb.zeroOf(elem);
          if (inputDepth > 0) {
            SmallVector<Value> at = indices;
            at[1] = lb.clamp(lb.math().add(depth, lb.index(-historyDepth)),
                             inputDepth);
            if (Value scales = op.getNormScale()) {
              // The prepass's statistic of the voxel.
              carriedScale = memref::LoadOp::create(
                  rewriter, lb.loc, scales, ArrayRef<Value>(at).drop_back());
            } else if (carriedScale) {
              Value fresh = arith::OrIOp::create(
                  rewriter, lb.loc,
                  lb.cmp(arith::CmpIPredicate::eq, j, lb.index(0)),
                  lb.cmp(arith::CmpIPredicate::eq, tap[3], lb.index(0)));
              auto scale = scf::IfOp::create(rewriter, lb.loc,
                                             TypeRange{carriedScale.getType()},
                                             fresh, /*withElseRegion=*/true);
              OpBuilder::InsertionGuard guard(rewriter);
              rewriter.setInsertionPointToStart(scale.thenBlock());
              scf::YieldOp::create(rewriter, lb.loc,
                                   emitVoxelNormScale(lb, op, at, g.channels));
              rewriter.setInsertionPointToStart(scale.elseBlock());
              scf::YieldOp::create(rewriter, lb.loc, carriedScale);
              carriedScale = scale.getResult(0);
            }
            fromInput = loadInputWithPrologue(lb, op, at, carriedScale);
          }
          if (historyDepth > 0) {
            SmallVector<Value> at = indices;
            at[1] = lb.clamp(depth, historyDepth);
            fromHistory =
                memref::LoadOp::create(rewriter, lb.loc, op.getHistory(), at);
          }
          x = historyDepth == 0
                  ? fromInput
                  : lb.select(lb.below(depth, lb.index(historyDepth)),
                              fromHistory, fromInput);
        }
        Value v = lb.select(valid, x, lb.zeroOf(elem));
        memref::StoreOp::create(rewriter, lb.loc, v, op.getTile(),
                                ValueRange{i, j});
        return carriedScale;
      };
      if (!op.getNormGamma() || op.getNormScale()) {
        lb.forRange(tileShape[1], [&](Value j) { columns(j, Value()); });
        return;
      }
      Value zero = arith::ConstantOp::create(rewriter, lb.loc,
                                             rewriter.getF32FloatAttr(0));
      auto loop = scf::ForOp::create(rewriter, lb.loc, lb.index(0),
                                     lb.index(tileShape[1]), lb.index(1),
                                     ValueRange{zero});
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value scale = columns(loop.getInductionVar(), loop.getRegionIterArg(0));
      scf::YieldOp::create(rewriter, lb.loc, scale ? scale : zero);
    });
    if (std::optional<NVFP4Attr> quant = op.getQuant())
      quantizeTileRows(lb, op.getTile(), op.getAmax(), quant->getBlockSize());
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerLoadFilterTile : OpRewritePattern<LoadFilterTileOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LoadFilterTileOp op,
                                PatternRewriter &rewriter) const override {
    LoopBuilder lb{rewriter, op.getLoc()};
    ArrayRef<int64_t> filterShape = shapeOf(op.getFilter());
    FilterLayout layout = op.getFilterLayout();
    // The filter's window and channels, for ConvGeometry's k decomposition.
    ConvGeometry g = ConvGeometry::fromShapes(
        {1, 1, 1, 1,
         layout == FilterLayout::qrscf ? filterShape[3] : filterShape[4]},
        {filterShape[0], filterShape[1], filterShape[2], filterShape[3],
         filterShape[4]},
        layout, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0});
    ArrayRef<int64_t> tileShape = shapeOf(op.getTile());
    Type elem = getElementTypeOrSelf(op.getTile().getType());
    lb.forRange(tileShape[0], [&](Value i) {
      IRIndexMath math = lb.math();
      Value k = math.add(op.getK0(), i);
      Value kValid = lb.below(k, op.getKEnd());
      auto tap = g.decomposeK(math, lb.select(kValid, k, lb.index(0)));
      lb.forRange(tileShape[1], [&](Value j) {
        Value f = lb.math().add(op.getN0(), j);
        Value fValid = lb.below(f, lb.index(g.filters));
        Value fc = lb.select(fValid, f, lb.index(0));
        SmallVector<Value> indices =
            layout == FilterLayout::qrscf
                ? SmallVector<Value>{tap[0], tap[1], tap[2], tap[3], fc}
                : SmallVector<Value>{fc, tap[0], tap[1], tap[2], tap[3]};
        Value x =
            memref::LoadOp::create(rewriter, lb.loc, op.getFilter(), indices);
        Value v = lb.select(lb.andI(kValid, fValid), x, lb.zeroOf(elem));
        memref::StoreOp::create(rewriter, lb.loc, v, op.getTile(),
                                ValueRange{i, j});
      });
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerTileMma : OpRewritePattern<TileMmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TileMmaOp op,
                                PatternRewriter &rewriter) const override {
    LoopBuilder lb{rewriter, op.getLoc()};
    ArrayRef<int64_t> a = shapeOf(op.getA()), b = shapeOf(op.getB());
    Type f32 = rewriter.getF32Type();
    // i, k, j order: the inner loop walks rows of B and the accumulator.
    lb.forRange(a[0], [&](Value i) {
      lb.forRange(a[1], [&](Value k) {
        Value x =
            emitFloatCast(rewriter, lb.loc,
                          memref::LoadOp::create(rewriter, lb.loc, op.getA(),
                                                 ValueRange{i, k}),
                          f32);
        lb.forRange(b[1], [&](Value j) {
          Value y =
              emitFloatCast(rewriter, lb.loc,
                            memref::LoadOp::create(rewriter, lb.loc, op.getB(),
                                                   ValueRange{k, j}),
                            f32);
          Value acc = memref::LoadOp::create(rewriter, lb.loc, op.getAcc(),
                                             ValueRange{i, j});
          Value product = arith::MulFOp::create(rewriter, lb.loc, x, y);
          Value sum = arith::AddFOp::create(rewriter, lb.loc, acc, product);
          memref::StoreOp::create(rewriter, lb.loc, sum, op.getAcc(),
                                  ValueRange{i, j});
        });
      });
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerStoreOutputTile : OpRewritePattern<StoreOutputTileOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(StoreOutputTileOp op,
                                PatternRewriter &rewriter) const override {
    LoopBuilder lb{rewriter, op.getLoc()};
    // A partial sum's workspace has a leading split dimension.
    Value split = op.getSplit();
    ArrayRef<int64_t> outShape = shapeOf(op.getOutput());
    if (split)
      outShape = outShape.drop_front();
    std::array<int64_t, 5> shape5 = {outShape[0], outShape[1], outShape[2],
                                     outShape[3], outShape[4]};
    int64_t m = outShape[0] * outShape[1] * outShape[2] * outShape[3];
    ArrayRef<int64_t> tileShape = shapeOf(op.getAcc());
    Type outElem = getElementTypeOrSelf(op.getOutput().getType());
    lb.forRange(tileShape[0], [&](Value i) {
      Value row = lb.math().add(op.getM0(), i);
      Value rowValid = lb.below(row, lb.index(m));
      lb.forRange(tileShape[1], [&](Value j) {
        Value f = lb.math().add(op.getN0(), j);
        Value valid = lb.andI(rowValid, lb.below(f, lb.index(outShape[4])));
        auto guard = scf::IfOp::create(rewriter, lb.loc, valid, false);
        OpBuilder::InsertionGuard insertionGuard(rewriter);
        rewriter.setInsertionPointToStart(guard.thenBlock());
        IRIndexMath math = lb.math();
        auto pos = decomposeOutputPosition(math, row, shape5);
        SmallVector<Value> indices = {pos[0], pos[1], pos[2], pos[3], f};
        Value acc = memref::LoadOp::create(rewriter, lb.loc, op.getAcc(),
                                           ValueRange{i, j});
        if (split) {
          indices.insert(indices.begin(), split);
          memref::StoreOp::create(rewriter, lb.loc, acc, op.getOutput(),
                                  indices);
          return;
        }
        if (op.getMode() == StoreMode::accumulate) {
          Value old =
              memref::LoadOp::create(rewriter, lb.loc, op.getOutput(), indices);
          acc = arith::AddFOp::create(
              rewriter, lb.loc, acc,
              emitFloatCast(rewriter, lb.loc, old, rewriter.getF32Type()));
        }
        Value bias = op.getBias()
                         ? memref::LoadOp::create(rewriter, lb.loc,
                                                  op.getBias(), ValueRange{f})
                               .getResult()
                         : Value();
        Value residual = op.getResidual()
                             ? memref::LoadOp::create(rewriter, lb.loc,
                                                      op.getResidual(), indices)
                                   .getResult()
                             : Value();
        Value y = emitEpilogue(rewriter, lb.loc, acc, bias, residual,
                               op.getActivation(), outElem);
        memref::StoreOp::create(rewriter, lb.loc, y, op.getOutput(), indices);
      });
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The slabs of a rank-6 stack of split-K partial sums as rank-5 views, in
/// split order; a rank-5 sum alone.
SmallVector<Value> sumSlabs(OpBuilder &b, Location loc, Value sum) {
  auto type = cast<MemRefType>(sum.getType());
  if (type.getRank() == 5)
    return {sum};
  SmallVector<Value> slabs;
  SmallVector<int64_t> sizes(type.getShape());
  sizes[0] = 1;
  SmallVector<int64_t> offsets(6, 0), strides(6, 1);
  for (int64_t s = 0; s < type.getDimSize(0); ++s) {
    offsets[0] = s;
    auto slabType = memref::SubViewOp::inferRankReducedResultType(
        type.getShape().drop_front(), type, offsets, sizes, strides);
    slabs.push_back(memref::SubViewOp::create(
        b, loc, cast<MemRefType>(slabType), sum,
        getAsIndexOpFoldResult(b.getContext(), offsets),
        getAsIndexOpFoldResult(b.getContext(), sizes),
        getAsIndexOpFoldResult(b.getContext(), strides)));
  }
  return slabs;
}

/// The most split-K slabs conv3d.epilogue reads as one input each. A GPU
/// kernel gets every input as a memref descriptor among its parameters
/// (104 bytes for rank 5, 4352 bytes in all before PTX 8.1): 128 slabs
/// overflowed them. More slabs are read from the stack in a loop, in the
/// same order.
constexpr int64_t kMaxSlabInputs = 16;

/// In a linalg.generic body over the output: the sum of the rank-6
/// stack's `splits` slabs at the body's position, slab 0 first (its value
/// exactly: 0 + x is x), as the per-slab inputs add them.
Value sumSlabsInLoop(OpBuilder &b, Location loc, Value sum, int64_t splits) {
  SmallVector<Value> indices = {Value()};
  for (unsigned d = 0; d < 5; ++d)
    indices.push_back(linalg::IndexOp::create(b, loc, d));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, splits),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{zero},
      [&](OpBuilder &lb, Location lloc, Value s, ValueRange acc) {
        SmallVector<Value> at = indices;
        at[0] = s;
        Value slab = memref::LoadOp::create(lb, lloc, sum, at);
        scf::YieldOp::create(
            lb, lloc,
            ValueRange{arith::AddFOp::create(lb, lloc, acc[0], slab)});
      });
  return loop.getResult(0);
}

/// conv3d.epilogue on memrefs (split-K's final step) as a linalg.generic.
struct LowerEpilogueOnMemrefs : OpRewritePattern<EpilogueOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EpilogueOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasTensorSemantics())
      return rewriter.notifyMatchFailure(op, "tensor form: conv3d-to-linalg");
    AffineMap id = rewriter.getMultiDimIdentityMap(5);
    // A stack of split-K partial sums: one input per slab, added in order,
    // or (past kMaxSlabInputs) the stack read by the body.
    auto sumType = cast<MemRefType>(op.getSum().getType());
    int64_t splits = sumType.getRank() == 6 ? sumType.getDimSize(0) : 1;
    bool loopSlabs = splits > kMaxSlabInputs;
    SmallVector<Value> inputs;
    if (!loopSlabs)
      inputs = sumSlabs(rewriter, op.getLoc(), op.getSum());
    int64_t slabs = inputs.size();
    SmallVector<AffineMap> maps(slabs, id);
    if (op.getBias()) {
      inputs.push_back(op.getBias());
      maps.push_back(AffineMap::get(5, 0, rewriter.getAffineDimExpr(4)));
    }
    if (op.getResidual()) {
      inputs.push_back(op.getResidual());
      maps.push_back(id);
    }
    maps.push_back(id);
    bool accumulate = !op.getOverwrite();
    Value bias = op.getBias(), residual = op.getResidual();
    Activation activation = op.getActivation();
    Type outElem = getElementTypeOrSelf(op.getInit().getType());
    linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{}, inputs, ValueRange{op.getInit()},
        maps,
        SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value acc =
              loopSlabs ? sumSlabsInLoop(b, loc, op.getSum(), splits) : args[0];
          for (int64_t s = 1; s < slabs; ++s)
            acc = arith::AddFOp::create(b, loc, acc, args[s]);
          if (accumulate)
            acc = arith::AddFOp::create(
                b, loc, acc,
                emitFloatCast(b, loc, args.back(), b.getF32Type()));
          Value y =
              emitEpilogue(b, loc, acc, bias ? args[slabs] : Value(),
                           residual ? args[slabs + (bias ? 1 : 0)] : Value(),
                           activation, outElem);
          linalg::YieldOp::create(b, loc, y);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerToCPUPass
    : mlir::conv3d::impl::Conv3dLowerToCPUBase<LowerToCPUPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTileOpsToLoopsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (isa<LoadIm2colTileOp, LoadFilterTileOp, TileMmaOp, StoreOutputTileOp,
              VoxelRmsScaleOp>(op)) {
        op->emitError() << "conv3d-lower-to-cpu needs static shapes to lower '"
                        << op->getName() << "'";
        return WalkResult::interrupt();
      }
      if (op->getDialect() && isa<Conv3dDialect>(op->getDialect())) {
        op->emitError() << "conv3d-lower-to-cpu cannot lower '" << op->getName()
                        << "' here: convolutions must be tiled by "
                           "conv3d-implicit-gemm, and tensor-level ops "
                           "lowered by conv3d-to-linalg, first";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateTileOpsToLoopsPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLoadIm2colTile, LowerLoadFilterTile, LowerTileMma,
               LowerStoreOutputTile>(patterns.getContext());
  populateEpilogueToLinalgPatterns(patterns);
  populateVoxelRmsScaleToLoopsPatterns(patterns);
}

void mlir::conv3d::populateVoxelRmsScaleToLoopsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerVoxelRmsScale>(patterns.getContext());
}

void mlir::conv3d::populateEpilogueToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerEpilogueOnMemrefs>(patterns.getContext());
}
