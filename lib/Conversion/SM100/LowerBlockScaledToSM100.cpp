//===- LowerBlockScaledToSM100.cpp - conv3d-lower-block-scaled-to-sm100 ---===//
//
// Real NVFP4 on sm100: a memref convolution with a packed filter
// (filter_quant) and fused input quantization becomes the packing prepass
// of its input (conv3d.pack_nvfp4 into fresh code and scale buffers), the
// four TMA descriptors of SM100BlockScaledTma.h over the packed bytes
// (UINT8), and a persistent launch of the block-scaled kernel
// (BlockScaledKernel.cpp on the shared roles of Tcgen05Kernel.cpp). No
// sm_100 GPU has run this code: it is generated and assembled only.
//
//===----------------------------------------------------------------------===//

#include "SM100Kernel.h"

#include "conv3d/Conversion/Passes.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERBLOCKSCALEDTOSM100
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

namespace {

/// CUtensorMapDataType UINT8 and CUtensorMapSwizzle NONE / 128B.
constexpr int64_t kTmaUInt8 = 0, kTmaSwizzleNone = 0, kTmaSwizzle128B = 3;
/// Why the operands of `conv` are not what the block-scaled kernel reads,
/// or none: the packed filter's codes and scales dense (the tiled maps
/// view them as [F][taps][bytes]) from a 16-byte-aligned start.
std::optional<std::string> operandProblem(ConvOp conv) {
  for (auto [name, value] : {std::pair{"codes", conv.getFilter()},
                             std::pair{"scales", conv.getFilterScales()}}) {
    auto type = cast<MemRefType>(value.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!type.areTrailingDimsContiguous(type.getRank()) ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) || offset % 16 != 0)
      return llvm::formatv("the packed filter's {0} must be a dense buffer "
                           "starting at a multiple of 16 bytes (the TMA "
                           "maps view them as [F][taps][bytes])",
                           name)
          .str();
  }
  return std::nullopt;
}

/// A copy of dense scale rows `scales` (i8, last dimension the row) with
/// each row padded to `rowBytes` by zeros, made by a parallel loop (a
/// prepass kernel once the host loops go to the GPU).
Value emitPaddedScaleRows(OpBuilder &b, Location loc, Value scales,
                          int64_t rowBytes, IntegerAttr alignment) {
  auto type = cast<MemRefType>(scales.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t dense = shape.back();
  shape.back() = rowBytes;
  auto paddedType = MemRefType::get(shape, b.getI8Type());
  Value padded =
      memref::AllocOp::create(b, loc, paddedType, ValueRange{}, alignment);
  int64_t rows = 1;
  for (int64_t size : ArrayRef(shape).drop_back())
    rows *= size;
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // Over every byte of the padded rows: the dense scale or a zero.
  scf::ParallelOp::create(
      b, loc, ValueRange{index(0)}, ValueRange{index(rows * rowBytes)},
      ValueRange{index(1)}, [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        Value i = ivs[0];
        Value rowBytesV = arith::ConstantIndexOp::create(nb, nl, rowBytes);
        Value row = arith::DivUIOp::create(nb, nl, i, rowBytesV);
        Value column = arith::RemUIOp::create(nb, nl, i, rowBytesV);
        SmallVector<Value> at;
        Value rest = row;
        for (int64_t size : llvm::reverse(ArrayRef(shape).drop_back())) {
          Value sizeV = arith::ConstantIndexOp::create(nb, nl, size);
          at.push_back(arith::RemUIOp::create(nb, nl, rest, sizeV));
          rest = arith::DivUIOp::create(nb, nl, rest, sizeV);
        }
        std::reverse(at.begin(), at.end());
        Value inside = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::ult, column,
            arith::ConstantIndexOp::create(nb, nl, dense));
        auto ifOp = scf::IfOp::create(nb, nl, nb.getI8Type(), inside,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPointToStart(ifOp.thenBlock());
          SmallVector<Value> src(at);
          src.push_back(column);
          scf::YieldOp::create(
              nb, nl, memref::LoadOp::create(nb, nl, scales, src).getResult());
          nb.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(
              nb, nl,
              arith::ConstantIntOp::create(nb, nl, nb.getI8Type(), 0)
                  .getResult());
        }
        SmallVector<Value> dst(at);
        dst.push_back(column);
        memref::StoreOp::create(nb, nl, ifOp.getResult(0), padded, dst);
      });
  return padded;
}

/// Why the block-scaled kernel cannot take `conv` (a memref convolution
/// with a packed filter), or none; `plan` and `tma` are built when it can.
/// `tileN` and `stages` (0: the convolution's configuration's, else the
/// defaults) choose the tile.
std::optional<std::string> blockScaledProblem(ConvOp conv, int64_t tileN,
                                              int64_t stages,
                                              int64_t epilogueAlignment,
                                              BlockScaledPlan &plan,
                                              BlockScaledTmaPlan &tma) {
  const SM100BlockScaledFamily &family = getSM100BlockScaledFamily();
  // The verifier made the packed filter FQRSC with blocks of 16.
  ConvProblem problem = ConvProblem::fromConv(conv);
  OperandLayouts layouts;
  layouts.packedFilterProblem = operandProblem(conv);
  problem.layouts = layouts;
  if (std::optional<std::string> why = family.canImplement(problem))
    return why;
  if (!cast<MemRefType>(conv.getInit().getType()).hasStaticShape())
    return std::string("the block-scaled kernel needs static shapes");
  // The tile: the options', else the configuration's, else the family's.
  if (std::optional<IGemmConfigAttr> config = conv.getConfig()) {
    if (std::optional<std::string> why = family.configProblem(*config))
      return why;
    if (tileN == 0)
      tileN = config->getTileN();
    if (stages == 0)
      stages = config->getStages();
  }
  if (tileN == 0)
    tileN = family.defaultTileN(problem.geometry);
  if (stages == 0)
    stages = family.defaultStages(problem.geometry, tileN);
  return family.plan(problem, tileN, stages, epilogueAlignment, plan, tma);
}

/// The descriptor of `map` over `memref`'s bytes (conv3dTmaIm2colDescriptor
/// or conv3dTmaTiledDescriptor; their strides are in elements, here bytes).
Value emitPackedDescriptor(OpBuilder &b, Location loc, ModuleOp module,
                           Value memref, const PackedTensorMap &map) {
  int64_t swizzle = map.swizzle128B ? kTmaSwizzle128B : kTmaSwizzleNone;
  if (map.im2col) {
    // Innermost first in the map; the wrapper takes N, D, H, W, C, the
    // pitches of N, D, H, W, the corners and traversal strides D first.
    const auto &dim = map.globalDim;
    const auto &pitch = map.globalStrides;
    return emitTmaDescriptorCall(b, loc, module, kTmaIm2colDescriptorFn, memref,
                                 {kTmaUInt8,
                                  dim[4],
                                  dim[3],
                                  dim[2],
                                  dim[1],
                                  dim[0],
                                  pitch[3],
                                  pitch[2],
                                  pitch[1],
                                  pitch[0],
                                  map.lowerCorner[2],
                                  map.lowerCorner[1],
                                  map.lowerCorner[0],
                                  map.upperCorner[2],
                                  map.upperCorner[1],
                                  map.upperCorner[0],
                                  map.elementStrides[3],
                                  map.elementStrides[2],
                                  map.elementStrides[1],
                                  map.box[0],
                                  map.box[1],
                                  swizzle});
  }
  return emitTmaDescriptorCall(b, loc, module, kTmaTiledDescriptorFn, memref,
                               {kTmaUInt8, map.globalDim[0], map.globalDim[1],
                                map.globalDim[2], map.globalStrides[0],
                                map.globalStrides[1], map.box[0], map.box[1],
                                map.box[2], swizzle});
}

} // namespace

LogicalResult mlir::conv3d::lowerBlockScaledConvToSM100(RewriterBase &rewriter,
                                                        ConvOp conv,
                                                        int64_t tileN,
                                                        int64_t stages) {
  constexpr StringLiteral pass = "conv3d-lower-block-scaled-to-sm100";
  if (conv.hasTensorSemantics())
    return conv.emitError() << pass
                            << " works on the memref form; bufferize "
                               "first";
  ModuleOp module = conv->getParentOfType<ModuleOp>();
  if (!module)
    return conv.emitError() << pass
                            << " needs an enclosing module (for the "
                               "descriptor functions)";
  int64_t epilogueAlignment = std::min({elementAlignment(conv.getInit()),
                                        elementAlignment(conv.getBias()),
                                        elementAlignment(conv.getResidual())});
  BlockScaledPlan plan;
  BlockScaledTmaPlan tma;
  if (std::optional<std::string> problem =
          blockScaledProblem(conv, tileN, stages, epilogueAlignment, plan, tma))
    return conv.emitError()
           << "cannot lower to the block-scaled sm100 kernel: " << *problem;
  ConvGeometry g = conv.getGeometry();
  int64_t numMT = ceilDiv(g.gemmM(), plan.tileM);
  int64_t numNT = ceilDiv(g.gemmN(), plan.tileN);
  int64_t numTiles = numMT * numNT;
  if (std::optional<std::string> problem =
          tileIndexProblem(g, plan.tileM, numTiles))
    return conv.emitError()
           << "cannot lower to the block-scaled sm100 kernel: " << *problem;

  Location loc = conv.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(conv);
  KernelOperands ops;
  for (auto [flat, value] : {std::pair{&ops.input, conv.getInput()},
                             std::pair{&ops.filter, conv.getFilter()},
                             std::pair{&ops.output, conv.getInit()},
                             std::pair{&ops.bias, conv.getBias()},
                             std::pair{&ops.residual, conv.getResidual()}}) {
    FailureOr<FlatOperand> operand = flattenOperand(rewriter, loc, value);
    if (failed(operand))
      return conv.emitError() << "cannot lower to the block-scaled sm100 "
                                 "kernel: the operands need static strides";
    *flat = *operand;
  }
  ops.amax = conv.getAmax();
  ops.outputShape = getShape5(conv.getInit().getType());
  bool narrowIndices = fitsI32Indices(ops, g, plan.tileM, nvfp4::kChannelBlock);

  // The packing prepass: the input's codes and scales, NDHWC with C / 2
  // bytes a voxel and scale rows of scaleRowStride(C) bytes (C / 16
  // scales, padded with zeros to a multiple of 16 bytes: TMA's strides).
  std::array<int64_t, 5> shape = getShape5(conv.getInput().getType());
  int64_t scaleRow = scaleRowStride(g.channels);
  auto packedType = [&](int64_t last) {
    SmallVector<int64_t> dims(shape.begin(), shape.end());
    dims.back() = last;
    return MemRefType::get(dims, rewriter.getI8Type());
  };
  // TMA reads both from 16-byte-aligned addresses; 128 is ample.
  auto alignment = rewriter.getI64IntegerAttr(128);
  Value codes = memref::AllocOp::create(
      rewriter, loc, packedType(g.channels / 2), ValueRange{}, alignment);
  Value scales = memref::AllocOp::create(rewriter, loc, packedType(scaleRow),
                                         ValueRange{}, alignment);
  PackNVFP4Op::create(rewriter, loc, conv.getInput(), conv.getAmax(), codes,
                      scales, *conv.getInputQuant());
  // The packed filter's scales are dense ([F][Q][R][S][C / 16]); unless
  // that is already a multiple of 16 bytes, a prepass copies them into
  // padded rows.
  Value filterScales = conv.getFilterScales();
  Value paddedFilterScales;
  if (scaleRow != g.channels / kScaleBlock) {
    paddedFilterScales =
        emitPaddedScaleRows(rewriter, loc, filterScales, scaleRow, alignment);
    filterScales = paddedFilterScales;
  }

  Value descA =
      emitPackedDescriptor(rewriter, loc, module, codes, tma.activationCodes);
  Value descAScales =
      emitPackedDescriptor(rewriter, loc, module, scales, tma.activationScales);
  Value descB = emitPackedDescriptor(rewriter, loc, module, conv.getFilter(),
                                     tma.filterCodes);
  Value descBScales = emitPackedDescriptor(rewriter, loc, module, filterScales,
                                           tma.filterScales);
  // gsA * gsB: each global scale is amax / (6 * 448), spec/nvfp4.md.
  Value divisor = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(2688.0f));
  Value globalScale = arith::MulFOp::create(
      rewriter, loc,
      arith::DivFOp::create(rewriter, loc, conv.getAmax(), divisor),
      arith::DivFOp::create(rewriter, loc, conv.getFilterAmax(), divisor));

  StoreMode mode =
      conv.getOverwrite() ? StoreMode::overwrite : StoreMode::accumulate;
  Type inElem = getElementTypeOrSelf(conv.getInput().getType());
  Type outElem = getElementTypeOrSelf(conv.getInit().getType());
  if (failed(createPersistentLaunch(
          rewriter, conv, {descA, descAScales, descB, descBScales}, numTiles,
          kThreads, plan.kernel.sharedBytes, [&](gpu::LaunchOp launch) {
            Type indexType = narrowIndices ? Type(rewriter.getI32Type())
                                           : Type(rewriter.getIndexType());
            SM100Kernel k(rewriter, loc, plan.kernel, g, inElem, outElem, ops,
                          mode, conv.getActivation(), indexType);
            k.blockScaled = &plan;
            k.descA = descA;
            k.descB = descB;
            k.descAScales = descAScales;
            k.descBScales = descBScales;
            k.accumulatorScale = globalScale;
            k.numMT = numMT;
            k.numNT = numNT;
            k.numTiles = numTiles;
            buildSM100Kernel(k, launch);
          })))
    return failure();
  // After the launch's scf.if (createPersistentLaunch left the insertion
  // point inside it): the host code after the launch waits for it.
  rewriter.setInsertionPoint(conv);
  memref::DeallocOp::create(rewriter, loc, codes);
  memref::DeallocOp::create(rewriter, loc, scales);
  if (paddedFilterScales)
    memref::DeallocOp::create(rewriter, loc, paddedFilterScales);
  rewriter.eraseOp(conv);
  return success();
}

namespace {
struct LowerBlockScaledToSM100Pass
    : mlir::conv3d::impl::Conv3dLowerBlockScaledToSM100Base<
          LowerBlockScaledToSM100Pass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation()->walk([&](ConvOp conv) {
      if (conv.hasPackedFilter())
        convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (ConvOp conv : convs)
      if (failed(lowerBlockScaledConvToSM100(rewriter, conv, tileN, stages)))
        return signalPassFailure();
  }
};
} // namespace
