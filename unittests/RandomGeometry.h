//===- RandomGeometry.h - random convolution geometries for the units -----===//
//
// The unit tests' one generator of random valid geometries: every size,
// stride, dilation and padding drawn within the test's limits, the input
// large enough that the dilated window fits the padded input.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_UNITTESTS_RANDOMGEOMETRY_H
#define CONV3D_UNITTESTS_RANDOMGEOMETRY_H

#include "conv3d/Geometry/ConvGeometry.h"

#include <algorithm>
#include <cstdint>
#include <random>

namespace mlir::conv3d::unittest {

/// The largest value of each field (the smallest is 1, 0 for padding).
/// With `groups` > 1 the group count is drawn too, and `channels` and
/// `filters` bound the channels and filters per group.
struct GeometryLimits {
  int64_t batch = 2, channels = 4, filters = 4;
  int64_t window = 4, stride = 4, dilation = 3, padding = 6;
  int64_t inputSize = 12;
  int64_t groups = 1;
};

/// Uniform in [lo, hi].
inline int64_t pickIn(std::mt19937_64 &rng, int64_t lo, int64_t hi) {
  return lo + int64_t(rng() % uint64_t(hi - lo + 1));
}

inline ConvGeometry randomGeometry(std::mt19937_64 &rng,
                                   const GeometryLimits &limits) {
  auto pick = [&](int64_t lo, int64_t hi) { return pickIn(rng, lo, hi); };
  ConvGeometry g;
  if (limits.groups > 1)
    g.groups = pick(1, limits.groups);
  g.batch = pick(1, limits.batch);
  g.channels = g.groups * pick(1, limits.channels);
  g.filters = g.groups * pick(1, limits.filters);
  for (unsigned a = 0; a < 3; ++a) {
    g.window[a] = pick(1, limits.window);
    g.strides[a] = pick(1, limits.stride);
    g.dilations[a] = pick(1, limits.dilation);
    // Padding may exceed the window (outputs that see only the halo).
    g.padLow[a] = pick(0, limits.padding);
    g.padHigh[a] = pick(0, limits.padding);
    int64_t effective = (g.window[a] - 1) * g.dilations[a] + 1;
    g.inputSize[a] =
        pick(std::max<int64_t>(1, effective - g.padLow[a] - g.padHigh[a]),
             limits.inputSize);
  }
  return g;
}

} // namespace mlir::conv3d::unittest

#endif // CONV3D_UNITTESTS_RANDOMGEOMETRY_H
