//===- CostModel.cpp - predicted kernel times -----------------------------===//
//
// The formula (bench/costmodel/model.py is its twin; times in ms):
//
//   time   = max(launch + rounds * tile, DRAM bytes / bw_dram) + split
//   tile   = fill + steps * step + epilogue
//   step   = max(MMA time of a K step, active blocks' loads / bw_l2) + s
//   rounds = ceil(blocks / (multiprocessors x blocks per multiprocessor))
//
// sm90 (and sm100, which has no timings of its own yet and borrows
// sm90's): a K step is one tap x 64 channels, the A tile tile_m rows of 128
// bytes, or for the halo mainloop a patch per depth tap reused by the R x S
// taps; tiles follow the kernel's scheduler (per output depth slice for
// k_order = qslice_outer and for per-depth-slice TMA loads, 64-column rows
// for halo). sm80: K steps of
// tile_k, two blocks a multiprocessor where their rings fit, element-wise
// loads (slower) where C is not a multiple of 8. Split-K: splits the sm90
// kernel reduces in a cluster (SM90KernelPlan::splitClusterProblem) cost a
// handshake per split, others go through the workspace (a second kernel,
// the slabs written and read).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/CostModel.h"
#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// The fitted constants (CostModelConstants.inc, written by
/// bench/costmodel/fit.py).
struct Constants {
#define CONV3D_COST_CONSTANT(name, value) double name = value;
#include "CostModelConstants.inc"
#undef CONV3D_COST_CONSTANT
};

// The most f32 accumulators per thread the model prices. At 192 (256 x 192
// tiles) ptxas still keeps them in registers, but the model, which sees no
// register pressure, predicts such tiles 17% faster than 128 x 192 on the
// WAN layers where the H200 runs them 2-8% slower (bench/RESULTS.md): left
// to the rules and the tuner.
constexpr int64_t kMaxAccumulators = 160;

double ceilDivF(int64_t a, int64_t b) { return double(ceilDiv(a, b)); }

/// How the sm90 kernel's scheduler tiles M: per output depth slice where it
/// loads the input per depth slice (a slice of few rows leaves most of each
/// tile empty: the weight gradient's forward form did, 9 rows of 128, before
/// its batch became 1); over all of M for every other kernel.
TmaIm2colForm tmaForm(const ConvGeometry &g, Target kernel) {
  std::string why;
  if (kernel != Target::sm90)
    return TmaIm2colForm::volume;
  return g.chooseTmaIm2colForm(2, why).value_or(TmaIm2colForm::volume);
}

} // namespace

int64_t mlir::conv3d::scheduledTiles(const ConvGeometry &g,
                                     IGemmConfigAttr config, Target kernel) {
  int64_t tm = config.getTileM();
  // Groups are a batch dimension of the GEMM: each has its own N tiles.
  int64_t nTiles = ceilDiv(g.gemmN(), config.getTileN()) * g.gemmBatch();
  int64_t outD = g.outputSize(0), outH = g.outputSize(1),
          outW = g.outputSize(2);
  if (config.getMainloop() == Mainloop::halo)
    return g.batch * outD * ceilDiv(outH, std::max<int64_t>(1, tm / 64)) *
           ceilDiv(outW, 64) * nTiles;
  if (config.getKOrder() == KOrder::qslice_outer)
    return g.batch * outD * ceilDiv(outH * outW, tm) * nTiles;
  return g.tmaRowTiles(tm, tmaForm(g, kernel), config.getClusterM()) * nTiles;
}

std::optional<CostEstimate>
mlir::conv3d::estimateKernelCost(const ConvGeometry &g, IGemmConfigAttr config,
                                 Target kernel, int64_t multiprocessors) {
  static const Constants p;
  bool wgmma = kernel == Target::sm90 || kernel == Target::sm100;
  if (!wgmma && kernel != Target::sm80)
    return std::nullopt;
  int64_t tm = config.getTileM(), tn = config.getTileN(),
          tk = config.getTileK(), split = config.getSplitK();
  bool pingPong = config.getSchedule() == KernelSchedule::pingpong;
  bool halo = config.getMainloop() == Mainloop::halo;
  if (kernel == Target::sm90) {
    int64_t groups =
        pingPong ? 1 : std::max<int64_t>(1, config.getWarpsM() / 4);
    if ((tm / (64 * groups)) * tn / 2 > kMaxAccumulators)
      return std::nullopt;
  }
  int64_t m = g.gemmM(), f = g.filters, c = g.channels;
  int64_t taps = g.window[0] * g.window[1] * g.window[2];
  int64_t batch = g.batch;
  int64_t blocks = scheduledTiles(g, config, kernel) * split;

  double tile, active, rounds;
  int64_t resident = multiprocessors;
  if (wgmma) {
    active = double(std::min(blocks, resident));
    rounds = ceilDivF(blocks, resident);
    double steps = ceilDivF(taps * ceilDiv(c, 64), split);
    double aBytes = double(tm) * 128;
    if (halo) {
      double patch = double(tm / 64 + g.window[1] - 1) *
                     double(ceilDiv(64 + g.window[2] - 1, 8) * 8) * 128;
      aBytes = p.halo_reload * patch / double(g.window[1] * g.window[2]);
    }
    double l2 = active * (aBytes + double(tn) * 128) / (p.bw_l2 * 1e6);
    double mma = p.a90 * double(tm) * double(tn) / 4096;
    double step = std::max(mma, l2) + p.s90;
    double epilogue =
        p.epi90 * double(tm) * double(tn) * (pingPong ? p.pingpong_epi : 1.0);
    tile = p.fill90 + steps * step + epilogue;
  } else {
    int64_t perSM = config.getStages() * (tm + tn) * tk * 2 <= 100000 ? 2 : 1;
    resident = multiprocessors * perSM;
    active = double(std::min(blocks, resident));
    rounds = ceilDivF(blocks, resident);
    double steps = ceilDivF(ceilDiv(g.gemmK(), tk), split);
    double l2 = active * double(tm + tn) * double(tk) * 2 / (p.bw_l2 * 1e6);
    double mma =
        p.a80 * double(tm) * double(tn) * double(tk) / 262144 * double(perSM);
    double slow = c % 2 ? p.odd80 : c % 8 ? p.vec80 * double(tk) / 32 : 1.0;
    double step = (std::max(mma, l2) + p.s80) * slow;
    tile = p.fill80 + steps * step + p.epi80 * double(tm) * double(tn);
  }
  CostEstimate estimate;
  estimate.waves = double(blocks) / double(resident);
  estimate.dramBytes =
      double(batch) * double(g.inputSize[0]) * double(g.inputSize[1]) *
          double(g.inputSize[2]) * double(c) * 2 +
      double(taps) * double(c) * double(f) * 2 + double(m) * double(f) * 2;
  double time = std::max(p.launch + rounds * tile,
                         estimate.dramBytes / (p.bw_dram * 1e6));
  if (split > 1) {
    if (kernel == Target::sm90 &&
        !sm90::SM90KernelPlan::splitClusterProblem(split, config.getSchedule(),
                                                   config.getClusterM(),
                                                   config.getMainloop()))
      time += p.cluster_split * double(split);
    else
      time += p.workspace_launch + 2 * double(split) * double(m) * double(f) *
                                       4 / (p.workspace_bw * 1e6);
  }
  estimate.milliseconds = time;
  return estimate;
}
