//===- ConvGeometry.cpp - the geometry of a 3-D convolution ---------------===//

#include "conv3d/Geometry/ConvGeometry.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <initializer_list>

using namespace mlir::conv3d;

static constexpr int64_t kDyn = ConvGeometry::kDynamic;
static const char *const kAxisNames[3] = {"depth", "height", "width"};

ConvGeometry ConvGeometry::fromShapes(const std::array<int64_t, 5> &inputShape,
                                      const std::array<int64_t, 5> &filterShape,
                                      FilterLayout layout,
                                      const std::array<int64_t, 3> &strides,
                                      const std::array<int64_t, 3> &dilations,
                                      const std::array<int64_t, 6> &padding,
                                      int64_t groups) {
  ConvGeometry g;
  g.groups = groups;
  g.batch = inputShape[0];
  g.inputSize = {inputShape[1], inputShape[2], inputShape[3]};
  g.channels = inputShape[4];
  if (layout == FilterLayout::qrscf) {
    g.window = {filterShape[0], filterShape[1], filterShape[2]};
    g.filters = filterShape[4];
  } else {
    g.window = {filterShape[1], filterShape[2], filterShape[3]};
    g.filters = filterShape[0];
  }
  g.strides = strides;
  g.dilations = dilations;
  for (unsigned axis = 0; axis < 3; ++axis) {
    g.padLow[axis] = padding[2 * axis];
    g.padHigh[axis] = padding[2 * axis + 1];
  }
  return g;
}

ConvGeometry
ConvGeometry::fromTransposed(const std::array<int64_t, 5> &inputShape,
                             const std::array<int64_t, 5> &filterShape,
                             FilterLayout layout,
                             const std::array<int64_t, 3> &strides,
                             const std::array<int64_t, 3> &dilations,
                             const std::array<int64_t, 6> &padding,
                             const std::array<int64_t, 3> &outputPadding) {
  // The forward's input shape is unknown yet: build the geometry from the
  // filter, then size its input from the transposed convolution's.
  ConvGeometry g = fromShapes({inputShape[0], 1, 1, 1, 1}, filterShape, layout,
                              strides, dilations, padding);
  g.channels = layout == FilterLayout::qrscf ? filterShape[3] : filterShape[4];
  for (unsigned axis = 0; axis < 3; ++axis) {
    int64_t in = inputShape[axis + 1];
    g.inputSize[axis] = in == kDyn
                            ? kDyn
                            : (in - 1) * strides[axis] - g.padLow[axis] -
                                  g.padHigh[axis] + g.effectiveWindow(axis) +
                                  outputPadding[axis];
  }
  return g;
}

int64_t ConvGeometry::transposedOutputPadding(unsigned axis) const {
  if (inputSize[axis] == kDyn)
    return kDyn;
  int64_t span =
      inputSize[axis] + padLow[axis] + padHigh[axis] - effectiveWindow(axis);
  return span < 0 ? 0 : span % strides[axis];
}

std::optional<std::string> ConvGeometry::transposedProblem(
    const std::array<int64_t, 3> &outputPadding) const {
  for (unsigned axis = 0; axis < 3; ++axis)
    if (outputPadding[axis] < 0 || outputPadding[axis] >= strides[axis])
      return llvm::formatv("output padding along {0} must lie in [0, stride "
                           "= {1}), got {2}",
                           kAxisNames[axis], strides[axis], outputPadding[axis])
          .str();
  return std::nullopt;
}

std::array<int64_t, 5> ConvGeometry::filterShape(FilterLayout layout) const {
  int64_t c = channelsPerGroup();
  if (layout == FilterLayout::qrscf)
    return {window[0], window[1], window[2], c, filters};
  return {filters, window[0], window[1], window[2], c};
}

std::array<int64_t, 6> ConvGeometry::padding() const {
  return {padLow[0], padHigh[0], padLow[1], padHigh[1], padLow[2], padHigh[2]};
}

int64_t ConvGeometry::outputSize(unsigned axis) const {
  if (inputSize[axis] == kDyn)
    return kDyn;
  int64_t span =
      inputSize[axis] + padLow[axis] + padHigh[axis] - effectiveWindow(axis);
  if (span < 0 || strides[axis] <= 0)
    return 0;
  return span / strides[axis] + 1;
}

std::array<int64_t, 5> ConvGeometry::outputShape() const {
  return {batch, outputSize(0), outputSize(1), outputSize(2), filters};
}

bool ConvGeometry::hasStaticShape() const {
  return batch != kDyn && inputSize[0] != kDyn && inputSize[1] != kDyn &&
         inputSize[2] != kDyn;
}

int64_t ConvGeometry::gemmM() const {
  if (!hasStaticShape())
    return kDyn;
  return batch * outputSize(0) * outputSize(1) * outputSize(2);
}

double ConvGeometry::flops() const {
  return 2.0 * static_cast<double>(gemmBatch()) * static_cast<double>(gemmM()) *
         static_cast<double>(gemmN()) * static_cast<double>(gemmK());
}

std::optional<std::string> ConvGeometry::validate() const {
  if (channels == kDyn || filters == kDyn || window[0] == kDyn ||
      window[1] == kDyn || window[2] == kDyn)
    return std::string("channel, filter and window sizes must be static");
  if (channels <= 0)
    return llvm::formatv("channel count must be positive, got {0}", channels)
        .str();
  if (filters <= 0)
    return llvm::formatv("filter count must be positive, got {0}", filters)
        .str();
  if (batch != kDyn && batch <= 0)
    return llvm::formatv("batch size must be positive, got {0}", batch).str();
  if (groups <= 0)
    return llvm::formatv("groups must be positive, got {0}", groups).str();
  if (channels % groups != 0)
    return llvm::formatv("the {0} input channels do not split into {1} "
                         "groups (C must be a multiple of groups)",
                         channels, groups)
        .str();
  if (filters % groups != 0)
    return llvm::formatv("the {0} filters do not split into {1} groups (F "
                         "must be a multiple of groups)",
                         filters, groups)
        .str();
  // Bounds that keep every derived size (padded extents, output sizes, GEMM
  // M/N/K) far from int64 overflow.
  constexpr int64_t kMaxExtent = int64_t(1) << 31;
  constexpr int64_t kMaxParameter = int64_t(1) << 20;
  auto tooLarge = [](llvm::StringRef what, int64_t value, int64_t limit) {
    return llvm::formatv("{0} {1} exceeds the supported maximum {2}", what,
                         value, limit)
        .str();
  };
  if (channels > kMaxExtent)
    return tooLarge("channel count", channels, kMaxExtent);
  if (filters > kMaxExtent)
    return tooLarge("filter count", filters, kMaxExtent);
  if (batch != kDyn && batch > kMaxExtent)
    return tooLarge("batch size", batch, kMaxExtent);
  for (unsigned axis = 0; axis < 3; ++axis) {
    std::string name = kAxisNames[axis];
    if (inputSize[axis] != kDyn && inputSize[axis] > kMaxExtent)
      return tooLarge("input " + name, inputSize[axis], kMaxExtent);
    if (window[axis] > kMaxParameter)
      return tooLarge("filter window along " + name, window[axis],
                      kMaxParameter);
    if (strides[axis] > kMaxParameter)
      return tooLarge("stride along " + name, strides[axis], kMaxParameter);
    if (dilations[axis] > kMaxParameter)
      return tooLarge("dilation along " + name, dilations[axis], kMaxParameter);
    if (padLow[axis] > kMaxParameter || padHigh[axis] > kMaxParameter)
      return tooLarge("padding along " + name,
                      std::max(padLow[axis], padHigh[axis]), kMaxParameter);
  }
  for (unsigned axis = 0; axis < 3; ++axis) {
    const char *name = kAxisNames[axis];
    if (window[axis] <= 0)
      return llvm::formatv("filter window along {0} must be positive, got {1}",
                           name, window[axis])
          .str();
    if (strides[axis] <= 0)
      return llvm::formatv("stride along {0} must be positive, got {1}", name,
                           strides[axis])
          .str();
    if (dilations[axis] <= 0)
      return llvm::formatv("dilation along {0} must be positive, got {1}", name,
                           dilations[axis])
          .str();
    if (padLow[axis] < 0 || padHigh[axis] < 0)
      return llvm::formatv("padding along {0} must be non-negative, got "
                           "[{1}, {2}]",
                           name, padLow[axis], padHigh[axis])
          .str();
    if (inputSize[axis] == kDyn)
      continue;
    if (inputSize[axis] <= 0)
      return llvm::formatv("input {0} must be positive, got {1}", name,
                           inputSize[axis])
          .str();
    int64_t padded = inputSize[axis] + padLow[axis] + padHigh[axis];
    if (padded < effectiveWindow(axis))
      return llvm::formatv("empty output: the dilated window along {0} spans "
                           "{1} but the padded input has {2}",
                           name, effectiveWindow(axis), padded)
          .str();
  }
  // Total sizes must fit comfortably in int64 (products of the bounded
  // extents above can still overflow).
  if (hasStaticShape()) {
    double elements[3] = {double(batch) * inputSize[0] * inputSize[1] *
                              inputSize[2] * channels,
                          double(gemmM()) * filters, double(gemmK()) * filters};
    const char *names[3] = {"input", "output", "filter"};
    for (unsigned i = 0; i < 3; ++i)
      if (elements[i] > 0x1p62)
        return llvm::formatv("the {0} has {1:e} elements, more than "
                             "supported",
                             names[i], elements[i])
            .str();
  }
  return std::nullopt;
}

/// Floor division for any sign of the numerator, positive divisor.
static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

std::pair<int64_t, int64_t> ConvGeometry::validOutputRange(unsigned axis,
                                                           int64_t tap) const {
  // 0 <= o*s - pad_lo + tap*dil <= size - 1.
  int64_t offset = tap * dilations[axis] - padLow[axis];
  int64_t lo = -floorDiv(offset, strides[axis]); // ceil(-offset / s)
  int64_t hi = floorDiv(inputSize[axis] - 1 - offset, strides[axis]) + 1;
  lo = std::clamp<int64_t>(lo, 0, outputSize(axis));
  hi = std::clamp<int64_t>(hi, lo, outputSize(axis));
  return {lo, hi};
}

/// Why TMA im2col descriptors whose spatial axes are `axes` (corners in
/// [-cornerLimit, cornerLimit), im2col offsets up to `maxOffset`) cannot
/// describe `g`'s input, or none. Limits of cuTensorMapEncodeIm2col and the
/// PTX im2col loads: rank 5 has corners in [-16, 15] and 5-bit offsets,
/// rank 4 [-128, 127] and 8-bit offsets; element strides 1..8 and 16-byte
/// global strides for every rank (the rank-5 ones checked on an H100).
static std::optional<std::string>
im2colProblem(const ConvGeometry &g, std::initializer_list<unsigned> axes,
              int64_t cornerLimit, int64_t maxOffset, int64_t elementBytes) {
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  for (unsigned axis : axes) {
    const char *name = kAxisNames[axis];
    if (lower[axis] < -cornerLimit || lower[axis] >= cornerLimit ||
        upper[axis] < -cornerLimit || upper[axis] >= cornerLimit)
      return llvm::formatv("the {0} padding ({1}, {2}) and window put a TMA "
                           "im2col corner outside [{3}, {4}]",
                           name, g.padLow[axis], g.padHigh[axis], -cornerLimit,
                           cornerLimit - 1)
          .str();
    if ((g.window[axis] - 1) * g.dilations[axis] > maxOffset)
      return llvm::formatv("the dilated {0} window spans {1} pixels; TMA "
                           "im2col offsets reach {2}",
                           name, g.effectiveWindow(axis), maxOffset)
          .str();
    if (g.strides[axis] > 8)
      return llvm::formatv(
                 "the {0} stride {1} exceeds TMA's element stride limit of 8",
                 name, g.strides[axis])
          .str();
  }
  if ((g.channels * elementBytes) % 16 != 0)
    return "a pixel's " + std::to_string(g.channels) +
           " channels are not a multiple of 16 bytes (TMA's global stride "
           "granularity)";
  return std::nullopt;
}

std::optional<std::string>
ConvGeometry::tmaIm2colProblem(int64_t elementBytes) const {
  return im2colProblem(*this, {kDepth, kHeight, kWidth}, 16, 31, elementBytes);
}

std::optional<std::string>
ConvGeometry::tmaSliceIm2colProblem(int64_t elementBytes) const {
  return im2colProblem(*this, {kHeight, kWidth}, 128, 255, elementBytes);
}

int64_t ConvGeometry::tmaTilesPerSlice(int64_t tileM, int64_t clusterM) const {
  int64_t tiles = ceilDiv(outputSliceSize(), tileM);
  return ceilDiv(tiles, clusterM) * clusterM;
}

int64_t ConvGeometry::tmaRowTiles(int64_t tileM, TmaIm2colForm form,
                                  int64_t clusterM) const {
  if (form == TmaIm2colForm::volume)
    return ceilDiv(gemmM(), tileM);
  return batch * outputSize(kDepth) * tmaTilesPerSlice(tileM, clusterM);
}

std::optional<TmaIm2colForm>
ConvGeometry::chooseTmaIm2colForm(int64_t elementBytes,
                                  std::string &why) const {
  std::optional<std::string> volumeProblem = tmaIm2colProblem(elementBytes);
  // A history operand is a second tensor: only boxes of one depth slice
  // (which lies in one of the two) never straddle both sources.
  if (!volumeProblem && historyDepth != 0)
    volumeProblem = "a history operand is read one depth slice at a time";
  if (!volumeProblem) {
    why.clear();
    return TmaIm2colForm::volume;
  }
  std::optional<std::string> sliceProblem = tmaSliceIm2colProblem(elementBytes);
  if (!sliceProblem) {
    why = *volumeProblem;
    return TmaIm2colForm::depthSlices;
  }
  why =
      *volumeProblem == *sliceProblem
          ? *sliceProblem
          : *volumeProblem + "; per-depth-slice descriptors: " + *sliceProblem;
  return std::nullopt;
}
