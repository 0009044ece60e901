//===- ElementType.h - host element types and their rounding ----*- C++ -*-===//
//
// The element types of host tensors (bf16, f16, f32) and exact conversions
// into them. This is part of the independent reference: it shares no code
// with the compiler, so every conversion is written out from the IEEE 754
// definitions rather than borrowed from APFloat or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_SUPPORT_ELEMENTTYPE_H
#define CONV3D_SUPPORT_ELEMENTTYPE_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace mlir::conv3d {

enum class ElementType { bf16, f16, f32 };

/// "bf16", "f16" or "f32".
llvm::StringRef stringifyElementType(ElementType type);
/// The inverse of stringifyElementType; none for any other string.
std::optional<ElementType> parseElementType(llvm::StringRef name);
/// Bytes per element: 2, 2 or 4.
size_t elementSize(ElementType type);

/// bf16 bits of `value`, rounded to nearest even in one step. Takes a double
/// so that a double is never rounded through float first (double rounding);
/// a float argument converts to double exactly. Subnormals are kept,
/// overflow gives infinity, NaN gives a quiet NaN of the same sign.
uint16_t toBF16Bits(double value);
/// IEEE binary16 bits of `value`, with the same rounding rules.
uint16_t toF16Bits(double value);
/// Exact decodings (every bf16 and f16 value is a float).
float bf16BitsToFloat(uint16_t bits);
float f16BitsToFloat(uint16_t bits);

/// `value` after one round-to-nearest-even conversion to `type`; for f32 it
/// is (double)(float)value.
double roundToElementType(double value, ElementType type);

} // namespace mlir::conv3d

#endif // CONV3D_SUPPORT_ELEMENTTYPE_H
