//===- EnumKeyword.h - bare-keyword printing of enum attributes -*- C++ -*-===//
//
// `custom<EnumKeyword>($attr)` prints an enum attribute as its bare keyword
// (`activation = silu`) instead of the attribute's own form, which the
// generated printer prefixes with a space.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_IR_ENUMKEYWORD_H
#define CONV3D_LIB_IR_ENUMKEYWORD_H

#include "conv3d/IR/Conv3dAttrs.h"

#include "mlir/IR/OpImplementation.h"

namespace mlir::conv3d {

template <typename EnumAttrT>
ParseResult parseEnumKeyword(OpAsmParser &parser, EnumAttrT &attr) {
  using EnumT = decltype(std::declval<EnumAttrT>().getValue());
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolizeEnum<EnumT>(keyword);
  if (!value) {
    // Enum cases are numbered densely from 0; stringifyEnum of a value past
    // the last case is empty.
    std::string choices;
    for (uint32_t i = 0;; ++i) {
      StringRef name = stringifyEnum(static_cast<EnumT>(i));
      if (name.empty())
        break;
      choices += (choices.empty() ? "" : ", ") + name.str();
    }
    return parser.emitError(loc)
           << "expected one of [" << choices << "], got '" << keyword << "'";
  }
  attr = EnumAttrT::get(parser.getContext(), *value);
  return success();
}

template <typename EnumAttrT>
void printEnumKeyword(OpAsmPrinter &printer, Operation *, EnumAttrT attr) {
  printer << stringifyEnum(attr.getValue());
}

} // namespace mlir::conv3d

#endif // CONV3D_LIB_IR_ENUMKEYWORD_H
