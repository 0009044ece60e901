//===- StagedTranspose.cpp - transposing host generics via shared memory --===//
//
// conv3d-lower-host-ops-to-gpu runs host linalg ops one element per thread,
// consecutive threads along the output's innermost dimension. For a
// generic that gathers a transpose, every thread then reads a different
// 32-byte sector: the weight gradient's operands ran at 8-17% of the
// memory limit that way (bench/RESULTS.md, tenth session). A generic
// marked `conv3d.gpu_transpose_dims = array<i64: a, b>` (a: the dimension
// along which its reads are contiguous; b: the output's innermost) runs
// instead as the usual shared-memory transpose: 32 x 32 tiles of (a, b),
// computed by 32 x 8 threads with consecutive threads along a (coalesced
// reads), staged in shared memory (33 columns: no bank conflicts either
// way), and stored with consecutive threads along b (coalesced writes).
//
//===----------------------------------------------------------------------===//

#include "StagedTranspose.h"

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/Transforms/AttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::conv3d;

namespace {

constexpr int64_t kTile = 32;
constexpr int64_t kRows = 8;
/// The least extent of the read-contiguous dimension worth staging. Under
/// it most of a tile's threads idle, and the generic's own lowering
/// (consecutive threads along b) reads nearly contiguously anyway: a weight
/// gradient's input gather of C = 2 channels ran 4.6 ms staged (137 GB/s;
/// 7x7 stem, H200, bench/RESULTS.md, eleventh session).
constexpr int64_t kMinStagedExtent = 8;
/// CUDA's limit on a grid's y and z extents.
constexpr int64_t kMaxGridYZ = 65535;

/// The staged dimensions (a, b) of `op`, or nothing where it is not a
/// generic this lowering takes: pure buffers, no inputs, one static output
/// written element by element (identity map, parallel loops), a body that
/// reads its indices but not the output's old value.
std::optional<std::pair<int64_t, int64_t>>
matchStagedTranspose(linalg::GenericOp op) {
  auto dims = op->getAttrOfType<DenseI64ArrayAttr>(kGpuTransposeDimsAttrName);
  if (!dims || dims.size() != 2 || !op.hasPureBufferSemantics() ||
      op.getNumDpsInputs() != 0 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  auto type = cast<MemRefType>(op.getDpsInits()[0].getType());
  int64_t rank = type.getRank(), a = dims[0], b = dims[1];
  if (!type.hasStaticShape() || a == b || a < 0 || b < 0 || a >= rank ||
      b >= rank || !op.getRegion().front().getArgument(0).use_empty() ||
      type.getDimSize(a) < kMinStagedExtent)
    return std::nullopt;
  int64_t rest = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && d != b)
      rest *= type.getDimSize(d);
  if (rest > kMaxGridYZ || ceilDiv(type.getDimSize(a), kTile) > kMaxGridYZ)
    return std::nullopt;
  return std::make_pair(a, b);
}

/// Clones `op`'s body at `indices` and returns the value it yields.
Value cloneBodyAt(OpBuilder &b, linalg::GenericOp op, ArrayRef<Value> indices) {
  IRMapping mapping;
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), indices[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
  return mapping.lookupOrDefault(yield.getValues()[0]);
}

void lowerStagedTranspose(RewriterBase &rewriter, linalg::GenericOp op,
                          int64_t a, int64_t b) {
  Location loc = op.getLoc();
  Value out = op.getDpsInits()[0];
  auto type = cast<MemRefType>(out.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> others;
  int64_t rest = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != a && d != b) {
      others.push_back(d);
      rest *= shape[d];
    }
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto workgroup = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto tileType = MemRefType::get({kTile, kTile + 1}, type.getElementType(),
                                  nullptr, workgroup);
  auto tokenType = gpu::AsyncTokenType::get(rewriter.getContext());
  Value start = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange{})
                    .getAsyncToken();
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index(ceilDiv(shape[b], kTile)),
      index(ceilDiv(shape[a], kTile)), index(rest), index(kTile), index(kRows),
      index(1), /*dynamicSharedMemorySize=*/Value(), tokenType,
      ValueRange{start}, TypeRange{tileType});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    Value tile = launch.getWorkgroupAttributions()[0];
    Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(rewriter, loc, x, y);
    };
    auto mulConst = [&](Value x, int64_t v) -> Value {
      return arith::MulIOp::create(rewriter, loc, x, index(v));
    };
    Value b0 = mulConst(launch.getBlockIds().x, kTile);
    Value a0 = mulConst(launch.getBlockIds().y, kTile);
    // The other dimensions' indices, row-major in block z.
    SmallVector<Value> indices(type.getRank());
    Value remaining = launch.getBlockIds().z;
    for (int64_t d : llvm::reverse(others)) {
      indices[d] =
          arith::RemUIOp::create(rewriter, loc, remaining, index(shape[d]));
      remaining =
          arith::DivUIOp::create(rewriter, loc, remaining, index(shape[d]));
    }
    auto inside = [&](Value ia, Value ib) -> Value {
      Value inA = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, ia, index(shape[a]));
      Value inB = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, ib, index(shape[b]));
      return arith::AndIOp::create(rewriter, loc, inA, inB);
    };
    // One phase: the tile's kRows-row steps, each thread at (its x, its
    // row) along (`alongX`, the other of a and b) under a bounds guard.
    auto phase = [&](bool xAlongA, function_ref<void(Value, Value)> body) {
      for (int64_t row = 0; row < kTile; row += kRows) {
        Value local = add(ty, index(row));
        Value ia = add(a0, xAlongA ? tx : local);
        Value ib = add(b0, xAlongA ? local : tx);
        auto guard = scf::IfOp::create(rewriter, loc, inside(ia, ib),
                                       /*withElseRegion=*/false);
        OpBuilder::InsertionGuard inner(rewriter);
        rewriter.setInsertionPointToStart(guard.thenBlock());
        indices[a] = ia;
        indices[b] = ib;
        body(local, tx);
      }
    };
    // Compute with thread x along a (coalesced reads), into tile[b][a].
    phase(/*xAlongA=*/true, [&](Value local, Value x) {
      Value value = cloneBodyAt(rewriter, op, indices);
      memref::StoreOp::create(rewriter, loc, value, tile, ValueRange{local, x});
    });
    gpu::BarrierOp::create(rewriter, loc);
    // Store with thread x along b (coalesced writes), from tile[b][a].
    phase(/*xAlongA=*/false, [&](Value local, Value x) {
      Value value =
          memref::LoadOp::create(rewriter, loc, tile, ValueRange{x, local});
      memref::StoreOp::create(rewriter, loc, value, out, indices);
    });
    gpu::TerminatorOp::create(rewriter, loc);
  }
  gpu::WaitOp::create(rewriter, loc, Type(),
                      ValueRange{launch.getAsyncToken()});
  rewriter.eraseOp(op);
}

} // namespace

void mlir::conv3d::lowerStagedTransposes(func::FuncOp func) {
  SmallVector<std::tuple<linalg::GenericOp, int64_t, int64_t>> matches;
  func.walk([&](linalg::GenericOp op) {
    if (op->getParentOfType<gpu::LaunchOp>())
      return;
    if (auto dims = matchStagedTranspose(op))
      matches.emplace_back(op, dims->first, dims->second);
  });
  IRRewriter rewriter(func.getContext());
  for (auto [op, a, b] : matches) {
    rewriter.setInsertionPoint(op);
    lowerStagedTranspose(rewriter, op, a, b);
  }
}
