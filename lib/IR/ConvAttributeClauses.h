//===- ConvAttributeClauses.h - conv3d.conv's keyword clauses ---*- C++ -*-===//
//
// `custom<ConvAttributeClauses>(...)`: the clauses after conv3d.conv's
// `outs(...)` (`overwrite`, `strides = [...]`, `dilations = [...]`,
// `padding = [...]`, `groups = g`, `filter_layout = k`, `activation = k`,
// `config = ...`) in any order, each at most once; printed in that order,
// without the defaults. A declarative format would take them only in one order
// and, for any other, stop at the first clause out of order with "cannot name
// an operation with no results".
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_IR_CONVATTRIBUTECLAUSES_H
#define CONV3D_LIB_IR_CONVATTRIBUTECLAUSES_H

#include "EnumKeyword.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::conv3d {

inline ParseResult parseConvAttributeClauses(
    OpAsmParser &parser, UnitAttr &overwrite, DenseI64ArrayAttr &strides,
    DenseI64ArrayAttr &dilations, DenseI64ArrayAttr &padding,
    IntegerAttr &groups, FilterLayoutAttr &filterLayout,
    ActivationAttr &activation, IGemmConfigAttr &config) {
  llvm::StringSet<> seen;
  auto parseArray = [&](DenseI64ArrayAttr &attr) -> ParseResult {
    attr = llvm::dyn_cast_or_null<DenseI64ArrayAttr>(
        DenseI64ArrayAttr::parse(parser, Type()));
    return success(bool(attr));
  };
  auto parseInteger = [&](IntegerAttr &attr) -> ParseResult {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    attr = parser.getBuilder().getI64IntegerAttr(value);
    return success();
  };
  while (true) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (failed(parser.parseOptionalKeyword(
            &keyword, {"overwrite", "strides", "dilations", "padding", "groups",
                       "filter_layout", "activation", "config"})))
      return success();
    if (!seen.insert(keyword).second)
      return parser.emitError(loc) << "'" << keyword << "' is given twice";
    if (keyword == "overwrite") {
      overwrite = UnitAttr::get(parser.getContext());
      continue;
    }
    if (parser.parseEqual())
      return failure();
    ParseResult parsed =
        keyword == "strides"         ? parseArray(strides)
        : keyword == "dilations"     ? parseArray(dilations)
        : keyword == "padding"       ? parseArray(padding)
        : keyword == "groups"        ? parseInteger(groups)
        : keyword == "filter_layout" ? parseEnumKeyword(parser, filterLayout)
        : keyword == "activation"    ? parseEnumKeyword(parser, activation)
                                     : parser.parseAttribute(config);
    if (failed(parsed))
      return failure();
  }
}

inline void
printConvAttributeClauses(OpAsmPrinter &printer, Operation *,
                          UnitAttr overwrite, DenseI64ArrayAttr strides,
                          DenseI64ArrayAttr dilations,
                          DenseI64ArrayAttr padding, IntegerAttr groups,
                          FilterLayoutAttr filterLayout,
                          ActivationAttr activation, IGemmConfigAttr config) {
  auto isAll = [](DenseI64ArrayAttr attr, int64_t value) {
    return !attr || llvm::all_of(attr.asArrayRef(),
                                 [&](int64_t v) { return v == value; });
  };
  if (overwrite)
    printer << " overwrite";
  for (auto [name, attr, neutral] :
       {std::tuple{"strides", strides, int64_t(1)},
        std::tuple{"dilations", dilations, int64_t(1)},
        std::tuple{"padding", padding, int64_t(0)}}) {
    if (isAll(attr, neutral))
      continue;
    printer << " " << name << " = ";
    printer.printStrippedAttrOrType(attr);
  }
  if (groups && groups.getInt() != 1)
    printer << " groups = " << groups.getInt();
  if (filterLayout && filterLayout.getValue() != FilterLayout::qrscf)
    printer << " filter_layout = " << stringifyEnum(filterLayout.getValue());
  if (activation && activation.getValue() != Activation::none)
    printer << " activation = " << stringifyEnum(activation.getValue());
  if (config) {
    printer << " config = ";
    printer.printAttribute(config);
  }
}

} // namespace mlir::conv3d

#endif // CONV3D_LIB_IR_CONVATTRIBUTECLAUSES_H
