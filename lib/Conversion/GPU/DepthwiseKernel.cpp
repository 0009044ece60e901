//===- DepthwiseKernel.cpp - conv3d-lower-depthwise -----------------------===//
//
// A depthwise convolution (one channel per group) is memory-bound: 27
// multiply-adds per input element for a 3x3x3 window, against the hundreds
// a tensor core needs per byte. Its kernel is a direct loop nest,
//
//   scf.parallel (n, do, ho, wb, cv) {        // a thread each on a GPU
//     acc[j] = 0 (or the output), j < WB      // WB outputs along W
//     for q, r:                               // window rows inside the input
//       x[o] = input[n, id, ih, wb*WB*sw - pad + o, cv*V : V], each distinct
//              offset o = j*sw + s*dw once   // register blocking along W
//       for s: w = filter[q, r, s, cv*V : V]  // the tap's vector
//              acc[j] += x[j*sw + s*dw] * w  // f32
//     out[n, do, ho, wb*WB + j, cv*V : V] = epilogue(acc[j])
//   }
//
// with vectors of V channels (16 bytes of a channels-last voxel), so that
// consecutive threads read consecutive 16-byte pieces of a voxel row. Halo
// taps read zeros: a window row outside the input is skipped, a W position
// outside it is clamped for the load and selected away.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/ScalarEmitters.h"
#include "conv3d/Target/Families.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include <map>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERDEPTHWISE
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Why the loop nest below cannot compute `conv`, or none: the depthwise
/// kernel's own conditions, and memrefs it can index as dense NDHWC
/// (vectors of channels need a unit channel stride and rows of whole
/// vectors).
std::optional<std::string> whyNotDepthwise(ConvOp conv) {
  if (conv.hasTensorSemantics())
    return std::string("it is on tensors (bufferize first)");
  if (std::optional<std::string> why =
          depthwiseKernelProblem(ConvProblem::fromConv(conv)))
    return why;
  for (Value operand : {conv.getInput(), conv.getFilter(), conv.getInit(),
                        conv.getBias(), conv.getResidual()})
    if (operand &&
        !cast<MemRefType>(operand.getType()).getLayout().isIdentity())
      return std::string("the depthwise kernel indexes dense operands "
                         "(identity layouts)");
  return std::nullopt;
}

/// The channels of one vector: 16 bytes of the input type where C allows.
int64_t vectorChannels(int64_t channels, Type elementType) {
  int64_t vector = 16 / (elementType.getIntOrFloatBitWidth() / 8);
  while (channels % vector != 0)
    vector /= 2;
  return vector;
}

class DepthwiseBuilder {
public:
  DepthwiseBuilder(OpBuilder &b, Location loc, ConvOp conv, int64_t wBlock)
      : b(b), loc(loc), conv(conv), g(conv.getGeometry()) {
    elem = getElementTypeOrSelf(conv.getInput().getType());
    outElem = getElementTypeOrSelf(conv.getInit().getType());
    cg = g.channelsPerGroup();
    fg = g.filtersPerGroup();
    depthwise = cg == 1 && fg == 1;
    // Depthwise: V consecutive channels (each its own group); grouped: V
    // consecutive filters of one group, over input chunks of its channels.
    vector = vectorChannels(depthwise ? g.channels : fg, elem);
    chunk = std::min<int64_t>(vectorChannels(cg, elem), 8);
    wb = std::min(wBlock, g.outputSize(kWidth));
    f32Vec = VectorType::get({vector}, b.getF32Type());
  }

  void build() {
    int64_t wBlocks = ceilDiv(g.outputSize(kWidth), wb);
    SmallVector<Value> lbs(5, index(0)), steps(5, index(1));
    SmallVector<Value> ubs = {index(g.batch), index(g.outputSize(kDepth)),
                              index(g.outputSize(kHeight)), index(wBlocks),
                              index(g.filters / vector)};
    scf::ParallelOp::create(
        b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nb.getInsertionBlock());
          body(ivs[0], ivs[1], ivs[2], ivs[3], ivs[4]);
        });
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value a, int64_t c) {
    return c == 0 ? a : arith::AddIOp::create(b, loc, a, index(c)).getResult();
  }
  Value mul(Value a, int64_t c) {
    return c == 1 ? a : arith::MulIOp::create(b, loc, a, index(c)).getResult();
  }
  Value cmp(arith::CmpIPredicate p, Value a, Value c) {
    return arith::CmpIOp::create(b, loc, p, a, c);
  }
  /// lo <= v < hi.
  Value inRange(Value v, int64_t hi) {
    return arith::AndIOp::create(b, loc,
                                 cmp(arith::CmpIPredicate::sge, v, index(0)),
                                 cmp(arith::CmpIPredicate::slt, v, index(hi)));
  }
  Value clamp(Value v, int64_t hi) {
    Value lo = arith::MaxSIOp::create(b, loc, v, index(0));
    return arith::MinSIOp::create(b, loc, lo, index(hi - 1));
  }
  Value zeroF32() {
    return arith::ConstantOp::create(
        b, loc, f32Vec, DenseElementsAttr::get(f32Vec, b.getF32FloatAttr(0)));
  }
  /// A vector of V channels of `memref` at `indices` (channels last),
  /// widened to f32.
  Value loadVector(Value memref, ValueRange indices) {
    Type type = getElementTypeOrSelf(memref.getType());
    auto vecType = VectorType::get({vector}, type);
    int64_t bytes = vector * type.getIntOrFloatBitWidth() / 8;
    Value v = vector::LoadOp::create(
        b, loc, vecType, memref, indices,
        /*nontemporal=*/false, llvm::MaybeAlign(std::min<int64_t>(bytes, 16)));
    return type.isF32() ? v : arith::ExtFOp::create(b, loc, f32Vec, v);
  }
  /// The V filters [f0, f0 + V) of tap (q, r, s) at their group's channel
  /// `c`: contiguous in QRSCF, a filter apart in FQRSC.
  Value loadTap(Value q, Value r, int64_t s, Value c) {
    Value filter = conv.getFilter();
    if (conv.getFilterLayout() == FilterLayout::qrscf)
      return loadVector(filter, {q, r, index(s), c, c0});
    SmallVector<Value> elements;
    for (int64_t e = 0; e < vector; ++e) {
      Value v = memref::LoadOp::create(
          b, loc, filter, ValueRange{add(c0, e), q, r, index(s), c});
      elements.push_back(emitFloatCast(b, loc, v, b.getF32Type()));
    }
    return vector::FromElementsOp::create(b, loc, f32Vec, elements);
  }

  void body(Value n, Value od, Value oh, Value wBlock, Value cv) {
    c0 = mul(cv, vector);
    // The group's first input channel.
    groupChannel0 =
        depthwise
            ? c0
            : mul(arith::DivUIOp::create(b, loc, c0, index(fg)).getResult(),
                  cg);
    Value ow0 = mul(wBlock, wb);
    int64_t outW = g.outputSize(kWidth);
    // Accumulators start at zero, or at the output (accumulate mode).
    SmallVector<Value> accs;
    for (int64_t j = 0; j < wb; ++j) {
      if (conv.getOverwrite()) {
        accs.push_back(zeroF32());
        continue;
      }
      Value ow = add(ow0, j);
      Value owc = outW % wb == 0 ? ow : clamp(ow, outW);
      accs.push_back(loadVector(conv.getInit(), {n, od, oh, owc, c0}));
    }
    Value id0 = add(mul(od, g.strides[kDepth]), -g.padLow[kDepth]);
    Value ih0 = add(mul(oh, g.strides[kHeight]), -g.padLow[kHeight]);
    Value iw0 = add(mul(ow0, g.strides[kWidth]), -g.padLow[kWidth]);
    auto qLoop = scf::ForOp::create(b, loc, index(0), index(g.window[kDepth]),
                                    index(1), accs);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(qLoop.getBody());
      Value q = qLoop.getInductionVar();
      Value id =
          arith::AddIOp::create(b, loc, id0, mul(q, g.dilations[kDepth]));
      auto rLoop =
          scf::ForOp::create(b, loc, index(0), index(g.window[kHeight]),
                             index(1), qLoop.getRegionIterArgs());
      {
        b.setInsertionPointToStart(rLoop.getBody());
        Value r = rLoop.getInductionVar();
        Value ih =
            arith::AddIOp::create(b, loc, ih0, mul(r, g.dilations[kHeight]));
        Value rowInside =
            arith::AndIOp::create(b, loc, inRange(id, g.inputSize[kDepth]),
                                  inRange(ih, g.inputSize[kHeight]));
        ValueRange rowAccs = rLoop.getRegionIterArgs();
        auto ifOp = scf::IfOp::create(b, loc, rowAccs.getTypes(), rowInside,
                                      /*withElseRegion=*/true);
        {
          b.setInsertionPointToStart(ifOp.thenBlock());
          SmallVector<Value> updated =
              accumulateRow(n, id, ih, iw0, q, r, rowAccs);
          scf::YieldOp::create(b, loc, updated);
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, loc, rowAccs);
        }
        b.setInsertionPointAfter(ifOp);
        scf::YieldOp::create(b, loc, ifOp.getResults());
      }
      b.setInsertionPointAfter(rLoop);
      scf::YieldOp::create(b, loc, rLoop.getResults());
    }
    for (int64_t j = 0; j < wb; ++j)
      storeOutput(n, od, oh, add(ow0, j), qLoop.getResult(j),
                  /*guarded=*/outW % wb != 0);
  }

  /// The window row (q, r) of input row (id, ih), inside the input: each
  /// distinct input vector once, each tap vector once.
  SmallVector<Value> accumulateRow(Value n, Value id, Value ih, Value iw0,
                                   Value q, Value r, ValueRange accs) {
    if (!depthwise)
      return accumulateGroupedRow(n, id, ih, iw0, q, r, accs);
    Value idc = clamp(id, g.inputSize[kDepth]);
    Value ihc = clamp(ih, g.inputSize[kHeight]);
    std::map<int64_t, Value> inputs;
    auto inputAt = [&](int64_t offset) {
      auto [it, inserted] = inputs.try_emplace(offset);
      if (!inserted)
        return it->second;
      Value iw = add(iw0, offset);
      Value loaded = loadVector(
          conv.getInput(), {n, idc, ihc, clamp(iw, g.inputSize[kWidth]), c0});
      it->second = arith::SelectOp::create(
          b, loc, inRange(iw, g.inputSize[kWidth]), loaded, zeroF32());
      return it->second;
    };
    SmallVector<Value> result(accs.begin(), accs.end());
    for (int64_t s = 0; s < g.window[kWidth]; ++s) {
      Value tap = loadTap(q, r, s, index(0));
      for (int64_t j = 0; j < wb; ++j) {
        Value x = inputAt(j * g.strides[kWidth] + s * g.dilations[kWidth]);
        result[j] = vector::FMAOp::create(b, loc, x, tap, result[j]);
      }
    }
    return result;
  }

  /// The window row (q, r) of a grouped convolution: the group's C/G
  /// channels in chunks (a loop when there are several), each input chunk
  /// of the row's distinct W positions loaded once, each of its channels
  /// broadcast against the tap's vector of the V filters.
  SmallVector<Value> accumulateGroupedRow(Value n, Value id, Value ih,
                                          Value iw0, Value q, Value r,
                                          ValueRange accs) {
    Value idc = clamp(id, g.inputSize[kDepth]);
    Value ihc = clamp(ih, g.inputSize[kHeight]);
    auto chunkLoop =
        scf::ForOp::create(b, loc, index(0), index(cg), index(chunk), accs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunkLoop.getBody());
    Value cBase = chunkLoop.getInductionVar();
    Value channel = arith::AddIOp::create(b, loc, groupChannel0, cBase);
    auto chunkVec = VectorType::get({chunk}, b.getF32Type());
    Value zeros = arith::ConstantOp::create(
        b, loc, chunkVec,
        DenseElementsAttr::get(chunkVec, b.getF32FloatAttr(0)));
    auto inType = VectorType::get({chunk}, elem);
    int64_t bytes = chunk * elem.getIntOrFloatBitWidth() / 8;
    std::map<int64_t, SmallVector<Value>> inputs;
    auto inputAt = [&](int64_t offset) -> ArrayRef<Value> {
      auto [it, inserted] = inputs.try_emplace(offset);
      if (!inserted)
        return it->second;
      Value iw = add(iw0, offset);
      Value loaded = vector::LoadOp::create(
          b, loc, inType, conv.getInput(),
          ValueRange{n, idc, ihc, clamp(iw, g.inputSize[kWidth]), channel},
          /*nontemporal=*/false,
          llvm::MaybeAlign(std::min<int64_t>(bytes, 16)));
      if (!elem.isF32())
        loaded = arith::ExtFOp::create(b, loc, chunkVec, loaded);
      loaded = arith::SelectOp::create(b, loc, inRange(iw, g.inputSize[kWidth]),
                                       loaded, zeros);
      for (int64_t e = 0; e < chunk; ++e)
        it->second.push_back(vector::ExtractOp::create(b, loc, loaded, e));
      return it->second;
    };
    SmallVector<Value> result(chunkLoop.getRegionIterArgs().begin(),
                              chunkLoop.getRegionIterArgs().end());
    for (int64_t s = 0; s < g.window[kWidth]; ++s)
      for (int64_t e = 0; e < chunk; ++e) {
        Value tap = loadTap(q, r, s, add(cBase, e));
        for (int64_t j = 0; j < wb; ++j) {
          Value x = inputAt(j * g.strides[kWidth] + s * g.dilations[kWidth])[e];
          Value broadcast = vector::BroadcastOp::create(b, loc, f32Vec, x);
          result[j] = vector::FMAOp::create(b, loc, broadcast, tap, result[j]);
        }
      }
    scf::YieldOp::create(b, loc, result);
    return SmallVector<Value>(chunkLoop.getResults());
  }

  /// out[n, od, oh, ow, c0 : V] = cast(act(acc + bias) + residual).
  void storeOutput(Value n, Value od, Value oh, Value ow, Value acc,
                   bool guarded) {
    OpBuilder::InsertionGuard guard(b);
    if (guarded) {
      auto ifOp = scf::IfOp::create(
          b, loc,
          cmp(arith::CmpIPredicate::slt, ow, index(g.outputSize(kWidth))),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    SmallVector<Value> position = {n, od, oh, ow, c0};
    Value bias = conv.getBias() ? loadVector(conv.getBias(), {c0}) : Value();
    Value residual =
        conv.getResidual() ? loadVector(conv.getResidual(), position) : Value();
    SmallVector<Value> elements;
    for (int64_t e = 0; e < vector; ++e) {
      auto at = [&](Value v) {
        return v ? vector::ExtractOp::create(b, loc, v, e).getResult()
                 : Value();
      };
      elements.push_back(emitEpilogue(b, loc, at(acc), at(bias), at(residual),
                                      conv.getActivation(), outElem));
    }
    Value result = vector::FromElementsOp::create(
        b, loc, VectorType::get({vector}, outElem), elements);
    int64_t bytes = vector * outElem.getIntOrFloatBitWidth() / 8;
    vector::StoreOp::create(b, loc, result, conv.getInit(), position,
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(std::min<int64_t>(bytes, 16)));
  }

  OpBuilder &b;
  Location loc;
  ConvOp conv;
  ConvGeometry g;
  Type elem, outElem;
  /// Channels and filters per group; whether both are 1.
  int64_t cg, fg;
  bool depthwise;
  /// Outputs per vector, input channels per chunk (grouped), W block.
  int64_t vector, chunk, wb;
  VectorType f32Vec;
  /// The first filter (output channel) of the iteration's vector; in a
  /// depthwise convolution also its first input channel.
  Value c0;
  /// The first input channel of the iteration's group.
  Value groupChannel0;
};

struct LowerDepthwisePass
    : mlir::conv3d::impl::Conv3dLowerDepthwiseBase<LowerDepthwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (wBlock < 1 || wBlock > 16) {
      getOperation()->emitError()
          << "conv3d-lower-depthwise: w-block must be in [1, 16], got "
          << static_cast<int64_t>(wBlock);
      return signalPassFailure();
    }
    SmallVector<ConvOp> convs;
    getOperation()->walk([&](ConvOp conv) {
      if (whyNotDepthwise(conv) ||
          !takesDepthwiseKernel(ConvProblem::fromConv(conv), target))
        return;
      convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (ConvOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      DepthwiseBuilder(rewriter, conv.getLoc(), conv, wBlock).build();
      rewriter.eraseOp(conv);
    }
  }
};

} // namespace
