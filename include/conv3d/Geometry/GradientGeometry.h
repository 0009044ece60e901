//===- GradientGeometry.h - gradients as forward convolutions ---*- C++ -*-===//
//
// The geometry of a convolution's data gradient (dgrad, also the transposed
// convolution) and weight gradient (wgrad), each as forward convolutions
// over the forward's ConvGeometry, so that every forward kernel computes
// them:
//
// - dgrad by stride phase. Along an axis with stride s, the input positions
//   i = phase + s*j (one phase per residue of i mod s) are reached only by
//   the forward taps t with t*dil = i + pad_lo (mod s): an arithmetic
//   progression of taps, step s/g (g = gcd(s, dil)). Each phase is then a
//   dense stride-1 forward convolution of the output gradient with those
//   taps rotated (and C <-> F transposed), dilation dil/g, no multiplication
//   by the zeros a zero-inserted formulation would read. Stride 1 is the one
//   phase: padding (Q-1)*dil - pad_lo, the whole rotated filter.
// - wgrad as a forward convolution whose window is the output gradient:
//   dW[q,r,s,c,f] = sum_{n,o} x[n, o*s + q*dil - pad, c] * dy[n, o, f],
//   i.e. stride dil, dilation s, output Q x R x (S*C). The output
//   gradient's width and batch are folded into the channels (Wo*N of them,
//   contiguous in dy, zero-padded to a multiple of 8 for the TMA kernels'
//   16-byte rows): a forward convolution's K steps run over channels, and
//   N alone (often 1) would leave them empty. The input is read as S
//   width taps x C channels per row, x'[0, d, h, (s, c), (wo, n)] =
//   x[n, d, h, wo*stride_w + s*dil_w - pad_w, c] (S/stride_w times the
//   input's size), so the convolution's width axis is S*C wide with a
//   window of 1 and its result, 1 x Q x R x (S*C) x F, is the QRSCF
//   gradient. The batch is 1, not C: kernels that tile each output depth
//   slice on its own (the sm90 kernel's per-depth-slice TMA loads, which
//   the output gradient's deep window needs) then see slices of R*S*C rows,
//   where C images of Q slices of R*S rows each filled 9 of a tile's 128
//   rows of a 3x3x3 gradient (bench/RESULTS.md, tenth session).
//   The height can be folded into the channels too (WgradFold::HeightWidth):
//   Ho*Wo*N channels, R*S gathered copies of the input, a window of Do
//   taps only. Each tap's K loop is then long where the width fold's is one
//   or two K steps of Wo*N channels (104-112 on the WAN layers), which the
//   sm90 kernel ran 2x slower than the same multiply-adds in long steps
//   (bench/RESULTS.md, eleventh session).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_GEOMETRY_GRADIENTGEOMETRY_H
#define CONV3D_GEOMETRY_GRADIENTGEOMETRY_H

#include "conv3d/Geometry/ConvGeometry.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mlir::conv3d {

/// One axis of one stride phase of a data gradient: the input-gradient
/// positions phase, phase + stride, ... and the stride-1 forward convolution
/// over the output gradient that computes them.
struct DgradAxisPhase {
  /// The first input position and the number of positions (J).
  int64_t phase = 0;
  int64_t size = 0;
  /// The forward taps that reach these positions, as the sub-convolution's
  /// taps k = 0..taps-1 (rotated): forward tap firstTap + (taps-1-k)*tapStep.
  int64_t taps = 0;
  int64_t firstTap = 0;
  int64_t tapStep = 1;
  /// The sub-convolution's dilation (dil / gcd(stride, dil)).
  int64_t dilation = 1;
  /// The output-gradient rows it reads, [sliceBegin, sliceBegin+sliceSize),
  /// and its padding around them (non-negative; rows the padding would drop
  /// are sliced off instead).
  int64_t sliceBegin = 0;
  int64_t sliceSize = 0;
  int64_t padLow = 0;
  int64_t padHigh = 0;

  /// The forward tap behind sub-convolution tap `k`.
  int64_t forwardTap(int64_t k) const {
    return firstTap + (taps - 1 - k) * tapStep;
  }
  /// Whether the positions get no contribution at all (no tap reaches
  /// them, or only the output gradient's padding does): their gradient is
  /// zero.
  bool contributesNothing() const { return taps == 0 || sliceSize <= 0; }
};

/// The phase `phase` (in [0, stride)) of `axis` of `forward`'s data
/// gradient. `size` is 0 when the input has no position in that phase.
DgradAxisPhase dgradAxisPhase(const ConvGeometry &forward, unsigned axis,
                              int64_t phase);

/// One stride phase of a data gradient: a phase per axis.
struct DgradPhase {
  std::array<DgradAxisPhase, 3> axes;
  bool empty() const {
    return axes[0].size == 0 || axes[1].size == 0 || axes[2].size == 0;
  }
  bool contributesNothing() const {
    return axes[0].contributesNothing() || axes[1].contributesNothing() ||
           axes[2].contributesNothing();
  }
};

/// The stride phases of `forward`'s data gradient that some tap reaches
/// (at most Q per axis, each tap reaching one residue; so at most Q*R*S
/// whatever the strides), phases of depth outermost; `complete` says
/// whether they cover every input position (else the others are zero).
struct DgradPhases {
  std::vector<DgradPhase> phases;
  bool complete = true;
};
DgradPhases dgradPhases(const ConvGeometry &forward);

/// The forward convolution of a phase (one that contributes something):
/// input the sliced output gradient (N x sliceSize... x F), window the
/// phase's taps over F channels, C filters, stride 1; its output is the
/// phase's N x size_d x size_h x size_w x C block of the input gradient.
ConvGeometry dgradPhaseGeometry(const ConvGeometry &forward,
                                const DgradPhase &phase);

/// Which of the forward's output axes a weight gradient's forward form
/// contracts as channels, with the batch (see the file comment).
enum class WgradFold {
  /// Wo*N channels, a window of Do x Ho taps, S gathered input copies.
  Width,
  /// Ho*Wo*N channels, a window of Do taps, R*S gathered input copies.
  HeightWidth,
};

/// A weight gradient as a forward convolution (see the file comment): the
/// forward input cropped to `inputExtent` rows along depth and height (the
/// rows past them are read by no tap) and gathered, with the Width fold,
/// per width tap into 1 x D' x H' x (S*C) x K, the output gradient as its
/// FQRSC filter F x Do x Ho x 1 x K (K: Wo*N rounded up to a multiple of
/// 8), the result 1 x Q x R x (S*C) x F; with the HeightWidth fold, per
/// height and width tap into 1 x D' x 1 x (R*S*C) x K, the filter
/// F x Do x 1 x 1 x K (K: Ho*Wo*N rounded up), the result
/// 1 x Q x 1 x (R*S*C) x F. Either result is the QRSCF gradient reshaped.
/// `empty` when the depth or height taps read only padding (the gradient
/// is zero; width taps that do read zeros of the padded input).
struct WgradForward {
  WgradFold fold = WgradFold::Width;
  ConvGeometry geometry;
  std::array<int64_t, 2> inputExtent = {0, 0};
  bool empty = false;

  /// Elements of the gathered input (the forward input's copies).
  int64_t gatheredInputElements() const;
};
WgradForward wgradAsForward(const ConvGeometry &forward,
                            WgradFold fold = WgradFold::Width);

} // namespace mlir::conv3d

#endif // CONV3D_GEOMETRY_GRADIENTGEOMETRY_H
