//===- FuzzerSupport.h - what the conv3d fuzzers share -----------*- C++
//-*-===//
//
// Each input is parsed in a fresh context (a crash then reproduces from that
// input alone, with no state left by earlier ones) holding every dialect
// conv3d-opt accepts, single-threaded, with diagnostics discarded: a
// rejected input is the expected outcome, only a crash, a sanitizer report
// or a broken invariant (trap) is a finding.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TOOLS_FUZZERS_FUZZERSUPPORT_H
#define CONV3D_TOOLS_FUZZERS_FUZZERSUPPORT_H

#include "conv3d/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <memory>
#include <string>

namespace conv3d_fuzz {

/// The dialect registry of conv3d-opt, built once.
inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *instance = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::conv3d::registerAllDialects(*r);
    return r;
  }();
  return *instance;
}

/// A context for one input.
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>(
      registry(), mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics of rejected inputs are expected; printing them would only
  // slow the fuzzer down.
  context->getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  return context;
}

/// Parses `data` as a module and verifies it; null when it is not a valid
/// module. The text is copied so that the parser sees a NUL-terminated
/// buffer, as it does when reading a file.
inline mlir::OwningOpRef<mlir::ModuleOp>
parseValidModule(mlir::MLIRContext &context, const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz-input");
  if (!module || mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

} // namespace conv3d_fuzz

#endif // CONV3D_TOOLS_FUZZERS_FUZZERSUPPORT_H
