//===- CAPIPackedFilterTest.cpp - a packed NVFP4 filter via the C API -----===//
//
// conv3d_quantize_filter packs a filter into the bytes of the reference
// packer (referencePackNVFP4), bit for bit; a convolution compiled with
// conv3d_filter_ext.packed_filter in nvfp4-mode=fake and run through
// conv3d_run_packed_filter on the CPU computes, bit for bit, the convolution
// of the fake-quantized filter (referenceQuantize), which itself matches the
// float64 reference. Every refusal names its problem.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "conv3d/CAPI/conv3d.h"
#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <string>

using namespace mlir::conv3d;
using namespace mlir::conv3d::capi_test;

namespace {

/// A 2x3x5x4x32 f32 input, 3x2x3 window, 12 filters, FQRSC, padding 1.
conv3d_spec packableSpec() {
  conv3d_spec spec =
      makeSpec({2, 3, 5, 4, 32}, {3, 2, 3}, 12, CONV3D_FQRSC, CONV3D_F32);
  for (int64_t &p : spec.padding)
    p = 1;
  return spec;
}

class CAPIPackedFilter : public CAPITest {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CAPITest::SetUp());
    spec = packableSpec();
    filter = HostTensor::zeros(ElementType::f32, {12, 3, 2, 3, 32});
    fillRandomNormal(filter, 91, 0.3);
  }
  /// conv3d_quantize_filter's message for `s`, `w` and buffers of the given
  /// sizes; empty on success.
  std::string quantizeError(const conv3d_spec &s, const void *w, float amax,
                            size_t codesSize, size_t scalesSize,
                            const char *options = "target=cpu") {
    std::vector<uint8_t> codes(codesSize + 1), scales(scalesSize + 1);
    error[0] = '\0';
    if (conv3d_quantize_filter(engine, &s, w, amax, options, codes.data(),
                               codesSize, scales.data(), scalesSize, error,
                               sizeof(error)) == 0)
      return "";
    EXPECT_NE(error[0], '\0');
    return error;
  }

  conv3d_spec spec;
  HostTensor filter;
};

TEST_F(CAPIPackedFilter, SizesAreTheDocumentedFormulas) {
  size_t codes = 0, scales = 0;
  ASSERT_EQ(
      conv3d_packed_filter_sizes(&spec, &codes, &scales, error, sizeof(error)),
      0)
      << error;
  EXPECT_EQ(codes, size_t(12 * 3 * 2 * 3 * 32 / 2));
  EXPECT_EQ(scales, size_t(12 * 3 * 2 * 3 * 32 / 16));
}

TEST_F(CAPIPackedFilter, PacksLikeTheReferencePacker) {
  float amax = 0.6f; // below max |w|: some blocks saturate
  size_t codesSize = 0, scalesSize = 0;
  ASSERT_EQ(conv3d_packed_filter_sizes(&spec, &codesSize, &scalesSize, error,
                                       sizeof(error)),
            0)
      << error;
  // Poisoned, so that bytes the packer does not write show up.
  std::vector<uint8_t> codes(codesSize, 0xA5), scales(scalesSize, 0xA5);
  ASSERT_EQ(conv3d_quantize_filter(engine, &spec, filter.data(), amax,
                                   "target=cpu", codes.data(), codes.size(),
                                   scales.data(), scales.size(), error,
                                   sizeof(error)),
            0)
      << error;
  NVFP4Packed expected = referencePackNVFP4(filter, 16, amax);
  EXPECT_EQ(codes, expected.codes);
  EXPECT_EQ(scales, expected.scales);
}

TEST_F(CAPIPackedFilter, FakeModeRunEqualsTheFakeQuantizedFilter) {
  float amax = 0.6f;
  HostTensor input = HostTensor::zeros(ElementType::f32, {2, 3, 5, 4, 32});
  fillRandomNormal(input, 92);
  size_t codesSize = 0, scalesSize = 0;
  ASSERT_EQ(conv3d_packed_filter_sizes(&spec, &codesSize, &scalesSize, error,
                                       sizeof(error)),
            0)
      << error;
  std::vector<uint8_t> codes(codesSize), scales(scalesSize);
  ASSERT_EQ(conv3d_quantize_filter(engine, &spec, filter.data(), amax,
                                   "target=cpu", codes.data(), codes.size(),
                                   scales.data(), scales.size(), error,
                                   sizeof(error)),
            0)
      << error;

  conv3d_filter_ext packedExt = {/*packed_filter=*/1};
  conv3d_conv *packed = conv3d_compile_filter_ext(
      engine, &spec, nullptr, &packedExt, "target=cpu nvfp4-mode=fake", error,
      sizeof(error));
  ASSERT_NE(packed, nullptr) << error;
  conv3d_conv *plain =
      conv3d_compile(engine, &spec, "target=cpu", error, sizeof(error));
  ASSERT_NE(plain, nullptr) << error;

  int64_t shape[5];
  double flops = 0;
  ASSERT_EQ(conv3d_spec_geometry(&spec, shape, &flops, error, sizeof(error)), 0)
      << error;
  std::vector<int64_t> outShape(shape, shape + 5);
  HostTensor fromPacked = HostTensor::zeros(ElementType::f32, outShape);
  HostTensor fromFake = HostTensor::zeros(ElementType::f32, outShape);
  fillPoison(fromPacked);
  fillPoison(fromFake);
  conv3d_run_args args;
  std::memset(&args, 0, sizeof(args));
  args.conv = packed;
  args.input = input.data();
  args.filter = codes.data();
  args.output = fromPacked.data();
  args.error = error;
  args.error_size = sizeof(error);
  ASSERT_EQ(conv3d_run_packed_filter(&args, scales.data(), amax), 0) << error;

  // The fake-quantized filter: blocks of 16 along C of each tap, the K order
  // per output channel of FQRSC (axes 1..4).
  HostTensor fake = referenceQuantize(filter, 16, amax, 1, 4);
  ASSERT_EQ(conv3d_run(plain, input.data(), fake.data(), nullptr, nullptr, 0.0f,
                       fromFake.data(), nullptr, error, sizeof(error)),
            0)
      << error;
  EXPECT_EQ(
      std::memcmp(fromPacked.data(), fromFake.data(), fromFake.sizeInBytes()),
      0);

  ReferenceConvProblem problem;
  problem.geometry = geometryOf(spec);
  problem.filterLayout = FilterLayout::fqrsc;
  problem.input = &input;
  problem.filter = &fake;
  std::vector<double> expected = referenceConv(problem);
  EXPECT_TRUE(llvm::any_of(expected, [](double v) { return v != 0; }));
  EXPECT_LT(relativeL2Error(expected, fromPacked), 1e-5);

  // The plain convolution is not run through the packed entry point, and the
  // packed one needs its scales.
  args.conv = plain;
  EXPECT_NE(conv3d_run_packed_filter(&args, scales.data(), amax), 0);
  EXPECT_NE(std::string(error).find("compiled without a packed filter"),
            std::string::npos)
      << error;
  EXPECT_NE(conv3d_run(packed, input.data(), codes.data(), nullptr, nullptr,
                       0.0f, fromPacked.data(), nullptr, error, sizeof(error)),
            0);
  EXPECT_EQ(std::string(error), "missing filter scales buffer");
  conv3d_conv_destroy(plain);
  conv3d_conv_destroy(packed);
}

TEST_F(CAPIPackedFilter, Refusals) {
  size_t codesSize = 0, scalesSize = 0;
  ASSERT_EQ(conv3d_packed_filter_sizes(&spec, &codesSize, &scalesSize, error,
                                       sizeof(error)),
            0)
      << error;
  // Buffers too small.
  EXPECT_EQ(quantizeError(spec, filter.data(), 1.0f, codesSize - 1, scalesSize),
            "conv3d_quantize_filter: the codes buffer holds " +
                std::to_string(codesSize - 1) +
                " bytes, the packed filter needs " + std::to_string(codesSize));
  EXPECT_EQ(quantizeError(spec, filter.data(), 1.0f, codesSize, scalesSize - 1),
            "conv3d_quantize_filter: the scales buffer holds " +
                std::to_string(scalesSize - 1) +
                " bytes, the packed filter needs " +
                std::to_string(scalesSize));
  // A bad amax.
  EXPECT_EQ(quantizeError(spec, filter.data(), -1.0f, codesSize, scalesSize),
            "NVFP4 amax must be finite and >= 0");
  EXPECT_EQ(quantizeError(spec, filter.data(), NAN, codesSize, scalesSize),
            "NVFP4 amax must be finite and >= 0");
  // Null buffers.
  EXPECT_EQ(quantizeError(spec, nullptr, 1.0f, codesSize, scalesSize),
            "conv3d_quantize_filter: null engine, spec, filter, codes or "
            "scales");
  // A bad option, and sm100 (never run).
  EXPECT_NE(quantizeError(spec, filter.data(), 1.0f, codesSize, scalesSize,
                          "target=sm7")
                .find("sm7"),
            std::string::npos);
  EXPECT_NE(quantizeError(spec, filter.data(), 1.0f, codesSize, scalesSize,
                          "target=sm100")
                .find("never run"),
            std::string::npos);

  // The wrong layout.
  conv3d_spec qrscf = spec;
  qrscf.filter_layout = CONV3D_QRSCF;
  EXPECT_EQ(quantizeError(qrscf, filter.data(), 1.0f, codesSize, scalesSize),
            "a real NVFP4 filter is packed K-major: the spec's filter layout "
            "must be fqrsc, not qrscf");
  EXPECT_NE(conv3d_packed_filter_sizes(&qrscf, &codesSize, &scalesSize, error,
                                       sizeof(error)),
            0);
  EXPECT_EQ(std::string(error), "a packed NVFP4 filter is K-major: the filter "
                                "layout must be fqrsc");
  conv3d_filter_ext packedExt = {/*packed_filter=*/1};
  EXPECT_EQ(conv3d_compile_filter_ext(engine, &qrscf, nullptr, &packedExt,
                                      "target=cpu", error, sizeof(error)),
            nullptr);
  EXPECT_EQ(std::string(error), "a packed NVFP4 filter is K-major: the filter "
                                "layout must be fqrsc");

  // C not a multiple of the block (16).
  conv3d_spec c24 = spec;
  c24.channels = 24;
  HostTensor w24 = HostTensor::zeros(ElementType::f32, {12, 3, 2, 3, 24});
  EXPECT_EQ(quantizeError(c24, w24.data(), 1.0f, codesSize, scalesSize),
            "a real NVFP4 filter needs C to be a multiple of the block size 16 "
            "(each scale covers 16 channels of one tap), got C = 24");
  EXPECT_NE(conv3d_packed_filter_sizes(&c24, &codesSize, &scalesSize, error,
                                       sizeof(error)),
            0);
  EXPECT_EQ(std::string(error), "a packed NVFP4 filter needs C to be a "
                                "multiple of the block size 16, got C = 24");
  EXPECT_EQ(conv3d_compile_filter_ext(engine, &c24, nullptr, &packedExt,
                                      "target=cpu", error, sizeof(error)),
            nullptr);
  EXPECT_EQ(std::string(error), "a packed NVFP4 filter needs C to be a "
                                "multiple of the block size 16, got C = 24");

  // Real mode: the block-scaled MMA is not emitted.
  EXPECT_EQ(conv3d_compile_filter_ext(engine, &spec, nullptr, &packedExt,
                                      "target=cpu nvfp4-mode=real", error,
                                      sizeof(error)),
            nullptr);
  EXPECT_NE(std::string(error).find("nvfp4-mode=real needs target=sm100"),
            std::string::npos)
      << error;

  // Null arguments.
  EXPECT_NE(conv3d_packed_filter_sizes(&spec, nullptr, &scalesSize, error,
                                       sizeof(error)),
            0);
  EXPECT_EQ(std::string(error), "conv3d_packed_filter_sizes: null argument");
  EXPECT_NE(conv3d_run_packed_filter(nullptr, nullptr, 0.0f), 0);
  conv3d_run_args args;
  std::memset(&args, 0, sizeof(args));
  args.error = error;
  args.error_size = sizeof(error);
  EXPECT_NE(conv3d_run_packed_filter(&args, nullptr, 0.0f), 0);
  EXPECT_EQ(std::string(error), "conv3d_run_packed_filter: null convolution");
}

} // namespace
