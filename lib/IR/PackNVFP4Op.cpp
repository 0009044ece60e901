//===- PackNVFP4Op.cpp - conv3d.pack_nvfp4 verifier and effects -----------===//

#include "OpVerification.h"

#include "conv3d/IR/Conv3dOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::detail;

LogicalResult PackNVFP4Op::verify() {
  auto inType = cast<MemRefType>(getInput().getType());
  auto codesType = cast<MemRefType>(getCodes().getType());
  auto scalesType = cast<MemRefType>(getScales().getType());
  int64_t blockSize = getFormat().getBlockSize();
  if (!isSupportedComputeType(inType.getElementType()))
    return emitOpError() << "input element type must be bf16, f16 or f32, got "
                         << inType.getElementType();
  for (auto [type, name] :
       {std::pair{codesType, "codes"}, std::pair{scalesType, "scales"}})
    if (!type.getElementType().isSignlessInteger(8))
      return emitOpError() << name << " element type must be i8, got "
                           << type.getElementType();
  int64_t rank = inType.getRank();
  if (rank == 0)
    return emitOpError("input must have at least one dimension");
  if (codesType.getRank() != rank || scalesType.getRank() != rank)
    return emitOpError() << "codes and scales must have the input's rank "
                         << rank;
  int64_t channels = inType.getDimSize(rank - 1);
  if (ShapedType::isDynamic(channels) || channels % blockSize != 0)
    return emitOpError() << "the last dimension must be a static multiple of "
                            "the block size "
                         << blockSize << ", got "
                         << formatShape(inType.getShape());
  if (failed(verifyElementCount(getOperation(), getInput(), "input")))
    return failure();
  // Leading sizes as the input's where both are static; the last exactly.
  auto check = [&](MemRefType type, int64_t last, StringRef name,
                   StringRef why) -> LogicalResult {
    SmallVector<int64_t> expected(inType.getShape());
    expected.back() = last;
    for (auto [actual, wanted] : llvm::zip_equal(type.getShape(), expected))
      if (actual != wanted && !ShapedType::isDynamic(actual) &&
          !ShapedType::isDynamic(wanted))
        return emitOpError()
               << name << " shape must be " << formatShape(expected) << " ("
               << why << "), got " << formatShape(type.getShape());
    if (type.getDimSize(rank - 1) != last)
      return emitOpError() << name << " shape must be " << formatShape(expected)
                           << " (" << why << "), got "
                           << formatShape(type.getShape());
    return success();
  };
  if (failed(check(codesType, channels / 2, "codes", "two codes per byte")))
    return failure();
  // Scale rows may be padded (longer than a byte per block).
  int64_t scaleRow = scalesType.getDimSize(rank - 1);
  if (ShapedType::isDynamic(scaleRow) || scaleRow < channels / blockSize)
    return check(scalesType, channels / blockSize, "scales",
                 "one byte per block, or more to pad each row");
  return check(scalesType, scaleRow, "scales", "padded rows");
}

void PackNVFP4Op::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getInputMutable(),
                       /*stage=*/0, /*effectOnFullRegion=*/true,
                       SideEffects::DefaultResource::get());
  for (OpOperand *operand : {&getCodesMutable(), &getScalesMutable()})
    effects.emplace_back(MemoryEffects::Write::get(), operand, /*stage=*/0,
                         /*effectOnFullRegion=*/true,
                         SideEffects::DefaultResource::get());
}
