//===- WarpMma.cpp - ldmatrix + mma.sync over one ring stage --------------===//
//
// A warp owns a (mmaTilesM*16) x (mmaTilesN*8) block of the tile. For each
// 16-deep slice of the stage it loads its A fragments (ldmatrix.x4, one per
// 16-row group) and B fragments (ldmatrix.x4, .trans for [k][n] storage,
// covering two 8-column groups; .x2 for an odd last group), then issues
// mma.sync.m16n8k16 for every (row group, column group) pair. bf16 operands
// travel as packed i32 pairs, f16 as vector<2xf16>, as NVVM expects.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

/// The 32-bit registers of an ldmatrix result, in the form mma.sync takes.
static SmallVector<Value> toMmaOperands(KernelContext &ctx, Value matrices,
                                        int64_t count) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<Value> regs;
  for (int64_t i = 0; i < count; ++i) {
    Value pair = vector::ExtractOp::create(b, loc, matrices, i);
    if (ctx.inElem.isBF16()) {
      Value packed = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), pair);
      pair = vector::ExtractOp::create(b, loc, packed, 0);
    }
    regs.push_back(pair);
  }
  return regs;
}

static Value ldmatrix(KernelContext &ctx, Value smem, Value index,
                      int64_t tiles, bool transpose) {
  auto type = VectorType::get({tiles, 2}, ctx.inElem);
  return nvgpu::LdMatrixOp::create(ctx.b, ctx.loc, type, smem,
                                   ValueRange{ctx.math().toIndex(index)},
                                   transpose, tiles);
}

SmallVector<Value> mlir::conv3d::sm80::emitWarpMma(KernelContext &ctx,
                                                   Value stage,
                                                   ArrayRef<Value> accs) {
  const SM80KernelPlan &plan = ctx.plan;
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  KernelMath math = ctx.math();
  Value aBase = math.mul(stage, plan.aTile.elements());
  Value bBase = math.mul(stage, plan.bTile.elements());
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  NVVM::MMATypes ptxType =
      ctx.inElem.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // A lane's address inside ldmatrix.x2 only matters for lanes 0-15.
  Value lane16 = math.rem(ctx.lane, 16);

  SmallVector<Value> result(accs.begin(), accs.end());
  for (int64_t kk = 0; kk < plan.kSteps; ++kk) {
    Value k0 = math.constant(kk * kMmaK);
    SmallVector<SmallVector<Value>> aFrags;
    for (int64_t mi = 0; mi < plan.mmaTilesM; ++mi) {
      Value row0 = math.add(ctx.warpRow, math.constant(mi * kMmaM));
      auto [row, col] =
          SM80KernelPlan::aFragmentAddress(math, ctx.lane, row0, k0);
      Value index = math.add(aBase, plan.aTile.offset(math, row, col));
      aFrags.push_back(
          toMmaOperands(ctx, ldmatrix(ctx, ctx.smemA, index, 4, false), 4));
    }
    SmallVector<SmallVector<Value>> bFrags;
    for (int64_t ni = 0; ni < plan.mmaTilesN; ni += 2) {
      bool pair = ni + 1 < plan.mmaTilesN;
      Value n0 = math.add(ctx.warpCol, math.constant(ni * kMmaN));
      Value lane = pair ? ctx.lane : lane16;
      std::array<Value, 2> at =
          plan.bKContiguous
              ? SM80KernelPlan::bFragmentAddressKContiguous(math, lane, k0, n0)
              : SM80KernelPlan::bFragmentAddress(math, lane, k0, n0);
      Value index = math.add(bBase, plan.bTile.offset(math, at[0], at[1]));
      int64_t tiles = pair ? 4 : 2;
      SmallVector<Value> regs = toMmaOperands(
          ctx, ldmatrix(ctx, ctx.smemB, index, tiles, !plan.bKContiguous),
          tiles);
      bFrags.push_back({regs[0], regs[1]});
      if (pair)
        bFrags.push_back({regs[2], regs[3]});
    }
    for (int64_t mi = 0; mi < plan.mmaTilesM; ++mi)
      for (int64_t ni = 0; ni < plan.mmaTilesN; ++ni) {
        size_t base = (mi * plan.mmaTilesN + ni) * 4;
        SmallVector<Value> c(result.begin() + base, result.begin() + base + 4);
        Value mma = NVVM::MmaOp::create(
            b, loc, resultType, aFrags[mi], bFrags[ni], c,
            ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t e = 0; e < 4; ++e)
          result[base + e] = LLVM::ExtractValueOp::create(b, loc, mma, e);
      }
  }
  return result;
}
