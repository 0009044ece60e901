//===- CAPIRunPackedTest.cpp - conv3d_run_packed of the C API -------------===//
//
// conv3d_run_packed takes conv3d_run's arguments in one block (the Python
// hit path's ctypes call): on the CPU target it computes what conv3d_run
// computes, bit for bit, and both match the float64 reference on random data
// with poisoned outputs; a refilled block runs other buffers, at any
// alignment; its errors are conv3d_run's, written to the block's buffer and
// kept as the thread's conv3d_last_error().
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "conv3d/CAPI/conv3d.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Support/HostTensor.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <thread>

using namespace mlir::conv3d;
using namespace mlir::conv3d::capi_test;

namespace {

/// A 1x3x4x5x8 input, 3x3x3 window, 6 filters, padding 1, bias and relu.
conv3d_spec smallSpec() {
  conv3d_spec spec =
      makeSpec({1, 3, 4, 5, 8}, {3, 3, 3}, 6, CONV3D_QRSCF, CONV3D_F32);
  for (int64_t &p : spec.padding)
    p = 1;
  spec.has_bias = 1;
  spec.activation = CONV3D_ACT_RELU;
  return spec;
}

class CAPIRunPacked : public CAPITest {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CAPITest::SetUp());
    spec = smallSpec();
    conv = conv3d_compile(engine, &spec, "target=cpu", error, sizeof(error));
    ASSERT_NE(conv, nullptr) << error;
  }
  void TearDown() override {
    conv3d_conv_destroy(conv);
    CAPITest::TearDown();
  }

  /// Random operands with seed `seed` and a poisoned output.
  void makeOperands(uint64_t seed) {
    input = HostTensor::zeros(ElementType::f32, {1, 3, 4, 5, 8});
    filter = HostTensor::zeros(ElementType::f32, {3, 3, 3, 8, 6});
    bias = HostTensor::zeros(ElementType::f32, {6});
    output = HostTensor::zeros(ElementType::f32, {1, 3, 4, 5, 6});
    fillRandomNormal(input, seed);
    fillRandomNormal(filter, seed + 1, 0.2);
    fillRandomNormal(bias, seed + 2);
    fillPoison(output);
  }

  /// Checks `output` against the float64 reference of the operands.
  void expectMatchesReference() {
    ReferenceConvProblem problem;
    problem.geometry = geometryOf(spec);
    problem.input = &input;
    problem.filter = &filter;
    problem.bias = &bias;
    problem.activation = Activation::relu;
    EXPECT_LT(relativeL2Error(referenceConv(problem), output), 1e-5);
  }

  conv3d_run_args argsFor(HostTensor &out) {
    conv3d_run_args args;
    std::memset(&args, 0, sizeof(args));
    args.conv = conv;
    args.input = input.data();
    args.filter = filter.data();
    args.bias = bias.data();
    args.output = out.data();
    args.error = error;
    args.error_size = sizeof(error);
    return args;
  }

  conv3d_conv *conv = nullptr;
  conv3d_spec spec;
  HostTensor input, filter, bias, output;
};

TEST_F(CAPIRunPacked, MatchesConvRunAndTheReference) {
  makeOperands(11);
  conv3d_run_args args = argsFor(output);
  ASSERT_EQ(conv3d_run_packed(&args), 0) << error;
  expectMatchesReference();

  HostTensor unpacked = HostTensor::zeros(ElementType::f32, {1, 3, 4, 5, 6});
  fillPoison(unpacked);
  ASSERT_EQ(conv3d_run(conv, input.data(), filter.data(), bias.data(), nullptr,
                       0.0f, unpacked.data(), nullptr, error, sizeof(error)),
            0)
      << error;
  EXPECT_EQ(std::memcmp(unpacked.data(), output.data(), output.sizeInBytes()),
            0);
}

TEST_F(CAPIRunPacked, ARefilledBlockRunsOtherBuffers) {
  makeOperands(21);
  conv3d_run_args args = argsFor(output);
  ASSERT_EQ(conv3d_run_packed(&args), 0) << error;
  // New data in new buffers through the same block: nothing is cached by
  // address.
  makeOperands(31);
  args.input = input.data();
  args.filter = filter.data();
  args.bias = bias.data();
  args.output = output.data();
  ASSERT_EQ(conv3d_run_packed(&args), 0) << error;
  expectMatchesReference();
}

TEST_F(CAPIRunPacked, ErrorsAreConvRunsInTheBlocksBuffer) {
  makeOperands(41);
  conv3d_run_args args = argsFor(output);
  args.input = nullptr;
  EXPECT_EQ(conv3d_run_packed(&args), 1);
  EXPECT_NE(std::string(error).find("missing"), std::string::npos) << error;

  args = argsFor(output);
  args.conv = nullptr;
  EXPECT_EQ(conv3d_run_packed(&args), 1);
  EXPECT_EQ(std::string(error), "conv3d_run: null convolution");

  // No buffer for the message: still a failure, nothing written; the
  // message is the thread's last error.
  args.error = nullptr;
  args.error_size = 0;
  std::strcpy(error, "untouched");
  EXPECT_EQ(conv3d_run_packed(&args), 1);
  EXPECT_EQ(std::string(error), "untouched");
  EXPECT_EQ(std::string(conv3d_last_error()), "conv3d_run: null convolution");
  EXPECT_EQ(conv3d_run_packed(nullptr), 1);
  EXPECT_EQ(std::string(conv3d_last_error()),
            "conv3d_run_packed: null arguments");
}

TEST_F(CAPIRunPacked, LastErrorIsTheThreadsLastFailure) {
  makeOperands(51);
  conv3d_run_args args = argsFor(output);
  args.error = nullptr;
  args.error_size = 0;
  args.bias = nullptr;
  EXPECT_EQ(conv3d_run_packed(&args), 1);
  std::string message = conv3d_last_error();
  EXPECT_NE(message.find("missing bias"), std::string::npos) << message;
  // A success leaves it; another thread has its own.
  args.bias = bias.data();
  ASSERT_EQ(conv3d_run_packed(&args), 0);
  EXPECT_EQ(std::string(conv3d_last_error()), message);
  std::string other = "unset";
  std::thread([&] { other = conv3d_last_error(); }).join();
  EXPECT_EQ(other, "");
}

TEST_F(CAPIRunPacked, EveryRunEntryKeepsItsFailure) {
  // conv3d_run_ext and conv3d_run_packed_filter keep their failures for
  // conv3d_last_error as conv3d_run does, with or without a buffer.
  char error[512] = "untouched";
  EXPECT_EQ(conv3d_run_ext(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, nullptr, 0.0f, nullptr, nullptr, nullptr,
                           0),
            1);
  EXPECT_EQ(std::string(conv3d_last_error()),
            "conv3d_run_ext: null convolution");
  EXPECT_EQ(conv3d_run_packed_filter(nullptr, nullptr, 0.0f), 1);
  EXPECT_EQ(std::string(conv3d_last_error()),
            "conv3d_run_packed_filter: null arguments");
  makeOperands(52);
  conv3d_run_args args = argsFor(output);
  args.error = error;
  args.error_size = sizeof(error);
  // The fixture's convolution has no packed filter.
  EXPECT_EQ(conv3d_run_packed_filter(&args, nullptr, 0.0f), 1);
  std::string message = conv3d_last_error();
  EXPECT_NE(message.find("compiled without a packed filter"), std::string::npos)
      << message;
  EXPECT_EQ(std::string(error), message);
}

TEST_F(CAPIRunPacked, AnUnalignedBlockRuns) {
  // The bytes of a block one byte past an aligned address, as a packed
  // record from a foreign-function layer may be.
  makeOperands(61);
  conv3d_run_args args = argsFor(output);
  alignas(conv3d_run_args) char bytes[sizeof(conv3d_run_args) + 1];
  std::memcpy(bytes + 1, &args, sizeof(args));
  ASSERT_EQ(
      conv3d_run_packed(reinterpret_cast<const conv3d_run_args *>(bytes + 1)),
      0)
      << error;
  expectMatchesReference();
}

} // namespace
