//===- Conv3dAttrs.cpp - conv3d attribute verifiers and parsing -----------===//

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::conv3d;

bool mlir::conv3d::isValidNVFP4BlockSize(int64_t blockSize) {
  return blockSize == 16 || blockSize == 32 || blockSize == 64 ||
         blockSize == 128 || blockSize == 256;
}

LogicalResult NVFP4Attr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t blockSize) {
  if (!isValidNVFP4BlockSize(blockSize))
    return emitError() << "NVFP4 block size must be 16, 32, 64, 128 or 256, "
                          "got "
                       << blockSize;
  return success();
}

LogicalResult IGemmConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t tileM, int64_t tileN,
    int64_t tileK, int64_t stages, int64_t warpsM, int64_t warpsN,
    KOrder kOrder, int64_t splitK, Target kernel, KernelSchedule schedule,
    int64_t clusterM, Mainloop mainloop) {
  auto positive = [&](int64_t value, StringRef name) -> LogicalResult {
    if (value > 0)
      return success();
    return emitError() << "igemm_config " << name << " must be positive, got "
                       << value;
  };
  if (failed(positive(tileM, "tile_m")) || failed(positive(tileN, "tile_n")) ||
      failed(positive(tileK, "tile_k")) || failed(positive(stages, "stages")) ||
      failed(positive(warpsM, "warps_m")) ||
      failed(positive(warpsN, "warps_n")) ||
      failed(positive(splitK, "split_k")))
    return failure();
  // Tiles are held whole (an f32 accumulator of tile_m x tile_n per block),
  // so absurd sizes are a user error rather than a slow compile.
  // Compare by division: the products of huge sizes would overflow.
  constexpr int64_t kMaxTileElements = 1 << 20;
  auto tooLarge = [](int64_t a, int64_t b) { return a > kMaxTileElements / b; };
  if (tooLarge(tileM, tileN) || tooLarge(tileM, tileK) ||
      tooLarge(tileK, tileN))
    return emitError() << "igemm_config tiles larger than " << kMaxTileElements
                       << " elements are not supported (tile_m = " << tileM
                       << ", tile_n = " << tileN << ", tile_k = " << tileK
                       << ")";
  if (clusterM != 1 && clusterM != 2)
    return emitError() << "igemm_config cluster_m must be 1 or 2, got "
                       << clusterM;
  if (stages > 8)
    return emitError() << "igemm_config stages must be at most 8, got "
                       << stages;
  // More K ranges than any convolution has K tiles would only be clamped.
  constexpr int64_t kMaxSplitK = 4096;
  if (splitK > kMaxSplitK)
    return emitError() << "igemm_config split_k must be from 1 to "
                       << kMaxSplitK << ", got " << splitK;
  if (tileM % warpsM != 0 || tileN % warpsN != 0)
    return emitError() << "igemm_config warp layout " << warpsM << "x" << warpsN
                       << " does not divide the " << tileM << "x" << tileN
                       << " tile";
  return success();
}

IGemmConfigAttr mlir::conv3d::parseIGemmConfig(MLIRContext *context,
                                               StringRef text,
                                               std::string &error) {
  context->getOrLoadDialect<Conv3dDialect>();
  // Reuse the attribute's own parser and verifier: `a=1,b=2` becomes
  // `#conv3d.igemm_config<a = 1, b = 2>`.
  SmallVector<StringRef> pairs;
  text.split(pairs, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string body;
  for (StringRef pair : pairs) {
    auto [key, value] = pair.split('=');
    key = key.trim();
    value = value.trim();
    if (key.empty() || value.empty() || value.contains('=') ||
        value.contains(' ') || key.contains(' ')) {
      error = ("expected key=value pairs separated by commas in the tile "
               "configuration, got '" +
               pair + "'")
                  .str();
      return {};
    }
    if (!body.empty())
      body += ", ";
    body += (key + " = " + value).str();
  }
  std::string source = "#conv3d.igemm_config<" + body + ">";
  std::string diagnostics;
  IGemmConfigAttr config;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        diagnostics += "; ";
      diagnostics += diag.str();
      return success();
    });
    config = llvm::dyn_cast_or_null<IGemmConfigAttr>(
        parseAttribute(source, context));
  }
  if (!config)
    error = "invalid tile configuration '" + text.str() + "'" +
            (diagnostics.empty() ? "" : ": " + diagnostics);
  return config;
}

std::string mlir::conv3d::formatIGemmConfig(IGemmConfigAttr config) {
  // The attribute's own printer writes `#conv3d.igemm_config<a = 1, b = 2>`
  // without its defaulted parameters; the option form drops the spaces.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  Attribute(config).print(os);
  StringRef body = StringRef(printed).split('<').second.rsplit('>').first;
  std::string text;
  for (char c : body)
    if (c != ' ')
      text += c;
  return text;
}
