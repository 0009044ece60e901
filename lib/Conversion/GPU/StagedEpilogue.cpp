//===- StagedEpilogue.cpp - staged accumulators to the output -------------===//
//
// Accumulator fragments are scattered across lanes in the MMA's layout (two
// adjacent columns per lane, for mma.sync and wgmma alike). They go through
// shared memory first (an f32 tile with padded rows), so that each thread
// then owns `outputVector` consecutive output channels of one row: bias,
// residual and the old output are read, and the result written, with
// 16-byte accesses, coalesced across the warp. The epilogue math is
// ScalarEmitters', as on every target.
//
//===----------------------------------------------------------------------===//

#include "KernelCommon.h"

#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;

static Value flatIndex(KernelMath &math, const FlatOperand &operand,
                       ArrayRef<Value> coords) {
  Value index = math.constant(0);
  for (auto [coord, stride] : llvm::zip_equal(coords, operand.strides))
    index = math.add(index, math.mul(coord, stride));
  return index;
}

/// Positions a thread reads for before computing any (the loads in flight
/// at once; each holds up to three 16-byte vectors in registers).
static constexpr int64_t kStagedEpilogueBatch = 4;

static llvm::MaybeAlign alignmentOf(int64_t elements, Type type) {
  int64_t bytes = elements * type.getIntOrFloatBitWidth() / 8;
  return llvm::MaybeAlign(std::min<int64_t>(bytes, 16));
}

void mlir::conv3d::stageAccumulatorPair(KernelMath &math,
                                        const StagedTile &tile, Value row,
                                        Value col, Value first, Value second) {
  OpBuilder &b = math.b;
  auto pairType = VectorType::get({2}, b.getF32Type());
  Value pair = vector::FromElementsOp::create(b, math.loc, pairType,
                                              ValueRange{first, second});
  Value index = math.add(math.mul(row, tile.stagingStride), col);
  vector::StoreOp::create(b, math.loc, pair, tile.staging,
                          ValueRange{math.toIndex(index)}, false,
                          llvm::MaybeAlign(8));
}

/// The thread's positions of one pass over the tile: (row, vector of
/// channels) u = tid + k*threads, with its output coordinates.
struct StagedPosition {
  Value row, col, m, f, valid;
  /// The output coordinates, where reads are issued before the stores.
  SmallVector<Value> coords;
};

void mlir::conv3d::emitStagedEpilogue(KernelMath &math, const StagedTile &tile,
                                      const ConvGeometry &geometry,
                                      const KernelOperands &ops, StoreMode mode,
                                      Activation activation, Type outElem) {
  OpBuilder &b = math.b;
  Location loc = math.loc;
  Type f32 = b.getF32Type();

  // Coalesced pass: thread-strided over (row, vector of channels), in
  // batches of `batch` positions a thread. A batch issues all of its global
  // reads (the old output, bias, residual) before any of its results is
  // computed and stored: one position at a time, each read's latency was
  // paid in turn (a residual epilogue took 2.5x the TMA-stored one).
  int64_t width = tile.outputVector;
  int64_t perRow = tile.tileN / width;
  int64_t positions = tile.tileM * perRow;
  int64_t perThread = llvm::divideCeil(positions, tile.threads);
  bool reads = mode == StoreMode::accumulate || ops.bias || ops.residual;
  int64_t batch = mode == StoreMode::partial || !reads
                      ? 1
                      : std::min<int64_t>(kStagedEpilogueBatch,
                                          std::max<int64_t>(perThread, 1));
  auto loop = scf::ForOp::create(b, loc, tile.tid, math.constant(positions),
                                 math.constant(tile.threads * batch));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<StagedPosition> batchPositions;
  for (int64_t j = 0; j < batch; ++j) {
    Value u = loop.getInductionVar();
    if (j > 0)
      u = math.add(u, math.constant(j * tile.threads));
    StagedPosition p;
    p.row = math.div(u, perRow);
    p.col = math.mul(math.rem(u, perRow), width);
    p.m = math.add(tile.m0, p.row);
    p.f = math.add(tile.n0, p.col);
    p.valid =
        math.andI(math.ult(p.m, tile.rowEnd ? tile.rowEnd
                                            : math.constant(geometry.gemmM())),
                  math.ult(p.f, math.constant(geometry.filters)));
    // The loop bound covers the first position only.
    if (j > 0)
      p.valid = math.andI(p.valid, math.ult(u, math.constant(positions)));
    batchPositions.push_back(std::move(p));
  }
  // The output coordinates of a position: clamped into the tile's rows for
  // reads issued before its validity test, as they are inside it.
  auto coordsOf = [&](const StagedPosition &p, bool clamp) {
    Value m = p.m;
    if (clamp)
      m = math.minU(m, math.sub(tile.rowEnd ? tile.rowEnd
                                            : math.constant(geometry.gemmM()),
                                math.constant(1)));
    auto pos = decomposeOutputPosition(math, m, ops.outputShape);
    return SmallVector<Value>{pos[0], pos[1], pos[2], pos[3], p.f};
  };
  if (reads)
    for (StagedPosition &p : batchPositions)
      p.coords = coordsOf(p, /*clamp=*/true);

  auto loadVector = [&](const FlatOperand &operand, Value index) {
    Type elem = getElementTypeOrSelf(operand.memref.getType());
    return vector::LoadOp::create(
               b, loc, VectorType::get({width}, elem), operand.memref,
               ValueRange{math.toIndex(index)}, false, alignmentOf(width, elem))
        .getResult();
  };
  // A read of the position's vector where it is valid, zeros elsewhere.
  auto guardedLoad = [&](const StagedPosition &p, const FlatOperand &operand,
                         Value index) -> Value {
    Type elem = getElementTypeOrSelf(operand.memref.getType());
    auto type = VectorType::get({width}, elem);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, p.valid,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, loadVector(operand, index));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(
            b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(elem)))
            .getResult());
    return ifOp.getResult(0);
  };

  // The batch's reads first.
  struct Reads {
    Value old, bias, residual;
  };
  SmallVector<Reads> batchReads;
  for (const StagedPosition &p : batchPositions) {
    Reads r;
    if (mode == StoreMode::accumulate)
      r.old = guardedLoad(p, ops.output, flatIndex(math, ops.output, p.coords));
    if (ops.bias)
      r.bias =
          guardedLoad(p, ops.bias, math.mul(p.coords[4], ops.bias.strides[0]));
    if (ops.residual)
      r.residual =
          guardedLoad(p, ops.residual, flatIndex(math, ops.residual, p.coords));
    batchReads.push_back(r);
  }

  for (auto [p, r] : llvm::zip_equal(batchPositions, batchReads)) {
    auto guardIf = scf::IfOp::create(b, loc, p.valid, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guardIf.thenBlock());
    auto accType = VectorType::get({width}, f32);
    Value acc = vector::LoadOp::create(
        b, loc, accType, tile.staging,
        ValueRange{
            math.toIndex(math.add(math.mul(p.row, tile.stagingStride), p.col))},
        false, alignmentOf(width, f32));
    if (p.coords.empty())
      p.coords = coordsOf(p, /*clamp=*/false);

    if (mode == StoreMode::partial) {
      // Slab `split` of the workspace: plain stores, each element once.
      SmallVector<Value> slabCoords = {tile.split};
      slabCoords.append(p.coords);
      vector::StoreOp::create(
          b, loc, acc, ops.output.memref,
          ValueRange{math.toIndex(flatIndex(math, ops.output, slabCoords))},
          false, alignmentOf(width, f32));
      continue;
    }

    auto outType = VectorType::get({width}, outElem);
    Value result = arith::ConstantOp::create(
        b, loc, outType,
        DenseElementsAttr::get(outType, b.getZeroAttr(outElem)));
    for (int64_t e = 0; e < width; ++e) {
      auto element = [&](Value vec) -> Value {
        return vec ? vector::ExtractOp::create(b, loc, vec, e).getResult()
                   : Value();
      };
      Value x = element(acc);
      if (r.old)
        x = arith::AddFOp::create(b, loc, x,
                                  emitFloatCast(b, loc, element(r.old), f32));
      Value y = emitEpilogue(b, loc, x, element(r.bias), element(r.residual),
                             activation, outElem);
      result = vector::InsertOp::create(b, loc, y, result, e);
    }
    vector::StoreOp::create(
        b, loc, result, ops.output.memref,
        ValueRange{math.toIndex(flatIndex(math, ops.output, p.coords))}, false,
        alignmentOf(width, outElem));
  }
}
