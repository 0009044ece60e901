//===- CostModel.h - predicted kernel times ---------------------*- C++ -*-===//
//
// The kernel cost model: the time a tile configuration takes on a
// convolution, from the waves and their tail, the tiles' useful fraction,
// the K steps a block runs and what each costs (its MMAs against its loads
// through L2 at the bandwidth the active blocks share), the pipeline fill,
// the epilogue, the DRAM floor and split-K's reduction. Its constants are
// fitted on timings of random layer shapes (bench/costmodel/fit.py, from
// `bench/networks.py --random N --split F --candidates`), not on the
// benchmark suite, and checked on a held-back set; the numbers are in
// bench/RESULTS.md. bench/costmodel/model.py is its Python twin, used only
// to fit the constants (test/Target/cost-model-twin.test keeps them equal).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_COSTMODEL_H
#define CONV3D_TARGET_COSTMODEL_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dAttrs.h"

#include <optional>

namespace mlir::conv3d {

/// What the model says of one configuration.
struct CostEstimate {
  double milliseconds = 0;
  /// Blocks over the blocks the machine holds at once.
  double waves = 0;
  /// Bytes of the input, filter and output: the DRAM floor's.
  double dramBytes = 0;
};

/// The estimate for `config` on `geometry` when the kernel `kernel` (sm80,
/// sm90, sm100: the configuration's kernel, resolved) runs it on a GPU of
/// `multiprocessors`; none for kernels the model does not cover (cpu) and
/// for sm90 tiles of more than 160 accumulators per thread (256 x 192 and
/// wider), whose register pressure it does not model.
std::optional<CostEstimate> estimateKernelCost(const ConvGeometry &geometry,
                                               IGemmConfigAttr config,
                                               Target kernel,
                                               int64_t multiprocessors = 132);

/// The output tiles the kernel `kernel` schedules for `config` on
/// `geometry` (per split: split-K multiplies them; each group of a grouped
/// convolution has its own), as the model counts them: 64-column rows for the
/// halo mainloop, per output depth slice for k_order = qslice_outer and for the
/// sm90 kernel's per-depth-slice TMA loads, over all of M otherwise.
int64_t scheduledTiles(const ConvGeometry &geometry, IGemmConfigAttr config,
                       Target kernel);

} // namespace mlir::conv3d

#endif // CONV3D_TARGET_COSTMODEL_H
