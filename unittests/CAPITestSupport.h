//===- CAPITestSupport.h - what the C API unit tests share ------*- C++ -*-===//
//
// The setup every C API test repeated: a conv3d_spec built field by field,
// the ConvGeometry it describes (for the float64 reference), and a fixture
// holding an engine and an error buffer.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_UNITTESTS_CAPITESTSUPPORT_H
#define CONV3D_UNITTESTS_CAPITESTSUPPORT_H

#include "conv3d/CAPI/conv3d.h"
#include "conv3d/Geometry/ConvGeometry.h"

#include "gtest/gtest.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace mlir::conv3d::capi_test {

/// A spec of an `input` (N, D, H, W, C) input, a `window` (Q, R, S) and
/// `filters` in `filterLayout`, all of `type` (input and output), with unit
/// strides and dilations and no padding; every other field is zero (one
/// group, no bias, activation, residual, accumulation or quantization).
inline conv3d_spec makeSpec(const std::array<int64_t, 5> &input,
                            const std::array<int64_t, 3> &window,
                            int64_t filters, int32_t filterLayout,
                            int32_t type) {
  conv3d_spec spec;
  // Zeroed bytes, padding included: the C API reads the struct as C does.
  std::memset(&spec, 0, sizeof(spec));
  spec.batch = input[0];
  spec.depth = input[1];
  spec.height = input[2];
  spec.width = input[3];
  spec.channels = input[4];
  for (int i = 0; i < 3; ++i) {
    spec.window[i] = window[i];
    spec.strides[i] = spec.dilations[i] = 1;
  }
  spec.filters = filters;
  spec.filter_layout = filterLayout;
  spec.input_type = spec.output_type = type;
  return spec;
}

/// The geometry `spec` describes, read here independently of the C API's
/// own conversion (lib/CAPI), which the tests check.
inline ConvGeometry geometryOf(const conv3d_spec &spec) {
  ConvGeometry g;
  g.batch = spec.batch;
  g.inputSize = {spec.depth, spec.height, spec.width};
  g.channels = spec.channels;
  g.window = {spec.window[0], spec.window[1], spec.window[2]};
  g.filters = spec.filters;
  g.groups = spec.groups == 0 ? 1 : spec.groups;
  for (int i = 0; i < 3; ++i) {
    g.strides[i] = spec.strides[i];
    g.dilations[i] = spec.dilations[i];
    g.padLow[i] = spec.padding[2 * i];
    g.padHigh[i] = spec.padding[2 * i + 1];
  }
  return g;
}

/// A test with an engine (without a disk cache) and an error buffer for the
/// C API's messages. Fixtures that override SetUp or TearDown call these.
class CAPITest : public ::testing::Test {
protected:
  void SetUp() override {
    engine = conv3d_engine_create_with_cache("");
    ASSERT_NE(engine, nullptr);
  }
  void TearDown() override { conv3d_engine_destroy(engine); }

  conv3d_engine *engine = nullptr;
  char error[4096] = {};
};

} // namespace mlir::conv3d::capi_test

#endif // CONV3D_UNITTESTS_CAPITESTSUPPORT_H
