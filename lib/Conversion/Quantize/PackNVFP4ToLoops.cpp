//===- PackNVFP4ToLoops.cpp - conv3d.pack_nvfp4 to a loop over blocks -----===//
//
// The packing prepass of real NVFP4: one scf.parallel over the blocks of
// the last dimension (a thread per block once mapped to a GPU), each
// iteration loading its block with vector loads, computing the block scale
// with the shared NVFP4 emitters (ScalarEmitters.h, the fake path's exact
// operations) and storing the block's codes, two per byte, and its E4M3
// scale byte. It runs on the CPU target and on every GPU (it is an
// ordinary kernel, no sm100 instruction), which is how it is checked bit
// for bit against lib/Quant/NVFP4Reference.cpp.
//
//===----------------------------------------------------------------------===//

#include "FlatView.h"
#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::conv3d;

namespace {

Value f32Const(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}
Value i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
}

/// The E4M3 bits (i32, 0..0x7E) of `s8`, an f32 E4M3 value in [0, 448]:
/// subnormals (below 2^-6) are s8 * 2^9; a normal's byte is its f32
/// exponent rebiased from 127 to 7 above its top 3 fraction bits, which is
/// (f32 bits >> 20) - (120 << 3).
Value emitE4M3Bits(OpBuilder &b, Location loc, Value s8) {
  Type i32 = b.getI32Type();
  Value subnormal = arith::FPToUIOp::create(
      b, loc, i32, arith::MulFOp::create(b, loc, s8, f32Const(b, loc, 512.0f)));
  Value bits = arith::BitcastOp::create(b, loc, i32, s8);
  Value normal = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32Const(b, loc, 20)),
      i32Const(b, loc, 120 << 3));
  Value isSubnormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            s8, f32Const(b, loc, 0x1p-6f));
  return arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
}

/// The 3-bit E2M1 index (i32) of `q`, an E2M1 magnitude (f32 0, .5, 1, 1.5,
/// 2, 3, 4 or 6): 2q below 1; above, the f32 exponent rebiased from 127 to
/// 1 above the top fraction bit, (f32 bits >> 22) - (126 << 1).
Value emitE2M1Index(OpBuilder &b, Location loc, Value q) {
  Type i32 = b.getI32Type();
  Value small = arith::FPToUIOp::create(
      b, loc, i32, arith::MulFOp::create(b, loc, q, f32Const(b, loc, 2.0f)));
  Value bits = arith::BitcastOp::create(b, loc, i32, q);
  Value large = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32Const(b, loc, 22)),
      i32Const(b, loc, 126 << 1));
  Value isSmall = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, q,
                                        f32Const(b, loc, 1.0f));
  return arith::SelectOp::create(b, loc, isSmall, small, large);
}

struct PackNVFP4ToBlockLoop : OpRewritePattern<PackNVFP4Op> {
  PackNVFP4ToBlockLoop(MLIRContext *context, int64_t alignment)
      : OpRewritePattern(context), alignment(alignment) {}

  LogicalResult matchAndRewrite(PackNVFP4Op op,
                                PatternRewriter &rewriter) const override {
    auto inType = cast<MemRefType>(op.getInput().getType());
    for (Value operand : {op.getInput(), op.getCodes(), op.getScales()})
      if (!cast<MemRefType>(operand.getType()).getLayout().isIdentity())
        return rewriter.notifyMatchFailure(op, "operands are not contiguous");

    Location loc = op.getLoc();
    int64_t blockSize = op.getFormat().getBlockSize();
    Type elementType = inType.getElementType();
    int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
    int64_t width =
        std::min<int64_t>(blockSize, std::max<int64_t>(1, 16 / bytes));
    int64_t codeBytes = blockSize / 2;
    auto align = [&](int64_t natural) {
      return alignment > 0 ? llvm::MaybeAlign(std::min(alignment, natural))
                           : llvm::MaybeAlign();
    };

    auto flat = [&](Value memref) { return flatView(rewriter, loc, memref); };
    Value input = flat(op.getInput());
    Value codes = flat(op.getCodes());
    Value scales = flat(op.getScales());
    // Blocks per row, and the scale rows' length (longer: padded rows).
    int64_t channels = inType.getShape().back();
    int64_t rowBlocks = channels / blockSize;
    int64_t scaleRow =
        cast<MemRefType>(op.getScales().getType()).getShape().back();
    Value numBlocks = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(
            rewriter, loc, memref::DimOp::create(rewriter, loc, scales, 0),
            arith::ConstantIndexOp::create(rewriter, loc, scaleRow)),
        arith::ConstantIndexOp::create(rewriter, loc, rowBlocks));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value amax = op.getAmax();
    Type i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
    auto vectorType = VectorType::get({width}, elementType);
    auto codeVectorType = VectorType::get({codeBytes}, i8);

    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{numBlocks}, ValueRange{one},
        [&](OpBuilder &b, Location nl, ValueRange ivs) {
          Value block = ivs[0];
          Value base = arith::MulIOp::create(
              b, nl, block, arith::ConstantIndexOp::create(b, nl, blockSize));
          SmallVector<Value> elements;
          for (int64_t chunk = 0; chunk < blockSize / width; ++chunk) {
            Value offset = arith::AddIOp::create(
                b, nl, base,
                arith::ConstantIndexOp::create(b, nl, chunk * width));
            Value vec = vector::LoadOp::create(
                b, nl, vectorType, input, ValueRange{offset},
                /*nontemporal=*/false, align(width * bytes));
            for (int64_t i = 0; i < width; ++i)
              elements.push_back(
                  emitFloatCast(b, nl, vector::ExtractOp::create(b, nl, vec, i),
                                b.getF32Type()));
          }
          // The fake path's block scale, and s8 itself for its bits.
          Value blockMax = f32Const(b, nl, 0.0f);
          for (Value e : elements)
            blockMax = emitAbsMaxUpdate(b, nl, blockMax, e);
          NVFP4BlockScale scale = emitNVFP4BlockScale(b, nl, blockMax, amax);
          Value gs =
              arith::DivFOp::create(b, nl, amax, f32Const(b, nl, 2688.0f));
          // s8 cannot be recovered from the rounded scale = s8 * gs:
          // recompute it with the emitter's operations.
          Value sixGs = arith::MulFOp::create(b, nl, f32Const(b, nl, 6.0f), gs);
          Value s = arith::MinimumFOp::create(
              b, nl, arith::DivFOp::create(b, nl, blockMax, sixGs),
              f32Const(b, nl, 448.0f));
          Value s8 = emitRoundToE4M3(
              b, nl,
              arith::SelectOp::create(b, nl, scale.zeroBlock,
                                      f32Const(b, nl, 0.0f), s));
          Value zeroI32 = i32Const(b, nl, 0);
          Value scaleBits = arith::SelectOp::create(
              b, nl, scale.zeroBlock, zeroI32, emitE4M3Bits(b, nl, s8));

          SmallVector<Value> codeValues;
          for (Value v : elements) {
            Value a = arith::MulFOp::create(
                b, nl, math::AbsFOp::create(b, nl, v), scale.inverse);
            Value index = emitE2M1Index(b, nl, emitRoundToE2M1(b, nl, a));
            Value sign = arith::ShLIOp::create(
                b, nl,
                arith::ShRUIOp::create(b, nl,
                                       arith::BitcastOp::create(b, nl, i32, v),
                                       i32Const(b, nl, 31)),
                i32Const(b, nl, 3));
            Value code = arith::OrIOp::create(b, nl, sign, index);
            // FP4 has no NaN: a NaN input is +0, as is every zero block.
            Value isNaN =
                arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, v, v);
            Value isZero = arith::OrIOp::create(b, nl, isNaN, scale.zeroBlock);
            codeValues.push_back(
                arith::SelectOp::create(b, nl, isZero, zeroI32, code));
          }
          SmallVector<Value> packed;
          for (int64_t j = 0; j < blockSize; j += 2) {
            Value high = arith::ShLIOp::create(b, nl, codeValues[j + 1],
                                               i32Const(b, nl, 4));
            packed.push_back(arith::TruncIOp::create(
                b, nl, i8, arith::OrIOp::create(b, nl, codeValues[j], high)));
          }
          Value codeOffset = arith::MulIOp::create(
              b, nl, block, arith::ConstantIndexOp::create(b, nl, codeBytes));
          vector::StoreOp::create(
              b, nl,
              vector::FromElementsOp::create(b, nl, codeVectorType, packed),
              codes, ValueRange{codeOffset}, /*nontemporal=*/false,
              align(codeBytes));
          Value scaleBit8 = arith::TruncIOp::create(b, nl, i8, scaleBits);
          if (scaleRow == rowBlocks) {
            memref::StoreOp::create(b, nl, scaleBit8, scales,
                                    ValueRange{block});
            return;
          }
          // A padded row: the scale at its place, and the row's last block
          // writes the padding's zeros.
          auto index = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, nl, v).getResult();
          };
          Value row = arith::DivUIOp::create(b, nl, block, index(rowBlocks));
          Value inRow = arith::RemUIOp::create(b, nl, block, index(rowBlocks));
          Value rowStart = arith::MulIOp::create(b, nl, row, index(scaleRow));
          memref::StoreOp::create(
              b, nl, scaleBit8, scales,
              ValueRange{arith::AddIOp::create(b, nl, rowStart, inRow)});
          Value last = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq,
                                             inRow, index(rowBlocks - 1));
          scf::IfOp::create(b, nl, last, [&](OpBuilder &tb, Location tl) {
            Value zero8 = arith::ConstantIntOp::create(tb, tl, i8, 0);
            for (int64_t j = rowBlocks; j < scaleRow; ++j)
              memref::StoreOp::create(tb, tl, zero8, scales,
                                      ValueRange{arith::AddIOp::create(
                                          tb, tl, rowStart, index(j))});
            scf::YieldOp::create(tb, tl);
          });
        });
    rewriter.eraseOp(op);
    return success();
  }

  int64_t alignment;
};

} // namespace

void mlir::conv3d::populatePackNVFP4ToLoopsPatterns(RewritePatternSet &patterns,
                                                    int64_t alignment) {
  patterns.add<PackNVFP4ToBlockLoop>(patterns.getContext(), alignment);
}
