//===- HostAllocationCheckTest.cpp - compiled code's own allocations ------===//
//
// The temporaries compiled host code allocates (memref.alloc -> malloc) are
// size-checked: conv3d-check-allocations refuses byte counts that overflow,
// and the engine refuses code whose temporaries exceed the machine's memory,
// both as errors, before anything runs.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/HostTensor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir::conv3d;

namespace {

/// A function on 4 floats with a temporary of `elements` floats.
std::string moduleWithTemporary(const std::string &elements) {
  return "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %e = tensor.empty() : tensor<" +
         elements +
         "xf32>\n"
         "  %f = tensor.insert_slice %x into %e[0] [4] [1] : tensor<4xf32> "
         "into tensor<" +
         elements +
         "xf32>\n"
         "  %s = tensor.extract_slice %f[1] [4] [1] : tensor<" +
         elements +
         "xf32> to tensor<4xf32>\n"
         "  return %s : tensor<4xf32>\n"
         "}\n";
}

Engine makeEngine() {
  CacheOptions cache;
  cache.directory.clear();
  return Engine(cache);
}

CompileOptions cpuOptions() {
  CompileOptions options;
  options.target = Target::cpu;
  options.resultsToOutParams = true;
  return options;
}

TEST(HostAllocationCheck, SmallTemporariesRun) {
  Engine engine = makeEngine();
  auto function =
      engine.compileFunction(moduleWithTemporary("16"), "main", cpuOptions());
  ASSERT_TRUE(bool(function)) << llvm::toString(function.takeError());
  std::vector<float> x = {1, 2, 3, 4}, y(4, -1.f);
  llvm::Error error = (*function)->run({x.data(), y.data()}, {});
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  // Elements 1..4 of a temporary holding x at 0..3: x[1..3], then what
  // tensor.empty left (not checked).
  EXPECT_EQ(y[0], 2.f);
  EXPECT_EQ(y[1], 3.f);
  EXPECT_EQ(y[2], 4.f);
}

TEST(HostAllocationCheck, TemporariesBeyondTheMachineAreAnError) {
  // Twice the machine's memory, in floats.
  int64_t elements = physicalMemoryBytes() / 2;
  if (elements <= 0 || elements > (int64_t(1) << 60))
    GTEST_SKIP() << "the machine's memory is unknown";
  Engine engine = makeEngine();
  auto function = engine.compileFunction(
      moduleWithTemporary(std::to_string(elements)), "main", cpuOptions());
  ASSERT_FALSE(bool(function));
  std::string message = llvm::toString(function.takeError());
  EXPECT_NE(message.find("the compiled code (its memref.alloc temporaries) "
                         "needs " +
                         std::to_string(elements * 4) + " bytes"),
            std::string::npos)
      << message;
}

TEST(HostAllocationCheck, ByteCountsBeyondInt64AreACompileError) {
  Engine engine = makeEngine();
  // 2^62 floats: 2^64 bytes.
  auto function = engine.compileFunction(
      moduleWithTemporary("4611686018427387904"), "main", cpuOptions());
  ASSERT_FALSE(bool(function));
  std::string message = llvm::toString(function.takeError());
  EXPECT_NE(message.find("needs more than 2^63 bytes"), std::string::npos)
      << message;
}

} // namespace
