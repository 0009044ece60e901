//===- TmaStoreEpilogue.cpp - the sm90 kernel's TMA-store epilogue --------===//
//
// For an overwritten, dense 16-bit output without residual (the plan's
// tmaStore), the epilogue needs no pass over shared memory in f32: each
// consumer thread applies bias, activation and cast to its accumulator
// fragments in registers (ScalarEmitters' epilogue, as on every target) and
// writes them as 16-bit pairs into a staging tile laid out as the output
// descriptor's boxes (tile_m rows x 64 channels, 128-byte swizzled: 16-byte
// chunk j of row r at chunk j ^ (r % 8), which also spreads a fragment
// store's 8 rows over all 32 banks; or x 32 channels, 64-byte swizzled:
// j ^ ((r / 2) % 4), equally conflict-free). One thread then stores the tile
// with a TMA store per box and the consumers go straight on with the next
// tile's mainloop; the store reads the staging asynchronously, and the next
// epilogue waits for that read before writing the staging again.
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

void mlir::conv3d::sm90::emitTmaStoreEpilogue(
    SM90Kernel &k, const AccumulatorFragments &fragments,
    ValueRange rowCoordinates, Value n0, Value staging, Value isIssuer,
    function_ref<void()> barrier) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  KernelMath math = k.math();
  Type i32 = b.getI32Type();
  // A box: tile_m rows of `rowBytes` (64 or 32 16-bit columns), swizzled
  // over its 16-byte chunks: chunk j of row r at j ^ ((r * rowBytes / 128)
  // % chunks), the TMA's 128- and 64-byte swizzle patterns.
  int64_t rowBytes = plan.storeBoxColumns * 2;
  int64_t chunksPerRow = rowBytes / 16;
  int64_t boxBytes = plan.tileM * rowBytes;

  // The previous tile's stores must have read the staging before it is
  // written again (they were issued a whole mainloop ago).
  ifThen(b, loc, isIssuer, [&] {
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         b.getUnitAttr());
  });
  barrier();

  Value laneRow = m.div(fragments.lane, 4);
  Value laneByte = m.mul(m.rem(fragments.lane, 4), 4);
  auto pairType = VectorType::get({2}, k.outElem);
  Value laneColumn = m.mul(m.rem(fragments.lane, 4), 2);
  // The bias of a lane's two adjacent columns (c even), one 8-byte load
  // when the bias is contiguous and F even; columns past F are never stored
  // (the TMA store clips them) and read a clamped index.
  auto biasPairAt = [&](Value column) -> std::array<Value, 2> {
    if (!k.ops.bias)
      return {Value(), Value()};
    int64_t stride = k.ops.bias.strides[0];
    Type biasElem = getElementTypeOrSelf(k.ops.bias.memref.getType());
    auto biasPairType = VectorType::get({2}, biasElem);
    bool paired = stride == 1 && k.g.filters % 2 == 0 &&
                  elementAlignment(k.ops.bias.memref) >= 2;
    auto load = [&](Value f) -> Value {
      Value index =
          math.mul(k.indexType.isInteger(32)
                       ? f
                       : arith::IndexCastUIOp::create(b, loc, k.indexType, f)
                             .getResult(),
                   stride);
      if (paired)
        return vector::LoadOp::create(
            b, loc, biasPairType, k.ops.bias.memref,
            ValueRange{math.toIndex(index)}, false,
            llvm::MaybeAlign(2 * biasElem.getIntOrFloatBitWidth() / 8));
      return memref::LoadOp::create(b, loc, k.ops.bias.memref,
                                    ValueRange{math.toIndex(index)});
    };
    Value f = m.add(n0, column);
    if (paired) {
      Value pair = load(m.minU(f, m.constant(k.g.filters - 2)));
      return {vector::ExtractOp::create(b, loc, pair, 0).getResult(),
              vector::ExtractOp::create(b, loc, pair, 1).getResult()};
    }
    Value last = m.constant(k.g.filters - 1);
    return {load(m.minU(f, last)), load(m.minU(m.add(f, m.constant(1)), last))};
  };
  // wgmma's accumulator layout: warp w of a warpgroup owns rows
  // 16w..16w+15 of each m64 tile; per n8 column group g, a lane holds
  // accumulators 4g, 4g+1 at (lane/4, 2*(lane%4) + {0, 1}) and 4g+2, 4g+3
  // 8 rows below. Column groups are the outer loop, so each bias pair is
  // loaded once for all of a lane's rows.
  for (int64_t group = 0; group < plan.tileN / 8; ++group) {
    int64_t column = group * 8;
    Value col = m.add(m.constant(column), laneColumn);
    std::array<Value, 2> bias = biasPairAt(col);
    // Its box, and its 16-byte chunk of the box's row.
    int64_t box = column / plan.storeBoxColumns;
    int64_t chunk = (column % plan.storeBoxColumns) / 8;
    for (auto [j, acc] : llvm::enumerate(fragments.accs)) {
      Value tileRow =
          m.add(fragments.groupRow,
                m.add(m.constant(j * kWgmmaM), m.mul(fragments.warp, 16)));
      for (int64_t half = 0; half < 2; ++half) {
        int64_t i = 4 * group + 2 * half;
        Value row = m.add(m.add(tileRow, laneRow), m.constant(8 * half));
        Value pair = arith::ConstantOp::create(
            b, loc, pairType,
            DenseElementsAttr::get(pairType, b.getZeroAttr(k.outElem)));
        for (int64_t e = 0; e < 2; ++e) {
          Value x = LLVM::ExtractValueOp::create(b, loc, acc, i + e);
          Value y = emitEpilogue(b, loc, x, bias[e], Value(), k.activation,
                                 k.outElem);
          pair = vector::InsertOp::create(b, loc, y, pair, e);
        }
        Value swizzled = m.bitXor(
            m.constant(chunk),
            m.bitAnd(m.div(row, kRowBytes / rowBytes), chunksPerRow - 1));
        Value offset = m.add(
            m.add(staging, m.constant(box * boxBytes)),
            m.add(m.add(m.mul(row, rowBytes), m.mul(swizzled, 16)), laneByte));
        Value word = LLVM::BitcastOp::create(b, loc, i32, pair);
        LLVM::StoreOp::create(b, loc, word, k.sharedPtr(offset), 4);
      }
    }
  }
  // The TMA unit (the async proxy) reads what these generic stores wrote.
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  barrier();
  ifThen(b, loc, isIssuer, [&] {
    for (int64_t box = 0; box < plan.epilogueChunks; ++box) {
      SmallVector<Value> coords = {
          m.add(n0, m.constant(box * plan.storeBoxColumns))};
      llvm::append_range(coords, rowCoordinates);
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, loc, k.descC,
          k.sharedPtr(m.add(staging, m.constant(box * boxBytes))), coords,
          Value(),
          NVVM::TMAStoreModeAttr::get(b.getContext(), NVVM::TMAStoreMode::TILE),
          Value());
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  });
}

void mlir::conv3d::sm90::emitTmaStoreDrain(SM90Kernel &k, Value isIssuer) {
  // The output is complete when the last stores have written it, before
  // the block exits.
  ifThen(k.b, k.loc, isIssuer, [&] {
    NVVM::CpAsyncBulkWaitGroupOp::create(k.b, k.loc, k.b.getI32IntegerAttr(0),
                                         UnitAttr());
  });
}
