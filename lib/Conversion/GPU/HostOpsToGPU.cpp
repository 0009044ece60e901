//===- HostOpsToGPU.cpp - conv3d-lower-host-ops-to-gpu --------------------===//
//
// In a GPU pipeline every memref of the host function is device memory (the
// caller's buffers and the temporaries below), so the buffer work left in
// host code after the convolutions became kernels must run on the device.
// Upstream does the heavy lifting: linalg ops become scf.parallel loops,
// which gpu-map-parallel-loops and convert-parallel-loops-to-gpu turn into
// kernels once they are shaped as (blocks) x (threads). Generics that
// gather a transpose (conv3d.gpu_transpose_dims) get a shared-memory tiled
// kernel of their own (StagedTranspose.cpp).
//
//===----------------------------------------------------------------------===//

#include "StagedTranspose.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERHOSTOPSTOGPU
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Whether `op` is host code (not inside a kernel or a GPU module).
bool isHostOp(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>() &&
         !op->getParentOfType<gpu::GPUModuleOp>() &&
         !op->getParentOfType<gpu::GPUFuncOp>();
}

/// Runs `build` between a `gpu.wait async` and a `gpu.wait` on its token, so
/// the operation is ordered on the stream of the surrounding kernels.
template <typename BuildFn>
void onStream(RewriterBase &rewriter, Location loc, BuildFn build) {
  auto tokenType = gpu::AsyncTokenType::get(rewriter.getContext());
  Value start = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange{})
                    .getAsyncToken();
  Value done = build(start);
  gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{done});
}

/// Whether a copy between `a` and `b` is one contiguous block of bytes on
/// each side: what gpu.memcpy (cuMemcpyAsync of the byte count) copies.
bool isByteCopy(MemRefType a, MemRefType b) {
  return memref::isStaticShapeAndContiguousRowMajor(a) &&
         memref::isStaticShapeAndContiguousRowMajor(b);
}

/// Whether `memref`'s base pointer is a multiple of `bytes` (an i1 computed
/// on the host): vector accesses need their address aligned to their size.
Value isAlignedTo(OpBuilder &b, Location loc, Value memref, int64_t bytes) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value misalignment = arith::RemUIOp::create(
      b, loc, address, arith::ConstantIndexOp::create(b, loc, bytes));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, misalignment,
                               arith::ConstantIndexOp::create(b, loc, 0));
}

/// A copy of a contiguous operand into the channel window [0, C) of a
/// contiguous buffer of Cp > C channels (conv3d-relayout-filter's padding
/// for TMA): the window of each voxel is contiguous on both sides, so the
/// copy moves `width` channels per load and store (C = 230: two, 460: four)
/// over (voxels) x (C / width) threads instead of one element per thread
/// with a five-level index decomposition (bench/RESULTS.md: 110 us of a
/// 93 MB copy). The vector accesses need the operand's address aligned to
/// their size; the caller's pointer is checked on the host, and a
/// misaligned one takes the element-wise copy.
struct ChannelWindowCopy {
  Value source, buffer;
  int64_t width;
};

std::optional<ChannelWindowCopy> matchChannelWindowCopy(memref::CopyOp copy) {
  auto sourceType = cast<MemRefType>(copy.getSource().getType());
  auto window = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!window || sourceType.getRank() < 2 ||
      !memref::isStaticShapeAndContiguousRowMajor(sourceType))
    return std::nullopt;
  auto bufferType = cast<MemRefType>(window.getSource().getType());
  if (!memref::isStaticShapeAndContiguousRowMajor(bufferType) ||
      bufferType.getRank() != sourceType.getRank() ||
      bufferType.getElementType() != sourceType.getElementType() ||
      !window.hasUnitStride() || !window.hasZeroOffset())
    return std::nullopt;
  ArrayRef<int64_t> shape = sourceType.getShape();
  ArrayRef<int64_t> bufferShape = bufferType.getShape();
  if (shape.drop_back() != bufferShape.drop_back() ||
      window.getStaticSizes() != shape || shape.back() >= bufferShape.back())
    return std::nullopt;
  unsigned bits = sourceType.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  // Up to 16 bytes per access, as many channels as divide both rows.
  int64_t width = 16 / (bits / 8);
  while (width > 1 && (shape.back() % width || bufferShape.back() % width))
    width /= 2;
  if (width < 2)
    return std::nullopt;
  return ChannelWindowCopy{copy.getSource(), window.getSource(), width};
}

/// The linalg.fill of the added channels [C, Cp) of `copy`'s buffer before
/// it in its block, with nothing but side-effect-free ops in between (the
/// order conv3d-relayout-filter's padding bufferizes to): the vector loop
/// writes those channels too, one launch instead of two.
linalg::FillOp findAddedChannelsFill(memref::CopyOp copy,
                                     const ChannelWindowCopy &match) {
  ArrayRef<int64_t> shape = cast<MemRefType>(match.source.getType()).getShape();
  int64_t padded = cast<MemRefType>(match.buffer.getType()).getShape().back();
  for (Operation *op = copy->getPrevNode(); op; op = op->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    if (!fill) {
      if (!isMemoryEffectFree(op))
        return {};
      continue;
    }
    auto added = fill.getOutputs()[0].getDefiningOp<memref::SubViewOp>();
    if (!added || added.getSource() != match.buffer || !added.hasUnitStride())
      return {};
    SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
    offsets.back() = shape.back();
    sizes.back() = padded - shape.back();
    if (added.getStaticOffsets() != ArrayRef<int64_t>(offsets) ||
        added.getStaticSizes() != ArrayRef<int64_t>(sizes))
      return {};
    return fill;
  }
  return {};
}

/// The (voxels) x (channels) view of a contiguous memref.
Value flattenVoxels(OpBuilder &builder, Location loc, Value memref) {
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups[0].push_back(d);
  groups[1].push_back(rank - 1);
  return memref::CollapseShapeOp::create(builder, loc, memref, groups);
}

void vectorizeChannelWindowCopies(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<std::pair<memref::CopyOp, ChannelWindowCopy>> copies;
  func.walk([&](memref::CopyOp copy) {
    if (isHostOp(copy))
      if (std::optional<ChannelWindowCopy> match = matchChannelWindowCopy(copy))
        copies.emplace_back(copy, *match);
  });
  for (auto &[copy, match] : copies) {
    rewriter.setInsertionPoint(copy);
    Location loc = copy.getLoc();
    auto sourceType = cast<MemRefType>(match.source.getType());
    int64_t accessBytes =
        match.width * (sourceType.getElementTypeBitWidth() / 8);
    Value aligned = isAlignedTo(rewriter, loc, match.source, accessBytes);
    auto branch = scf::IfOp::create(rewriter, loc, aligned,
                                    /*withElseRegion=*/true);
    // Aligned: the vector copy.
    rewriter.setInsertionPointToStart(branch.thenBlock());
    Value source = flattenVoxels(rewriter, loc, match.source);
    Value buffer = flattenVoxels(rewriter, loc, match.buffer);
    ArrayRef<int64_t> flat = cast<MemRefType>(source.getType()).getShape();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value voxels = arith::ConstantIndexOp::create(rewriter, loc, flat[0]);
    linalg::FillOp fill = findAddedChannelsFill(copy, match);
    int64_t bufferChannels =
        cast<MemRefType>(buffer.getType()).getShape().back();
    Value chunks = arith::ConstantIndexOp::create(
        rewriter, loc, (fill ? bufferChannels : flat[1]) / match.width);
    Value sourceChunks =
        arith::ConstantIndexOp::create(rewriter, loc, flat[1] / match.width);
    Value widthValue =
        arith::ConstantIndexOp::create(rewriter, loc, match.width);
    auto vectorType =
        VectorType::get({match.width}, sourceType.getElementType());
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero, zero}, ValueRange{voxels, chunks},
        ValueRange{one, one},
        [&](OpBuilder &builder, Location loc, ValueRange ivs) {
          Value channel =
              arith::MulIOp::create(builder, loc, ivs[1], widthValue);
          auto load = [&](OpBuilder &builder, Location loc) {
            return vector::LoadOp::create(builder, loc, vectorType, source,
                                          ValueRange{ivs[0], channel},
                                          /*nontemporal=*/false,
                                          llvm::MaybeAlign(accessBytes))
                .getResult();
          };
          Value chunk;
          if (!fill) {
            chunk = load(builder, loc);
          } else {
            // Chunks past the operand's channels are the fill's.
            Value inside = arith::CmpIOp::create(
                builder, loc, arith::CmpIPredicate::ult, ivs[1], sourceChunks);
            chunk = scf::IfOp::create(
                        builder, loc, inside,
                        [&](OpBuilder &b, Location l) {
                          scf::YieldOp::create(b, l, load(b, l));
                        },
                        [&](OpBuilder &b, Location l) {
                          // Built in the loop: a scalar crosses into the
                          // kernel, a vector might not.
                          scf::YieldOp::create(
                              b, l,
                              vector::BroadcastOp::create(b, l, vectorType,
                                                          fill.getInputs()[0])
                                  .getResult());
                        })
                        .getResult(0);
          }
          vector::StoreOp::create(
              builder, loc, chunk, buffer, ValueRange{ivs[0], channel},
              /*nontemporal=*/false, llvm::MaybeAlign(accessBytes));
        });
    // Misaligned: the element-wise copy (stridedCopiesToLinalg's).
    rewriter.setInsertionPointToStart(branch.elseBlock());
    if (fill) {
      rewriter.clone(*fill.getOperation());
      rewriter.eraseOp(fill);
    }
    // The element-wise copy (stridedCopiesToLinalg's form), so that no
    // later vectorization looks at this copy again.
    linalg::CopyOp::create(rewriter, loc, copy.getSource(), copy.getTarget());
    rewriter.eraseOp(copy);
  }
}

/// The widest vector (up to 16 bytes of the widest element type) in which
/// every one of `types` (memrefs of one static shape) can be read or
/// written along its innermost runs: unit innermost strides, and every
/// other stride, every offset and the innermost size multiples of it; or
/// nothing (below two elements).
std::optional<int64_t> innermostVectorWidth(ArrayRef<MemRefType> types) {
  MemRefType first = types.front();
  if (!first.hasStaticShape() || first.getRank() < 1)
    return std::nullopt;
  SmallVector<int64_t> multiples = {first.getShape().back()};
  unsigned widestBits = 0;
  for (MemRefType type : types) {
    unsigned bits = type.getElementTypeBitWidth();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (type.getShape() != first.getShape() || bits % 8 != 0 ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) || strides.back() != 1 ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return std::nullopt;
    widestBits = std::max(widestBits, bits);
    multiples.push_back(offset);
    multiples.append(strides.begin(), strides.end() - 1);
  }
  int64_t width = 16 / (widestBits / 8);
  while (width > 1 &&
         llvm::any_of(multiples, [&](int64_t v) { return v % width != 0; }))
    width /= 2;
  if (width < 2)
    return std::nullopt;
  return width;
}

/// The vector width of a copy between `source` and `target` (same element
/// type, rank 2 or more: contiguous rank-1 copies are byte copies).
std::optional<int64_t> stridedCopyWidth(MemRefType source, MemRefType target) {
  if (source.getRank() < 2 ||
      source.getElementType() != target.getElementType())
    return std::nullopt;
  return innermostVectorWidth({source, target});
}

/// Copies between strided views whose innermost runs are contiguous (the
/// data gradient's stride phases inserted into the input gradient, every
/// other voxel of it): a parallel loop over (the outer positions) x (run
/// chunks) moving up to 16 bytes per access, behind a host check of both
/// base pointers' alignment (the element-wise copy otherwise).
void vectorizeStridedCopies(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<std::pair<memref::CopyOp, int64_t>> copies;
  func.walk([&](memref::CopyOp copy) {
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    if (!isHostOp(copy) || isByteCopy(source, target))
      return;
    if (std::optional<int64_t> width = stridedCopyWidth(source, target))
      copies.emplace_back(copy, *width);
  });
  for (auto &entry : copies) {
    memref::CopyOp copy = entry.first;
    int64_t width = entry.second;
    rewriter.setInsertionPoint(copy);
    Location loc = copy.getLoc();
    auto type = cast<MemRefType>(copy.getSource().getType());
    int64_t accessBytes = width * (type.getElementTypeBitWidth() / 8);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    Value aligned = arith::AndIOp::create(
        rewriter, loc,
        isAlignedTo(rewriter, loc, copy.getSource(), accessBytes),
        isAlignedTo(rewriter, loc, copy.getTarget(), accessBytes));
    auto branch = scf::IfOp::create(rewriter, loc, aligned,
                                    /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    SmallVector<int64_t> extents(type.getShape());
    extents.back() /= width;
    SmallVector<Value> lower(extents.size(), index(0)),
        steps(extents.size(), index(1)), upper;
    for (int64_t extent : extents)
      upper.push_back(index(extent));
    auto vectorType = VectorType::get({width}, type.getElementType());
    scf::ParallelOp::create(
        rewriter, loc, lower, upper, steps,
        [&](OpBuilder &builder, Location loc, ValueRange ivs) {
          SmallVector<Value> at(ivs);
          at.back() = arith::MulIOp::create(
              builder, loc, ivs.back(),
              arith::ConstantIndexOp::create(builder, loc, width));
          Value chunk = vector::LoadOp::create(
              builder, loc, vectorType, copy.getSource(), at,
              /*nontemporal=*/false, llvm::MaybeAlign(accessBytes));
          vector::StoreOp::create(builder, loc, chunk, copy.getTarget(), at,
                                  /*nontemporal=*/false,
                                  llvm::MaybeAlign(accessBytes));
        });
    rewriter.setInsertionPointToStart(branch.elseBlock());
    // The element-wise copy (stridedCopiesToLinalg's form), so that no
    // later vectorization looks at this copy again.
    linalg::CopyOp::create(rewriter, loc, copy.getSource(), copy.getTarget());
    rewriter.eraseOp(copy);
  }
}

/// Host element-wise generics (every map the identity, every iterator
/// parallel, a body of side-effect-free scalar ops: the data gradient's
/// separate activation derivative, say) over operands whose innermost runs
/// are contiguous: a parallel loop over (outer positions) x (run chunks)
/// that reads and writes up to 16 bytes per access and applies the body to
/// each lane, behind a host check of every base pointer's alignment (the
/// element-wise generic otherwise). One element per thread ran such a pass
/// at about 0.9 TB/s on the H200.
void vectorizeElementwiseGenerics(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<std::pair<linalg::GenericOp, int64_t>> generics;
  func.walk([&](linalg::GenericOp generic) {
    if (!isHostOp(generic) || !generic.hasPureBufferSemantics() ||
        generic.getNumDpsInits() == 0 ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return;
    for (Operation &op : generic.getBody()->without_terminator())
      if (isa<linalg::IndexOp>(op) || !isMemoryEffectFree(&op) ||
          op.getNumRegions() != 0)
        return;
    SmallVector<MemRefType> types =
        llvm::map_to_vector(generic->getOperands(), [](Value operand) {
          return cast<MemRefType>(operand.getType());
        });
    if (std::optional<int64_t> width = innermostVectorWidth(types))
      generics.emplace_back(generic, *width);
  });
  for (auto [genericOp, vectorWidth] : generics) {
    // (Named copies: lambdas below capture them, C++17 lacks captured
    // structured bindings.)
    linalg::GenericOp generic = genericOp;
    int64_t width = vectorWidth;
    rewriter.setInsertionPoint(generic);
    Location loc = generic.getLoc();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    auto accessBytes = [&](Value operand) {
      return width *
             int64_t(
                 cast<MemRefType>(operand.getType()).getElementTypeBitWidth() /
                 8);
    };
    Value aligned = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (Value operand : generic->getOperands())
      aligned = arith::AndIOp::create(
          rewriter, loc, aligned,
          isAlignedTo(rewriter, loc, operand, accessBytes(operand)));
    auto branch = scf::IfOp::create(rewriter, loc, aligned,
                                    /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    auto shape = cast<MemRefType>(generic->getOperand(0).getType()).getShape();
    SmallVector<int64_t> extents(shape);
    extents.back() /= width;
    SmallVector<Value> lower(extents.size(), index(0)),
        steps(extents.size(), index(1)), upper;
    for (int64_t extent : extents)
      upper.push_back(index(extent));
    Block *body = generic.getBody();
    scf::ParallelOp::create(
        rewriter, loc, lower, upper, steps,
        [&](OpBuilder &builder, Location loc, ValueRange ivs) {
          SmallVector<Value> at(ivs);
          at.back() = arith::MulIOp::create(
              builder, loc, ivs.back(),
              arith::ConstantIndexOp::create(builder, loc, width));
          auto vectorOf = [&](Value operand) {
            return VectorType::get(
                {width}, cast<MemRefType>(operand.getType()).getElementType());
          };
          // Every operand the body reads (outs too, where it reads them).
          SmallVector<Value> loaded;
          for (auto [operand, arg] :
               llvm::zip_equal(generic->getOperands(), body->getArguments()))
            loaded.push_back(arg.use_empty()
                                 ? Value()
                                 : vector::LoadOp::create(
                                       builder, loc, vectorOf(operand), operand,
                                       at,
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(accessBytes(operand)))
                                       .getResult());
          SmallVector<Value> results;
          for (Value init : generic.getDpsInits())
            results.push_back(arith::ConstantOp::create(
                builder, loc, vectorOf(init),
                DenseElementsAttr::get(
                    vectorOf(init),
                    builder.getZeroAttr(vectorOf(init).getElementType()))));
          for (int64_t lane = 0; lane < width; ++lane) {
            IRMapping mapping;
            for (auto [arg, vector] :
                 llvm::zip_equal(body->getArguments(), loaded))
              if (vector)
                mapping.map(
                    arg, vector::ExtractOp::create(builder, loc, vector, lane)
                             .getResult());
            for (Operation &op : body->without_terminator())
              builder.clone(op, mapping);
            auto yield = cast<linalg::YieldOp>(body->getTerminator());
            for (auto [i, value] : llvm::enumerate(yield.getValues()))
              results[i] = vector::InsertOp::create(
                  builder, loc, mapping.lookupOrDefault(value), results[i],
                  lane);
          }
          for (auto [init, result] :
               llvm::zip_equal(generic.getDpsInits(), results))
            vector::StoreOp::create(builder, loc, result, init, at,
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(accessBytes(init)));
        });
    // Misaligned: the element-wise generic, moved to the other branch.
    generic->moveBefore(branch.elseBlock()->getTerminator());
  }
}

/// A host memref.copy with a strided side (into a subview of a padded
/// buffer, out of a slice) is a linalg.copy, which hostLoopsToDeviceLoops
/// runs as a kernel: gpu.memcpy would copy the bytes contiguously and
/// scatter the elements (a tensor.pad's interior came out shuffled).
void stridedCopiesToLinalg(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) {
    if (isHostOp(copy) &&
        !isByteCopy(cast<MemRefType>(copy.getSource().getType()),
                    cast<MemRefType>(copy.getTarget().getType())))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    rewriter.eraseOp(copy);
  }
}

LogicalResult moveBufferOps(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op) &&
        isHostOp(op))
      ops.push_back(op);
  });
  auto tokenType = gpu::AsyncTokenType::get(func.getContext());
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      gpu::AllocOp deviceAlloc;
      onStream(rewriter, loc, [&](Value token) {
        deviceAlloc = gpu::AllocOp::create(
            rewriter, loc, alloc.getType(), tokenType, ValueRange{token},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        return deviceAlloc.getAsyncToken();
      });
      rewriter.replaceOp(alloc, deviceAlloc.getMemref());
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      onStream(rewriter, loc, [&](Value token) {
        return gpu::DeallocOp::create(rewriter, loc, tokenType,
                                      ValueRange{token}, dealloc.getMemref())
            .getAsyncToken();
      });
      rewriter.eraseOp(dealloc);
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      onStream(rewriter, loc, [&](Value token) {
        return gpu::MemcpyOp::create(rewriter, loc, tokenType,
                                     ValueRange{token}, copy.getTarget(),
                                     copy.getSource())
            .getAsyncToken();
      });
      rewriter.eraseOp(copy);
    }
  }
  return success();
}

/// Every linalg op of host code becomes parallel loops; then every
/// outermost host parallel loop (those and the ones other passes left, such
/// as conv3d-quantize-to-loops') is collapsed to one dimension and tiled
/// into (blocks) x (blockSize) for the upstream GPU mapping.
LogicalResult hostLoopsToDeviceLoops(func::FuncOp func, int64_t blockSize) {
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::LinalgOp> linalgOps;
  func.walk([&](linalg::LinalgOp op) {
    if (isHostOp(op) && op.hasPureBufferSemantics())
      linalgOps.push_back(op);
  });
  for (linalg::LinalgOp op : linalgOps) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, op);
    if (failed(loops))
      return op.emitError("cannot run this operation on the GPU");
    rewriter.eraseOp(op);
  }

  SmallVector<scf::ParallelOp> parallels;
  func.walk([&](scf::ParallelOp loop) {
    if (isHostOp(loop) && !loop->getParentOfType<scf::ParallelOp>())
      parallels.push_back(loop);
  });
  for (scf::ParallelOp parallel : parallels) {
    // One dimension, so that one tiling gives (blocks) x (threads).
    if (parallel.getNumLoops() > 1) {
      std::vector<unsigned> all(parallel.getNumLoops());
      std::iota(all.begin(), all.end(), 0);
      auto next = std::next(parallel->getIterator());
      collapseParallelLoops(rewriter, parallel, {all});
      parallel = cast<scf::ParallelOp>(*std::prev(next));
    }
    scf::tileParallelLoop(parallel, {blockSize}, /*noMinMaxBounds=*/true);
  }
  return success();
}

constexpr int64_t kMaxThreadsPerBlock = 1024;

struct LowerHostOpsToGPUPass
    : mlir::conv3d::impl::Conv3dLowerHostOpsToGPUBase<LowerHostOpsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    // The block size is the kernels' threads per block: CUDA launches at
    // most 1024.
    if (blockSize <= 0 || blockSize > kMaxThreadsPerBlock) {
      getOperation()->emitError()
          << "conv3d-lower-host-ops-to-gpu: block-size must be in [1, "
          << kMaxThreadsPerBlock << "] (threads per block), got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    getOperation()->walk([&](func::FuncOp func) {
      if (isHostOp(func))
        funcs.push_back(func);
    });
    for (func::FuncOp func : funcs) {
      RewritePatternSet patterns(&getContext());
      populateEpilogueToLinalgPatterns(patterns);
      populateVoxelRmsScaleToLoopsPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
      vectorizeChannelWindowCopies(func);
      vectorizeStridedCopies(func);
      vectorizeElementwiseGenerics(func);
      stridedCopiesToLinalg(func);
      lowerStagedTransposes(func);
      if (failed(hostLoopsToDeviceLoops(func, blockSize)) ||
          failed(moveBufferOps(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
