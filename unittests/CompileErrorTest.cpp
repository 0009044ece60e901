//===- CompileErrorTest.cpp - compile errors without IR dumps -------------===//
//
// The engine's compile errors (what the C API and Python report too) name
// their problem and hint at CONV3D_DUMP_IR_ON_ERROR, without the generic IR
// of the failing operation, which they carry only when that variable is 1
// (issue 26, item 6).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/IRDumps.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace mlir::conv3d;

namespace {

/// 10^10 output rows: more than the sm90 kernel's 31-bit tile indices take
/// (refused while lowering; --emit=lowered needs no toolkit).
ConvSpec tooManyRows() {
  ConvSpec spec;
  spec.geometry.batch = 10000;
  spec.geometry.inputSize = {100, 100, 100};
  spec.geometry.channels = 64;
  spec.geometry.window = {3, 3, 3};
  spec.geometry.filters = 64;
  spec.geometry.padLow = {1, 1, 1};
  spec.geometry.padHigh = {1, 1, 1};
  return spec;
}

std::string loweringError() {
  Engine engine{CacheOptions{}};
  CompileOptions options;
  options.target = Target::sm90;
  llvm::Expected<std::string> text =
      engine.emit(tooManyRows(), options, EmitStage::Lowered);
  return text ? "" : llvm::toString(text.takeError());
}

/// Sets an environment variable for the lifetime of the object.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved)
      setenv(name, saved->c_str(), 1);
    else
      unsetenv(name);
  }
  const char *name;
  std::optional<std::string> saved;
};

TEST(CompileError, NamesTheProblemWithoutIR) {
  ScopedEnv env(kDumpIROnErrorVariable.data(), "0");
  std::string error = loweringError();
  EXPECT_NE(error.find("do not fit 31 bits"), std::string::npos) << error;
  EXPECT_NE(error.find(dumpIROnErrorHint()), std::string::npos) << error;
  EXPECT_EQ(error.find("see current operation"), std::string::npos) << error;
  EXPECT_EQ(error.find("scf.forall"), std::string::npos) << error;
}

TEST(CompileError, CarriesTheIROnRequest) {
  ScopedEnv env(kDumpIROnErrorVariable.data(), "1");
  std::string error = loweringError();
  EXPECT_NE(error.find("do not fit 31 bits"), std::string::npos) << error;
  EXPECT_NE(error.find("see current operation"), std::string::npos) << error;
  EXPECT_NE(error.find("\"scf.forall\""), std::string::npos) << error;
  EXPECT_EQ(error.find(dumpIROnErrorHint()), std::string::npos) << error;
}

} // namespace
