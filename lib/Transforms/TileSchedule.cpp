//===- TileSchedule.cpp - which K tiles a block of output rows needs ------===//

#include "conv3d/Transforms/TileSchedule.h"

#include "conv3d/IR/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::conv3d;

Value mlir::conv3d::emitTileReadsDepthRange(OpBuilder &b, Location loc,
                                            const ConvGeometry &geometry,
                                            int64_t tileM, Value m0, int64_t lo,
                                            int64_t hi) {
  IRIndexMath math{b, loc};
  Value last =
      arith::MinUIOp::create(b, loc, math.add(m0, math.constant(tileM - 1)),
                             math.constant(geometry.gemmM() - 1));
  auto first = geometry.decomposeM(math, m0);
  auto final = geometry.decomposeM(math, last);
  Value otherBatch = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           first[0], final[0]);
  Value startsBeforeEnd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, first[1], math.constant(hi));
  Value endsAfterStart = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, final[1], math.constant(lo));
  Value overlaps =
      arith::AndIOp::create(b, loc, startsBeforeEnd, endsAfterStart);
  return arith::OrIOp::create(b, loc, otherBatch, overlaps);
}

std::pair<Value, Value>
mlir::conv3d::emitActiveSliceRange(OpBuilder &b, Location loc,
                                   const ConvGeometry &geometry, int64_t tileM,
                                   Value m0) {
  IRIndexMath math{b, loc};
  int64_t depth = geometry.window[kDepth];
  Value begin = math.constant(depth), end = math.constant(0);
  for (int64_t q = depth - 1; q >= 0; --q) {
    auto [lo, hi] = geometry.validOutputRange(kDepth, q);
    if (lo == hi)
      continue; // a slice that only ever reads padding
    Value active = emitTileReadsDepthRange(b, loc, geometry, tileM, m0, lo, hi);
    begin = arith::SelectOp::create(b, loc, active, math.constant(q), begin);
    Value afterQ = arith::SelectOp::create(b, loc, active, math.constant(q + 1),
                                           math.constant(0));
    end = arith::MaxUIOp::create(b, loc, end, afterQ);
  }
  return {begin, end};
}
