//===- EpilogueStore.cpp - accumulators to the output ---------------------===//
//
// Accumulator fragments are scattered across lanes in the mma layout (two
// adjacent columns per lane). They go through shared memory first (an f32
// tile with padded rows), so that each thread then owns `outputVector`
// consecutive output channels of one row: bias, residual and the old output
// are read, and the result written, with 16-byte accesses, coalesced across
// the warp. The epilogue math is ScalarEmitters', as on every target.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "conv3d/Conversion/Common/ScalarEmitters.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

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

void mlir::conv3d::sm80::emitEpilogueStore(KernelContext &ctx,
                                           ArrayRef<Value> accs) {
  const SM80KernelPlan &plan = ctx.plan;
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  KernelMath math = ctx.math();
  Type f32 = b.getF32Type();

  // Fragments to the staging tile, two adjacent columns at a time.
  auto pairType = VectorType::get({2}, f32);
  for (int64_t mi = 0; mi < plan.mmaTilesM; ++mi)
    for (int64_t ni = 0; ni < plan.mmaTilesN; ++ni)
      for (int64_t e = 0; e < 4; e += 2) {
        auto [r, c] = SM80KernelPlan::accumulatorPosition(math, ctx.lane, e);
        Value row =
            math.add(math.add(ctx.warpRow, math.constant(mi * kMmaM)), r);
        Value col =
            math.add(math.add(ctx.warpCol, math.constant(ni * kMmaN)), c);
        size_t base = (mi * plan.mmaTilesN + ni) * 4 + e;
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType, ValueRange{accs[base], accs[base + 1]});
        Value index = math.add(math.mul(row, plan.stagingStride), col);
        vector::StoreOp::create(b, loc, pair, ctx.staging,
                                ValueRange{math.toIndex(index)}, false,
                                llvm::MaybeAlign(8));
      }
  gpu::BarrierOp::create(b, loc);

  // Coalesced pass: thread-strided over (row, vector of channels).
  int64_t width = plan.outputVector;
  int64_t perRow = plan.tileN / width;
  auto loop =
      scf::ForOp::create(b, loc, ctx.tid, math.constant(plan.tileM * perRow),
                         math.constant(plan.threads));
  // (The loop runs in the kernel's index type.)
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value u = loop.getInductionVar();
  Value row = math.div(u, perRow);
  Value col = math.mul(math.rem(u, perRow), width);
  Value m = math.add(ctx.m0, row);
  Value f = math.add(ctx.n0, col);
  Value valid = math.andI(math.ult(m, math.constant(ctx.geometry.gemmM())),
                          math.ult(f, math.constant(ctx.geometry.filters)));
  auto guardIf = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
  b.setInsertionPointToStart(guardIf.thenBlock());

  auto accType = VectorType::get({width}, f32);
  Value acc = vector::LoadOp::create(
      b, loc, accType, ctx.staging,
      ValueRange{
          math.toIndex(math.add(math.mul(row, plan.stagingStride), col))},
      false, alignmentOf(width, f32));
  auto pos = decomposeOutputPosition(math, m, ctx.ops.outputShape);
  SmallVector<Value> coords = {pos[0], pos[1], pos[2], pos[3], f};
  Value outIndex = flatIndex(math, ctx.ops.output, coords);

  if (ctx.mode == StoreMode::atomic_add) {
    for (int64_t e = 0; e < width; ++e) {
      Value value = vector::ExtractOp::create(b, loc, acc, e);
      memref::AtomicRMWOp::create(
          b, loc, arith::AtomicRMWKind::addf, value, ctx.ops.output.memref,
          ValueRange{math.toIndex(math.add(outIndex, math.constant(e)))});
    }
    return;
  }

  auto loadVector = [&](const FlatOperand &operand, Value index) {
    Type elem = getElementTypeOrSelf(operand.memref.getType());
    return vector::LoadOp::create(
               b, loc, VectorType::get({width}, elem), operand.memref,
               ValueRange{math.toIndex(index)}, false, alignmentOf(width, elem))
        .getResult();
  };
  Value old = ctx.mode == StoreMode::accumulate
                  ? loadVector(ctx.ops.output, outIndex)
                  : Value();
  Value bias = ctx.ops.bias ? loadVector(ctx.ops.bias,
                                         math.mul(f, ctx.ops.bias.strides[0]))
                            : Value();
  Value residual = ctx.ops.residual
                       ? loadVector(ctx.ops.residual,
                                    flatIndex(math, ctx.ops.residual, coords))
                       : Value();
  auto outType = VectorType::get({width}, ctx.outElem);
  Value result = arith::ConstantOp::create(
      b, loc, outType,
      DenseElementsAttr::get(outType, b.getZeroAttr(ctx.outElem)));
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
                           ctx.activation, ctx.outElem);
    result = vector::InsertOp::create(b, loc, y, result, e);
  }
  vector::StoreOp::create(b, loc, result, ctx.ops.output.memref,
                          ValueRange{math.toIndex(outIndex)}, false,
                          alignmentOf(width, ctx.outElem));
}
