//===- TileQuantization.cpp - NVFP4 in the sm90 kernel's landed A tile ----===//
//
// NVFP4 fake quantization of the input in the tile (spec/nvfp4.md): TMA
// lands each K step's A tile (tile_m output positions x 64 channels of one
// tap, the halo and the rows past M as zeros) in the ring, 128-byte
// swizzled; the consumer warpgroups quantize it in place, one K step ahead
// of their wgmmas, and the wgmmas read the quantized tile.
//
// Who quantizes: each consumer warpgroup, the rows its own wgmmas read
// (cooperative: its share of the tile's rows; ping-pong: its whole tile).
// Compared with a dedicated quantizer warpgroup between the full barrier
// and a new "quantized" one, this needs no cross-warpgroup handshake (the
// warpgroup's own named barrier orders its threads' writes before its
// wgmmas), no fourth warpgroup's registers (the register file is already
// split 40 / 232 / 232 by setmaxnreg), and the quantization of step t+1
// still overlaps the tensor cores: the warpgroup issues step t's wgmmas
// (asynchronous) first and quantizes while they run.
//
// Where a block lies: with C a multiple of the block size (the host check,
// getTmaKernelProblem), the K blocks of the spec are consecutive channels of
// one tap, so a block is `blockSize` / 8 consecutive logical 16-byte chunks
// of one 128-byte row of the stage. TMA's 128-byte swizzle stores logical
// chunk j of row r at chunk j ^ (r % 8) (the stage is 1024-byte aligned),
// so a block's chunks are read and written at their swizzled addresses. A
// thread takes block `id` = its index + 128 i of the warpgroup's rows: the 8
// threads of a shared-memory wavefront then cover 8 distinct 16-byte bank
// groups for every block size (the swizzle is what spreads them).
//
// A block of 16 channels is read once into registers; blocks of 32 and 64
// are read twice, a chunk at a time (first the maximum, then the values),
// which keeps 8 values live instead of 32 or 64 beside the accumulators.
//
// Zeros stay zero: a block of the halo, of rows past M or of the channels
// past C (TMA's out-of-bounds fill) has maximum 0, hence scale 0, and
// quantizes to zeros (the spec's zero-block case); a block holding real
// channels holds no fill (C is a multiple of the block size), so its
// maximum is over exactly the spec's block.
//
//===----------------------------------------------------------------------===//

#include "SM90Kernel.h"

#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

void mlir::conv3d::sm90::emitQuantizeStage(SM90Kernel &k, Value stage,
                                           Value groupRow, Value groupTid) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const SM90KernelPlan &plan = k.plan;
  KernelMath m = k.i32();
  constexpr int64_t kChunkBytes = 16, kChunkElements = 8;
  // A block of 16 is quantized from registers; larger ones are read twice,
  // chunk by chunk (the maximum, then the values): 32 or 64 live values on
  // top of 128 accumulators (ping-pong, 256-row tiles) made ptxas spill.
  constexpr int64_t kChunksInRegisters = 2;
  int64_t chunksPerBlock = *plan.quantBlockSize / kChunkElements;
  int64_t blocks = plan.quantBlocks();
  auto chunkType = VectorType::get({kChunkElements}, k.inElem);
  Value rowsBase = m.add(k.aStage(stage), m.mul(groupRow, kRowBytes));

  for (int64_t i = 0; i < plan.quantBlocksPerThread; ++i) {
    Value id = m.add(groupTid, m.constant(i * kWarpgroupThreads));
    auto quantizeBlock = [&] {
      SmallVector<Value> pointers;
      for (int64_t v = 0; v < chunksPerBlock; ++v)
        pointers.push_back(
            k.sharedPtr(m.add(rowsBase, plan.quantChunkOffset(m, id, v))));
      auto load = [&](Value pointer) {
        return LLVM::LoadOp::create(b, loc, chunkType, pointer,
                                    /*alignment=*/kChunkBytes)
            .getResult();
      };
      auto store = [&](Value value, Value pointer) {
        LLVM::StoreOp::create(b, loc, value, pointer,
                              /*alignment=*/kChunkBytes);
      };
      if (chunksPerBlock <= kChunksInRegisters) {
        SmallVector<Value> chunks = llvm::map_to_vector(pointers, load);
        SmallVector<Value> quantized =
            emitNVFP4QuantizeVectors(b, loc, chunks, k.ops.amax, k.inElem);
        for (auto [value, pointer] : llvm::zip_equal(quantized, pointers))
          store(value, pointer);
        return;
      }
      Value blockMax = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      for (Value pointer : pointers)
        blockMax = emitAbsMaxUpdateVector(b, loc, blockMax, load(pointer));
      NVFP4BlockScale scale = emitNVFP4BlockScale(b, loc, blockMax, k.ops.amax);
      for (Value pointer : pointers)
        store(emitNVFP4QuantizeVector(b, loc, load(pointer), scale, k.inElem),
              pointer);
    };
    // The last round is partial where the blocks do not fill it (blocks of
    // 64 channels over 64 rows: one per thread of the first half).
    if ((i + 1) * kWarpgroupThreads <= blocks)
      quantizeBlock();
    else
      ifThen(b, loc, m.ult(id, m.constant(blocks)), quantizeBlock);
  }
  // The wgmmas read the tile through the async proxy: this thread's
  // generic-proxy writes must be visible to it (the warpgroup's barrier
  // then orders every thread's writes before the wgmmas).
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}
