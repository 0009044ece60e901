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

void mlir::conv3d::emitStagedEpilogue(KernelMath &math, const StagedTile &tile,
                                      const ConvGeometry &geometry,
                                      const KernelOperands &ops, StoreMode mode,
                                      Activation activation, Type outElem) {
  OpBuilder &b = math.b;
  Location loc = math.loc;
  Type f32 = b.getF32Type();

  // Coalesced pass: thread-strided over (row, vector of channels).
  int64_t width = tile.outputVector;
  int64_t perRow = tile.tileN / width;
  auto loop =
      scf::ForOp::create(b, loc, tile.tid, math.constant(tile.tileM * perRow),
                         math.constant(tile.threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value u = loop.getInductionVar();
  Value row = math.div(u, perRow);
  Value col = math.mul(math.rem(u, perRow), width);
  Value m = math.add(tile.m0, row);
  Value f = math.add(tile.n0, col);
  Value valid = math.andI(
      math.ult(m, tile.rowEnd ? tile.rowEnd : math.constant(geometry.gemmM())),
      math.ult(f, math.constant(geometry.filters)));
  auto guardIf = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
  b.setInsertionPointToStart(guardIf.thenBlock());

  auto accType = VectorType::get({width}, f32);
  Value acc = vector::LoadOp::create(
      b, loc, accType, tile.staging,
      ValueRange{
          math.toIndex(math.add(math.mul(row, tile.stagingStride), col))},
      false, alignmentOf(width, f32));
  auto pos = decomposeOutputPosition(math, m, ops.outputShape);
  SmallVector<Value> coords = {pos[0], pos[1], pos[2], pos[3], f};

  if (mode == StoreMode::partial) {
    // Slab `split` of the workspace: plain stores, each element once.
    SmallVector<Value> slabCoords = {tile.split};
    slabCoords.append(coords);
    vector::StoreOp::create(
        b, loc, acc, ops.output.memref,
        ValueRange{math.toIndex(flatIndex(math, ops.output, slabCoords))},
        false, alignmentOf(width, f32));
    return;
  }

  auto loadVector = [&](const FlatOperand &operand, Value index) {
    Type elem = getElementTypeOrSelf(operand.memref.getType());
    return vector::LoadOp::create(
               b, loc, VectorType::get({width}, elem), operand.memref,
               ValueRange{math.toIndex(index)}, false, alignmentOf(width, elem))
        .getResult();
  };
  Value outIndex = flatIndex(math, ops.output, coords);
  Value old = mode == StoreMode::accumulate ? loadVector(ops.output, outIndex)
                                            : Value();
  Value bias = ops.bias ? loadVector(ops.bias, math.mul(f, ops.bias.strides[0]))
                        : Value();
  Value residual =
      ops.residual
          ? loadVector(ops.residual, flatIndex(math, ops.residual, coords))
          : Value();
  auto outType = VectorType::get({width}, outElem);
  Value result = arith::ConstantOp::create(
      b, loc, outType, DenseElementsAttr::get(outType, b.getZeroAttr(outElem)));
  for (int64_t e = 0; e < width; ++e) {
    auto element = [&](Value vec) -> Value {
      return vec ? vector::ExtractOp::create(b, loc, vec, e).getResult()
                 : Value();
    };
    Value x = element(acc);
    if (old)
      x = arith::AddFOp::create(b, loc, x,
                                emitFloatCast(b, loc, element(old), f32));
    Value y = emitEpilogue(b, loc, x, element(bias), element(residual),
                           activation, outElem);
    result = vector::InsertOp::create(b, loc, y, result, e);
  }
  vector::StoreOp::create(b, loc, result, ops.output.memref,
                          ValueRange{math.toIndex(outIndex)}, false,
                          alignmentOf(width, outElem));
}
