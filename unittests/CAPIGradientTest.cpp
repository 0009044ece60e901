//===- CAPIGradientTest.cpp - the gradients through the C API -------------===//
//
// conv3d_compile_kind + conv3d_run_gradient on the CPU target: dgrad and
// wgrad of a strided, dilated, asymmetrically padded convolution against
// the float64 reference gradients on random data with poisoned outputs;
// gradient accumulation; and every refusal naming its reason (a forward-only
// clause, a wrong kind, an operand the kind does not read, a forward run of
// a gradient); a dgrad through an activation (its derivative at the
// pre-activation).
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "conv3d/CAPI/conv3d.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Reference/ReferenceGradients.h"
#include "conv3d/Support/HostTensor.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace mlir::conv3d;
using namespace mlir::conv3d::capi_test;

namespace {

/// A strided, dilated, asymmetrically padded f32 convolution: 2x7x6x9x5
/// input, 3x2x3 window, 6 FQRSC filters.
conv3d_spec gradientSpec() {
  conv3d_spec spec =
      makeSpec({2, 7, 6, 9, 5}, {3, 2, 3}, 6, CONV3D_FQRSC, CONV3D_F32);
  int64_t strides[3] = {2, 1, 3}, dilations[3] = {1, 2, 1};
  int64_t padding[6] = {1, 2, 0, 1, 2, 0};
  std::memcpy(spec.strides, strides, sizeof(strides));
  std::memcpy(spec.dilations, dilations, sizeof(dilations));
  std::memcpy(spec.padding, padding, sizeof(padding));
  return spec;
}

std::vector<int64_t> vec(std::array<int64_t, 5> a) {
  return {a.begin(), a.end()};
}

using CAPIGradient = CAPITest;

TEST_F(CAPIGradient, DgradAndWgradMatchTheReference) {
  conv3d_spec spec = gradientSpec();
  ConvGeometry g = geometryOf(spec);
  HostTensor x = HostTensor::zeros(ElementType::f32, vec(g.inputShape()));
  HostTensor w = HostTensor::zeros(ElementType::f32,
                                   vec(g.filterShape(FilterLayout::fqrsc)));
  HostTensor dy = HostTensor::zeros(ElementType::f32, vec(g.outputShape()));
  fillRandomNormal(x, 1);
  fillRandomNormal(w, 2);
  fillRandomNormal(dy, 3);
  for (int accumulate = 0; accumulate < 2; ++accumulate) {
    spec.accumulate = accumulate;
    for (int kind : {CONV3D_KIND_DGRAD, CONV3D_KIND_WGRAD}) {
      conv3d_conv *conv = conv3d_compile_kind(engine, &spec, kind, "target=cpu",
                                              error, sizeof(error));
      ASSERT_NE(conv, nullptr) << error;
      EXPECT_EQ(conv3d_conv_kind(conv), kind);
      bool dgrad = kind == CONV3D_KIND_DGRAD;
      HostTensor out =
          HostTensor::zeros(ElementType::f32, dgrad ? x.shape : w.shape);
      if (accumulate)
        fillRandomNormal(out, 4);
      else
        fillPoison(out);
      HostTensor init = out;
      int status = conv3d_run_gradient(
          conv, dgrad ? nullptr : x.data(), dgrad ? w.data() : nullptr,
          dy.data(), out.data(), nullptr, error, sizeof(error));
      ASSERT_EQ(status, 0) << error;
      const HostTensor *start = accumulate ? &init : nullptr;
      std::vector<double> reference =
          dgrad
              ? referenceConvBackwardData(g, FilterLayout::fqrsc, dy, w, start)
              : referenceConvBackwardFilter(g, FilterLayout::fqrsc, x, dy,
                                            start);
      EXPECT_LT(relativeL2Error(reference, out), 2e-5)
          << (dgrad ? "dgrad" : "wgrad") << " accumulate=" << accumulate;
      // A gradient is not run as a forward, nor with the operand it does
      // not read.
      EXPECT_NE(conv3d_run(conv, x.data(), w.data(), nullptr, nullptr, 0,
                           out.data(), nullptr, error, sizeof(error)),
                0);
      EXPECT_NE(std::string(error).find("missing grad_output buffer"),
                std::string::npos)
          << error;
      EXPECT_NE(conv3d_run_gradient(conv, x.data(), w.data(), dy.data(),
                                    out.data(), nullptr, error, sizeof(error)),
                0);
      EXPECT_NE(std::string(error).find(dgrad ? "the input must be null"
                                              : "the filter must be null"),
                std::string::npos)
          << error;
      conv3d_conv_destroy(conv);
    }
  }
}

TEST_F(CAPIGradient, DgradThroughAnActivation) {
  // The derivative at the pre-activation of each activation, overwriting
  // and accumulated onto another path's gradient (added before the factor).
  conv3d_spec spec = gradientSpec();
  spec.has_residual = 1;
  ConvGeometry g = geometryOf(spec);
  HostTensor w = HostTensor::zeros(ElementType::f32,
                                   vec(g.filterShape(FilterLayout::fqrsc)));
  HostTensor dy = HostTensor::zeros(ElementType::f32, vec(g.outputShape()));
  HostTensor z = HostTensor::zeros(ElementType::f32, vec(g.inputShape()));
  fillRandomNormal(w, 5);
  fillRandomNormal(dy, 6);
  fillRandomNormal(z, 7);
  const std::pair<int, Activation> activations[] = {
      {CONV3D_ACT_RELU, Activation::relu},
      {CONV3D_ACT_SILU, Activation::silu},
      {CONV3D_ACT_GELU_TANH, Activation::gelu_tanh}};
  for (auto [code, activation] : activations) {
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      spec.activation = code;
      spec.accumulate = accumulate;
      conv3d_conv *conv = conv3d_compile_kind(
          engine, &spec, CONV3D_KIND_DGRAD, "target=cpu", error, sizeof(error));
      ASSERT_NE(conv, nullptr) << error;
      HostTensor out = HostTensor::zeros(ElementType::f32, z.shape);
      if (accumulate)
        fillRandomNormal(out, 8);
      else
        fillPoison(out);
      HostTensor init = out;
      ASSERT_EQ(conv3d_run_dgrad_through_activation(
                    conv, w.data(), dy.data(), z.data(), out.data(), nullptr,
                    error, sizeof(error)),
                0)
          << error;
      std::vector<double> reference = referenceConvBackwardData(
          g, FilterLayout::fqrsc, dy, w, accumulate ? &init : nullptr, &z,
          activation);
      EXPECT_LT(relativeL2Error(reference, out), 2e-5)
          << stringifyActivation(activation).str()
          << " accumulate=" << accumulate;
      // Without its pre-activation it is refused.
      EXPECT_NE(conv3d_run_gradient(conv, nullptr, w.data(), dy.data(),
                                    out.data(), nullptr, error, sizeof(error)),
                0);
      EXPECT_NE(std::string(error).find("compiled through an activation"),
                std::string::npos)
          << error;
      conv3d_conv_destroy(conv);
    }
  }
}

TEST_F(CAPIGradient, Refusals) {
  conv3d_spec spec = gradientSpec();
  spec.has_bias = 1;
  EXPECT_EQ(conv3d_compile_kind(engine, &spec, CONV3D_KIND_DGRAD, "target=cpu",
                                error, sizeof(error)),
            nullptr);
  EXPECT_STREQ(error, "dgrad takes no bias (only the forward does)");
  spec.has_bias = 0;
  spec.activation = CONV3D_ACT_SILU;
  EXPECT_EQ(conv3d_compile_kind(engine, &spec, CONV3D_KIND_WGRAD, "target=cpu",
                                error, sizeof(error)),
            nullptr);
  EXPECT_STREQ(error, "wgrad takes no activation (only the forward does)");
  spec.activation = CONV3D_ACT_NONE;
  EXPECT_EQ(
      conv3d_compile_kind(engine, &spec, 7, "target=cpu", error, sizeof(error)),
      nullptr);
  EXPECT_NE(std::string(error).find("kind must be"), std::string::npos)
      << error;
  conv3d_conv *forward =
      conv3d_compile(engine, &spec, "target=cpu", error, sizeof(error));
  ASSERT_NE(forward, nullptr) << error;
  char dummy[64];
  EXPECT_NE(conv3d_run_gradient(forward, nullptr, dummy, dummy, dummy, nullptr,
                                error, sizeof(error)),
            0);
  EXPECT_NE(std::string(error).find("compiled for fprop"), std::string::npos)
      << error;
  EXPECT_NE(conv3d_run_dgrad_through_activation(forward, dummy, dummy, dummy,
                                                dummy, nullptr, error,
                                                sizeof(error)),
            0);
  EXPECT_NE(std::string(error).find("not compiled as a dgrad through an "
                                    "activation"),
            std::string::npos)
      << error;
  conv3d_conv_destroy(forward);
  // dgrad's pre-activation and activation go together.
  spec.has_residual = 1;
  EXPECT_EQ(conv3d_compile_kind(engine, &spec, CONV3D_KIND_DGRAD, "target=cpu",
                                error, sizeof(error)),
            nullptr);
  EXPECT_NE(std::string(error).find("name the activation"), std::string::npos)
      << error;
}

} // namespace
