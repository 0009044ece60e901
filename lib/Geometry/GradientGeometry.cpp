//===- GradientGeometry.cpp - gradients as forward convolutions ----------===//

#include "conv3d/Geometry/GradientGeometry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir::conv3d;

/// a mod b in [0, b) for any sign of a, b > 0.
static int64_t positiveMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

DgradAxisPhase mlir::conv3d::dgradAxisPhase(const ConvGeometry &forward,
                                            unsigned axis, int64_t phase) {
  const int64_t size = forward.inputSize[axis];
  const int64_t outSize = forward.outputSize(axis);
  const int64_t window = forward.window[axis];
  const int64_t stride = forward.strides[axis];
  const int64_t dilation = forward.dilations[axis];
  const int64_t padLow = forward.padLow[axis];

  DgradAxisPhase p;
  p.phase = phase;
  p.size = phase < size ? (size - phase + stride - 1) / stride : 0;
  int64_t common = std::gcd(stride, dilation);
  p.tapStep = stride / common;
  p.dilation = dilation / common;
  // Input position i = o*stride - pad_lo + t*dil: tap t reaches phase
  // positions when t*dil = phase + pad_lo (mod stride), i.e. for every
  // tapStep-th tap from the first such one.
  p.firstTap = 0;
  while (p.firstTap < std::min(window, p.tapStep) &&
         positiveMod(phase + padLow - p.firstTap * dilation, stride) != 0)
    ++p.firstTap;
  if (p.size == 0 || p.firstTap >= std::min(window, p.tapStep)) {
    p.taps = 0;
    return p;
  }
  p.taps = (window - 1 - p.firstTap) / p.tapStep + 1;
  // Position phase + stride*j reads output j + first - k*dilation' for the
  // k-th reaching tap (an exact division); rotated, the sub-convolution
  // reads j - padLow + k'*dilation'.
  int64_t first = (phase + padLow - p.firstTap * dilation) / stride;
  int64_t subPadLow = (p.taps - 1) * p.dilation - first;
  int64_t subPadHigh = p.size - outSize + first;
  // Negative padding drops output-gradient rows: slice them off instead.
  p.sliceBegin = std::max<int64_t>(0, -subPadLow);
  p.sliceSize = outSize - std::max<int64_t>(0, -subPadHigh) - p.sliceBegin;
  p.padLow = std::max<int64_t>(0, subPadLow);
  p.padHigh = std::max<int64_t>(0, subPadHigh);
  return p;
}

DgradPhases mlir::conv3d::dgradPhases(const ConvGeometry &forward) {
  // Per axis, the phases a tap reaches: tap t reaches the residue
  // (t*dil - pad_lo) mod stride, if the input has positions there. Only
  // these are enumerated, so a stride of 2^20 costs nothing.
  DgradPhases result;
  std::array<std::vector<DgradAxisPhase>, 3> perAxis;
  for (unsigned axis = 0; axis < 3; ++axis) {
    int64_t stride = forward.strides[axis];
    std::vector<int64_t> residues;
    for (int64_t t = 0; t < forward.window[axis]; ++t)
      residues.push_back(positiveMod(
          t * forward.dilations[axis] - forward.padLow[axis], stride));
    llvm::sort(residues);
    residues.erase(std::unique(residues.begin(), residues.end()),
                   residues.end());
    for (int64_t phase : residues) {
      DgradAxisPhase p = dgradAxisPhase(forward, axis, phase);
      if (p.size > 0 && !p.contributesNothing())
        perAxis[axis].push_back(p);
    }
    int64_t phasesWithPositions = std::min(stride, forward.inputSize[axis]);
    result.complete &= int64_t(perAxis[axis].size()) == phasesWithPositions;
  }
  for (const DgradAxisPhase &d : perAxis[0])
    for (const DgradAxisPhase &h : perAxis[1])
      for (const DgradAxisPhase &w : perAxis[2])
        result.phases.push_back(DgradPhase{{d, h, w}});
  return result;
}

ConvGeometry mlir::conv3d::dgradPhaseGeometry(const ConvGeometry &forward,
                                              const DgradPhase &phase) {
  ConvGeometry g;
  g.batch = forward.batch;
  g.channels = forward.filters;
  g.filters = forward.channels;
  for (unsigned axis = 0; axis < 3; ++axis) {
    const DgradAxisPhase &p = phase.axes[axis];
    g.inputSize[axis] = p.sliceSize;
    g.window[axis] = p.taps;
    g.strides[axis] = 1;
    g.dilations[axis] = p.dilation;
    g.padLow[axis] = p.padLow;
    g.padHigh[axis] = p.padHigh;
  }
  return g;
}

WgradForward mlir::conv3d::wgradAsForward(const ConvGeometry &forward,
                                          WgradFold fold) {
  WgradForward w;
  w.fold = fold;
  ConvGeometry &g = w.geometry;
  g.batch = 1;
  bool foldHeight = fold == WgradFold::HeightWidth;
  // The output positions contracted as channels, with zeros past them to a
  // multiple of 8: the TMA kernels read 16-byte channel rows, and the
  // rewrite's gathers write the zeros in the same pass (a channel-padding
  // pass would copy both operands again).
  int64_t positions = forward.outputSize(kWidth) * forward.batch;
  if (foldHeight)
    positions *= forward.outputSize(kHeight);
  g.channels = llvm::alignTo(positions, 8);
  g.filters = forward.filters;
  // Width: the S taps (and with the height, the R x S taps) x C channels
  // are gathered into the input, one column each.
  g.inputSize[kWidth] = forward.window[kWidth] * forward.channels;
  if (foldHeight)
    g.inputSize[kWidth] *= forward.window[kHeight];
  g.window[kWidth] = 1;
  for (unsigned axis = 0; axis < 2; ++axis) {
    int64_t outSize = forward.outputSize(axis);
    // One past the last input row any tap reads.
    int64_t extent = (outSize - 1) * forward.strides[axis] + 1 +
                     (forward.window[axis] - 1) * forward.dilations[axis] -
                     forward.padLow[axis];
    if (extent <= 0)
      w.empty = true;
    w.inputExtent[axis] =
        std::clamp<int64_t>(extent, 1, forward.inputSize[axis]);
    if (axis == kHeight && foldHeight) {
      // The gather reads the rows; the forward form has one.
      g.inputSize[axis] = 1;
      g.window[axis] = 1;
      continue;
    }
    g.inputSize[axis] = w.inputExtent[axis];
    g.window[axis] = outSize;
    g.strides[axis] = forward.dilations[axis];
    g.dilations[axis] = forward.strides[axis];
    g.padLow[axis] = forward.padLow[axis];
    g.padHigh[axis] = std::max<int64_t>(0, extent - forward.inputSize[axis]);
  }
  return w;
}

int64_t WgradForward::gatheredInputElements() const {
  return llvm::product_of(geometry.inputShape());
}
