//===- ConvGeometry.h - the geometry of a 3-D convolution -------*- C++ -*-===//
//
// The one place where the geometry of a convolution is computed: output sizes,
// the implicit-GEMM view (M = N*Do*Ho*Wo, N = F/G, K = Q*R*S*C/G, batched
// over the G groups of a grouped convolution), the index
// decompositions m -> (n, do, ho, wo) and k -> (q, r, s, c), input
// coordinates, and the validity checks. The verifier, every pass, the runtime,
// the reference and the tests use this type.
//
// The decompositions are templates over an index arithmetic so that the same
// formula produces integers (reference, runtime, tests) or IR (passes; see
// conv3d/IR/IndexMath.h).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_GEOMETRY_CONVGEOMETRY_H
#define CONV3D_GEOMETRY_CONVGEOMETRY_H

#include "conv3d/IR/Conv3dEnums.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace mlir::conv3d {

/// Spatial axes of NDHWC tensors, in the order used by every per-axis array.
enum SpatialAxis : unsigned { kDepth = 0, kHeight = 1, kWidth = 2 };

/// Index arithmetic on plain integers, for the decomposition templates.
struct ScalarIndexMath {
  using Value = int64_t;
  Value constant(int64_t c) const { return c; }
  Value add(Value a, Value b) const { return a + b; }
  Value mul(Value a, int64_t c) const { return a * c; }
  /// Division and remainder of a non-negative value by a positive constant.
  Value div(Value a, int64_t c) const { return a / c; }
  Value rem(Value a, int64_t c) const { return a % c; }
  Value smin(Value a, Value b) const { return std::min(a, b); }
  Value smax(Value a, Value b) const { return std::max(a, b); }
};

/// Decomposes a linear index over a row-major shape `sizes` (outermost
/// first) into per-dimension indices. `sizes[0]` is never divided by, so it
/// may be dynamic.
template <typename Math, size_t R>
std::array<typename Math::Value, R>
delinearize(Math &math, typename Math::Value linear,
            const std::array<int64_t, R> &sizes) {
  std::array<typename Math::Value, R> indices;
  for (size_t i = R - 1; i > 0; --i) {
    indices[i] = math.rem(linear, sizes[i]);
    linear = math.div(linear, sizes[i]);
  }
  indices[0] = linear;
  return indices;
}

/// How a TMA im2col kernel reads a convolution's input.
enum class TmaIm2colForm {
  /// One rank-5 descriptor over the NDHWC input: an M tile is any run of
  /// output positions; TMA walks W, H, D and the batch.
  volume,
  /// Rank-4 descriptors over the input's depth slices ((N*D, H, W, C) for a
  /// dense input): an M tile lies in one output depth slice (n, do), each
  /// depth tap q reads input slice d = do*stride_d - pad_d_lo + q*dil_d of
  /// image n, and the taps that fall in the depth padding are skipped. Depth
  /// takes any padding, stride and
  /// dilation; height and width get rank 4's wider corners and offsets.
  depthSlices,
};

/// Geometry of `out = conv3d(in, filter)` with an NDHWC input, a Q x R x S
/// window over C channels, F filters, and an NDHWF output.
struct ConvGeometry {
  static constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

  // Input N, D, H, W, C.
  int64_t batch = 1;
  std::array<int64_t, 3> inputSize = {1, 1, 1};
  int64_t channels = 1;
  // Window Q, R, S and filter count F.
  std::array<int64_t, 3> window = {1, 1, 1};
  int64_t filters = 1;
  // Groups G of a grouped convolution: filter f reads the C/G input
  // channels of group f / (F/G). A depthwise convolution has G = C.
  int64_t groups = 1;
  std::array<int64_t, 3> strides = {1, 1, 1};
  std::array<int64_t, 3> dilations = {1, 1, 1};
  std::array<int64_t, 3> padLow = {0, 0, 0};
  std::array<int64_t, 3> padHigh = {0, 0, 0};
  // The leading `historyDepth` frames of the depth axis (inputSize[0] counts
  // them) come from a separate history operand: the convolution reads
  // concat(history, input) along depth without materializing it. kDynamic
  // when the history's depth is.
  int64_t historyDepth = 0;

  /// Prepends `depth` history frames to the depth axis (see historyDepth).
  /// A depth whose sum overflows int64 is unknown (kDynamic), which
  /// validation refuses.
  void addHistory(int64_t depth) {
    historyDepth = depth;
    if (depth == kDynamic || inputSize[0] == kDynamic ||
        __builtin_add_overflow(inputSize[0], depth, &inputSize[0]))
      inputSize[0] = kDynamic;
  }
  /// The depth of the input operand alone (without the history).
  int64_t inputOperandDepth() const {
    if (historyDepth == kDynamic || inputSize[0] == kDynamic)
      return kDynamic;
    return inputSize[0] - historyDepth;
  }

  /// Builds a geometry from the NDHWC input shape, the filter shape in
  /// `layout`, strides, dilations and the 6 padding values
  /// [d_lo, d_hi, h_lo, h_hi, w_lo, w_hi]. Shapes may hold kDynamic. C
  /// comes from the input; the filter's channel dimension (C/groups) is
  /// the verifier's to check.
  static ConvGeometry fromShapes(const std::array<int64_t, 5> &inputShape,
                                 const std::array<int64_t, 5> &filterShape,
                                 FilterLayout layout,
                                 const std::array<int64_t, 3> &strides,
                                 const std::array<int64_t, 3> &dilations,
                                 const std::array<int64_t, 6> &padding,
                                 int64_t groups = 1);

  /// Input channels of one group (C/G); all C when G = 1.
  int64_t channelsPerGroup() const {
    return channels == kDynamic || groups <= 0 ? kDynamic : channels / groups;
  }
  /// Filters of one group (F/G).
  int64_t filtersPerGroup() const {
    return filters == kDynamic || groups <= 0 ? kDynamic : filters / groups;
  }
  bool isGrouped() const { return groups != 1; }
  /// A depthwise-like convolution: one input channel per group (G = C).
  bool isDepthwise() const { return groups > 1 && groups == channels; }

  /// The forward geometry behind a transposed convolution (ConvTranspose3d)
  /// of an N x Di x Hi x Wi x C input (`inputShape`, the forward's output:
  /// its channels are the forward's F) by a filter of `filterShape` in
  /// `layout` (the forward's QRSCF/FQRSC: the transposed convolution's
  /// output channels are the forward's C): the forward input size along
  /// each axis is (Di - 1) * stride - pad_lo - pad_hi + dilated window +
  /// output_padding. Sizes that come out non-positive are left so, for
  /// validate() (and transposedProblem()) to name.
  static ConvGeometry
  fromTransposed(const std::array<int64_t, 5> &inputShape,
                 const std::array<int64_t, 5> &filterShape, FilterLayout layout,
                 const std::array<int64_t, 3> &strides,
                 const std::array<int64_t, 3> &dilations,
                 const std::array<int64_t, 6> &padding,
                 const std::array<int64_t, 3> &outputPadding);
  /// The transposed convolution's output padding along `axis` implied by
  /// this forward geometry: the input rows past the last window the
  /// forward places, (D + pad_lo + pad_hi - dilated window) mod stride.
  /// Every forward input size has one in [0, stride).
  int64_t transposedOutputPadding(unsigned axis) const;
  /// Why a transposed convolution with `outputPadding` cannot be expressed
  /// over this geometry (an output padding outside [0, stride), which no
  /// forward input size implies), or none.
  std::optional<std::string>
  transposedProblem(const std::array<int64_t, 3> &outputPadding) const;

  /// The filter shape in `layout` (its channel dimension is C/G).
  std::array<int64_t, 5> filterShape(FilterLayout layout) const;
  /// The padding as [d_lo, d_hi, h_lo, h_hi, w_lo, w_hi].
  std::array<int64_t, 6> padding() const;

  /// The extent covered by the dilated window along `axis`.
  int64_t effectiveWindow(unsigned axis) const {
    return (window[axis] - 1) * dilations[axis] + 1;
  }
  /// Output size along a spatial axis; kDynamic when the input size is.
  /// Zero or negative when the window does not fit (see validate()).
  int64_t outputSize(unsigned axis) const;
  /// The NDHWF output shape.
  std::array<int64_t, 5> outputShape() const;
  /// The NDHWC input shape.
  std::array<int64_t, 5> inputShape() const {
    return {batch, inputSize[0], inputSize[1], inputSize[2], channels};
  }

  bool hasStaticShape() const;

  /// GEMM view of one group (G GEMMs of M x N x K; one for G = 1). M is
  /// kDynamic when any of N, D, H, W is.
  int64_t gemmM() const;
  int64_t gemmN() const { return filtersPerGroup(); }
  int64_t gemmK() const {
    return window[0] * window[1] * window[2] * channelsPerGroup();
  }
  /// The GEMM's batch: the number of groups.
  int64_t gemmBatch() const { return groups; }
  /// 2*G*M*N*K (multiply-adds of the convolution, halo included).
  double flops() const;

  /// The first problem with this geometry as a message naming it, or none.
  /// Dynamic sizes are skipped.
  std::optional<std::string> validate() const;

  /// m -> (n, do, ho, wo).
  template <typename Math>
  std::array<typename Math::Value, 4> decomposeM(Math &math,
                                                 typename Math::Value m) const {
    return delinearize<Math, 4>(
        math, m, {batch, outputSize(0), outputSize(1), outputSize(2)});
  }
  /// k -> (q, r, s, c), c the channel within the group.
  template <typename Math>
  std::array<typename Math::Value, 4> decomposeK(Math &math,
                                                 typename Math::Value k) const {
    return delinearize<Math, 4>(
        math, k, {window[0], window[1], window[2], channelsPerGroup()});
  }
  /// Input coordinate along `axis` read by output position `out` and window
  /// tap `tap`: out * stride - pad_lo + tap * dilation (may be in the halo).
  template <typename Math>
  typename Math::Value inputCoord(Math &math, unsigned axis,
                                  typename Math::Value out,
                                  typename Math::Value tap) const {
    return math.add(
        math.add(math.mul(out, strides[axis]), math.constant(-padLow[axis])),
        math.mul(tap, dilations[axis]));
  }

  /// The bounding box of a rank-5 TMA im2col descriptor over the NDHWC
  /// input (cuTensorMapEncodeIm2col), per spatial axis in this type's D, H,
  /// W order: the lower corner is -pad_lo, the upper corner pad_hi minus the
  /// dilated window's extent past its first tap, so that the box's base
  /// pixels are exactly the output positions (checked on an H100; see
  /// TOOLCHAIN.md).
  std::array<int64_t, 3> tmaIm2colLowerCorner() const {
    return {-padLow[0], -padLow[1], -padLow[2]};
  }
  std::array<int64_t, 3> tmaIm2colUpperCorner() const {
    return {padHigh[0] - (window[0] - 1) * dilations[0],
            padHigh[1] - (window[1] - 1) * dilations[1],
            padHigh[2] - (window[2] - 1) * dilations[2]};
  }
  /// Why a rank-5 TMA im2col descriptor cannot describe this convolution's
  /// input (corners outside [-16, 15], im2col offsets over 31, element
  /// strides over 8, channel rows not a multiple of 16 bytes for
  /// `elementBytes`-byte elements), or none.
  std::optional<std::string> tmaIm2colProblem(int64_t elementBytes) const;
  /// Why per-depth-slice rank-4 descriptors (TmaIm2colForm::depthSlices)
  /// cannot describe it: height or width corners outside [-128, 127], im2col
  /// offsets over 255, element strides over 8, channel rows not a multiple
  /// of 16 bytes; or none. The depth axis is never a problem.
  std::optional<std::string> tmaSliceIm2colProblem(int64_t elementBytes) const;
  /// The TMA kernels' canImplement for the input operand: the rank-5 form
  /// where its limits hold and no history operand is read, else the
  /// per-depth-slice form where its limits
  /// hold (`why` then says why not rank 5), else none (`why` says why
  /// neither).
  std::optional<TmaIm2colForm> chooseTmaIm2colForm(int64_t elementBytes,
                                                   std::string &why) const;

  /// The coordinates (innermost first, the channel's left out) and im2col
  /// offsets of the TMA im2col load of window tap `qrs` = (q, r, s) for the
  /// rows that start at output position `pos` = (n, do, ho, wo). Rank 5:
  /// {w, h, d, n} from the tap's first pixel, offsets {s, r, q} x dilation.
  /// Per depth slice (rank 4 over the input's depth slices, image n's
  /// slice d at n * batchSlices + d: batchSlices is the batch stride in
  /// depth strides, D for a dense input): {w, h, n*batchSlices + d + q*dil}
  /// and offsets {s, r} x dilation; q must be a valid tap of do
  /// (validTapRange). Corners may be negative; offsets are not.
  template <typename Math>
  std::pair<std::array<typename Math::Value, 4>,
            std::array<typename Math::Value, 3>>
  tmaIm2colLoadCoords(Math &math, TmaIm2colForm form,
                      const std::array<typename Math::Value, 4> &pos,
                      const std::array<typename Math::Value, 3> &qrs,
                      int64_t batchSlices) const {
    auto zero = math.constant(0);
    auto base = [&](unsigned axis) {
      return math.add(math.mul(pos[axis + 1], strides[axis]),
                      math.constant(-padLow[axis]));
    };
    auto offset = [&](unsigned axis) {
      return math.mul(qrs[axis], dilations[axis]);
    };
    if (form == TmaIm2colForm::volume)
      return {{base(kWidth), base(kHeight), base(kDepth), pos[0]},
              {offset(kWidth), offset(kHeight), offset(kDepth)}};
    auto slice = math.add(math.mul(pos[0], batchSlices),
                          inputCoord(math, kDepth, pos[1], qrs[kDepth]));
    return {{base(kWidth), base(kHeight), slice, zero},
            {offset(kWidth), offset(kHeight), zero}};
  }

  /// Output positions of one output depth slice (n, do): Ho * Wo.
  int64_t outputSliceSize() const { return outputSize(1) * outputSize(2); }

  /// M tiles per output depth slice with per-depth-slice TMA loads: the
  /// slice's rows in tiles of `tileM`, rounded up to whole clusters of
  /// `clusterM` blocks (the blocks of a cluster run the same K steps, the
  /// valid depth taps of one slice). A slice of an odd number of tiles
  /// under 2-block clusters ends with a padding tile, which loads the
  /// slice's first rows again to feed its partner's filter half and stores
  /// nothing.
  int64_t tmaTilesPerSlice(int64_t tileM, int64_t clusterM = 1) const;
  /// M tiles of `tileM` rows of the TMA kernels' scheduler: over all of M
  /// (volume), or per output depth slice (tmaTilesPerSlice each), where a
  /// slice of few rows leaves most of its tile empty.
  int64_t tmaRowTiles(int64_t tileM, TmaIm2colForm form,
                      int64_t clusterM = 1) const;

  /// The window taps [lo, hi) along `axis` whose input coordinate for
  /// output position `out` (a valid one) lies inside the input: the only
  /// taps that read anything but padding. Empty ranges have lo == hi. Every
  /// division sees a non-negative numerator (the IR form divides unsigned).
  template <typename Math>
  std::pair<typename Math::Value, typename Math::Value>
  validTapRange(Math &math, unsigned axis, typename Math::Value out) const {
    // 0 <= out * s - pad_lo + tap * dil <= size - 1, solved for tap, the
    // numerators raised by `bias` dilations (more than any out * s).
    int64_t dil = dilations[axis];
    int64_t bias = outputSize(axis) * strides[axis] / dil + 1;
    auto biased = math.add(math.mul(out, -strides[axis]),
                           math.constant(padLow[axis] + bias * dil));
    auto lo = math.add(math.div(math.add(biased, math.constant(dil - 1)), dil),
                       math.constant(-bias));
    auto hi = math.add(
        math.div(math.add(biased, math.constant(inputSize[axis] - 1)), dil),
        math.constant(1 - bias));
    auto taps = math.constant(window[axis]);
    lo = math.smin(math.smax(lo, math.constant(0)), taps);
    hi = math.smax(math.smin(hi, taps), lo);
    return {lo, hi};
  }

  /// The output positions [lo, hi) along `axis` whose input coordinate for
  /// window tap `tap` lies inside the input (the only ones a Q-slice
  /// contributes to). Empty ranges have lo == hi.
  std::pair<int64_t, int64_t> validOutputRange(unsigned axis,
                                               int64_t tap) const;
};

/// Decomposes an output position m over an NDHWF output shape; the same
/// formula as ConvGeometry::decomposeM for ops that only see the output.
template <typename Math>
std::array<typename Math::Value, 4>
decomposeOutputPosition(Math &math, typename Math::Value m,
                        const std::array<int64_t, 5> &outputShape) {
  return delinearize<Math, 4>(
      math, m,
      {outputShape[0], outputShape[1], outputShape[2], outputShape[3]});
}

/// Ceiling division of non-negative integers.
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace mlir::conv3d

#endif // CONV3D_GEOMETRY_CONVGEOMETRY_H
