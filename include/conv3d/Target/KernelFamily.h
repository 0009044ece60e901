//===- KernelFamily.h - the kernels a target can run ------------*- C++ -*-===//
//
// The target layer. A kernel family is one kernel the compiler can emit for
// a convolution: `cpu` (loops), `sm80` (mma.sync + cp.async), `sm90-halo`
// and `sm90-im2col` (wgmma with TMA halo or im2col loads), `sm100` (tcgen05
// into TMEM) and `sm100-block-scaled` (real NVFP4, kind::mxf4nvf4). What the
// compiler knows about a kernel before it emits IR lives with its family, in
// the spirit of CUTLASS's `can_implement`, IREE's TargetAttr and Triton's
// TargetInfo:
//
//   canImplement(problem)    none, or why the kernel cannot compute it: the
//                            one answer every pass asks for (select-config,
//                            the tuner, fuse-quant, relayout-filter,
//                            apply-nvfp4-mode, the lowerings)
//   select(problem)          the heuristic's configuration, or why the family
//                            declines a convolution it could compute (another
//                            family is faster there)
//   addCandidates(problem)   what the tuner times besides the heuristic's
//   predict(problem, config) the cost model's time and waves
//                            (CostModel.h: fitted on timings of random
//                            layer shapes), none where it has no model
//   planProblem(problem, c)  why the kernel's plan refuses configuration c
//                            (shared memory, store boxes), or none
//   plan(...)                the kernel plan its lowering consumes: typed,
//                            on the concrete family (SM90Families.h, ...),
//                            calling the plan builders of this layer
//   name, chip, kernel,      what explain prints and the configuration's
//   lowering pass            `kernel` value (IGemmConfigAttr)
//
// A ConvProblem is what a family decides from: the geometry, the operands'
// element type and filter layout, NVFP4 quantization, the extra operands
// (history, prologue), the output's form and, on memrefs, the operands'
// layouts. Each caller fills what it knows; a fact left unknown (nullopt) is
// not checked, so the graph passes ask on tensors and the lowerings again on
// memrefs, with the same function.
//
// Every target lists its families in fallback order (getKernelFamilies):
//
//   cpu     cpu
//   sm80    sm80
//   sm90    sm90-halo, sm90-im2col, sm80
//   sm100   sm100-block-scaled, sm100, sm80
//
// selectKernel walks the list: the first family that can implement the
// convolution and does not decline takes it, and every family's verdict is
// kept (conv3d-select-config remarks a fallback to another chip's kernel;
// conv3d-run --explain prints them all). A new kernel (depthwise, dgrad,
// wgrad) is one more KernelFamily and one more entry in its target's list
// (Registry.cpp).
//
// With the cost model (SelectionPolicy::CostModel, the default), where the
// taker is an sm90 family and the heuristic's configuration fills less than
// kModelMaxWaves of the machine (the small-M layers the rules serve badly),
// that configuration competes with the tuner's candidates of the same
// families (tuningCandidates: tile shapes, schedules, the halo mainloop,
// split-K): the one with the lowest predicted time whose plan builds is
// taken, unless it saves less than kModelMargin over the heuristic's. The model
// was fitted and checked on sm90 timings only, so other targets keep their
// heuristics.
//
// Layers: Target is above the IR (it speaks IGemmConfigAttr and the
// dialect's enums) and below Transforms and Conversion, which ask it; it
// includes neither (cmake/Conv3dLayers.cmake checks).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_KERNELFAMILY_H
#define CONV3D_TARGET_KERNELFAMILY_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/Target/SelectionPolicy.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::conv3d {

class ConvOp;
class KernelFamily;

/// What the lowerings know of the memref operands, which the graph passes
/// do not (bufferization decides it): alignments (elements, the largest
/// power of two up to 8 dividing the offset and every stride but the
/// innermost; 8 for identity layouts) and the strides TMA's per-depth-slice
/// views need.
struct OperandLayouts {
  int64_t inputAlignment = 8, filterAlignment = 8;
  /// A history operand's, and whether its depth is static.
  int64_t historyAlignment = 8;
  bool historyStaticDepth = true;
  /// Per-depth-slice TMA views (TmaIm2colForm::depthSlices) see the depth
  /// slices of image n as images of a rank-4 tensor: the batch stride must
  /// be a multiple of the depth stride, at least the depth times it.
  bool inputSlicesPerImage = true, historySlicesPerImage = true;
  /// The packed NVFP4 filter's codes and scales are dense buffers starting
  /// at a multiple of 16 bytes (the block-scaled kernel's TMA maps view
  /// them as [F][taps][bytes]); which of the two is not, when one is not.
  std::optional<std::string> packedFilterProblem;
};

/// A convolution as the kernel families see it.
struct ConvProblem {
  ConvGeometry geometry;
  FilterLayout filterLayout = FilterLayout::qrscf;
  /// The input's (and the filter's) element type.
  Type inputType;
  /// The NVFP4 block size of the input's quantization, however it is placed:
  /// tile loads quantize whole blocks, so configurations round tile_k up to
  /// it.
  std::optional<int64_t> quantBlockSize;
  /// The input is quantized in the tile loads (a `quantize` fused into the
  /// convolution), not by a prepass.
  bool quantizesInTile = false;
  /// A packed NVFP4 filter (filter_quant: real NVFP4).
  bool packedFilter = false;
  /// A history operand (frames before the input along depth), an input
  /// prologue (RMS norm, activation) in the loads.
  bool hasHistory = false, hasPrologue = false;
  /// The output is overwritten without a residual, 16-bit, and one dense
  /// [M][F] matrix of 16-byte rows: what a TMA store writes. Unknown
  /// (nullopt): not checked.
  std::optional<bool> outputTakesTmaStore;
  /// The memref form's operand layouts; nullopt on tensors.
  std::optional<OperandLayouts> layouts;
  /// The K loop will run depth slice by depth slice (k_order =
  /// qslice_outer: the fused Q-slice strategy, forced), so only kernels that
  /// take that order qualify.
  bool needsQSliceOrder = false;

  /// The NVFP4 block size of quantization in the tile loads, or none.
  std::optional<int64_t> tileQuantBlockSize() const {
    return quantizesInTile ? quantBlockSize : std::nullopt;
  }

  /// The facts of `conv` (tensor or memref form) that the op itself holds:
  /// everything but `layouts`, which the lowerings add from the grid's
  /// memrefs. The quantization is the fused one (`quantize`).
  static ConvProblem fromConv(ConvOp conv);
};

/// A family's heuristic choice for a convolution it can implement.
struct FamilyChoice {
  /// The configuration, naming the family's kernel; null when the family
  /// declines.
  IGemmConfigAttr config;
  /// Why it declines (another family is faster there), when it does.
  std::string declined;
  /// Remarks worth making about the choice (how the kernel reads the
  /// input, ...), without the "conv3d: " prefix.
  SmallVector<std::string> notes;

  static FamilyChoice decline(std::string why) {
    FamilyChoice choice;
    choice.declined = std::move(why);
    return choice;
  }
};

/// The cost model's estimate of one configuration.
struct KernelPrediction {
  double seconds = 0;
  /// Tiles / (multiprocessors x blocks per multiprocessor).
  double waves = 0;
  /// Bytes moved through DRAM.
  double bytes = 0;
};

/// One kernel a target can run. Families are stateless singletons.
class KernelFamily {
public:
  virtual ~KernelFamily();

  /// "sm90-im2col": remarks, explain, tests.
  virtual StringRef getName() const = 0;
  /// The MMA and the operand movement, one line ("wgmma + TMA im2col,
  /// warp-specialized").
  virtual StringRef getSummary() const = 0;
  /// The `kernel` value of its configurations (IGemmConfigAttr::getKernel).
  virtual Target getKernel() const = 0;
  /// The chip its code is generated for ("sm_90a"; "host" for cpu).
  virtual StringRef getChip() const = 0;
  /// The pass that lowers its grids ("conv3d-lower-to-sm90").
  virtual StringRef getLoweringPass() const = 0;

  /// Whether the family takes only a part of what the next family of its
  /// target takes, where its kernel is faster (its heuristic declines the
  /// rest): the sm90 halo mainloop. The tuner times its candidates beside
  /// the next family's.
  virtual bool specializes() const { return false; }
  /// Whether `config`, naming this family's kernel, is one of this family's
  /// configurations (the sm90 families differ in the mainloop).
  virtual bool runs(IGemmConfigAttr config) const {
    return config.getKernel() == getKernel();
  }
  /// Why this kernel cannot compute `problem`, or none.
  virtual std::optional<std::string>
  canImplement(const ConvProblem &problem) const = 0;
  /// The heuristic's configuration for `problem` (which the family can
  /// implement), or a decline with the reason.
  virtual FamilyChoice select(MLIRContext *context,
                              const ConvProblem &problem) const = 0;
  /// What a tuner times for `problem` besides the heuristic's
  /// configuration: variations of the tile shape, pipeline depth and
  /// schedule. A candidate may still be refused by the kernel's plan (shared
  /// memory): the tuner skips those.
  virtual void addCandidates(MLIRContext *context, const ConvProblem &problem,
                             SmallVectorImpl<IGemmConfigAttr> &out) const = 0;
  /// The cost model's estimate for `config` (estimateKernelCost for the
  /// family's kernel), or none where the model does not cover the kernel.
  virtual std::optional<KernelPrediction> predict(const ConvProblem &problem,
                                                  IGemmConfigAttr config) const;
  /// Why this kernel's plan cannot be built for `config` on `problem` (the
  /// facts the graph passes know; the lowering checks again on memrefs), or
  /// none. The default knows no plan limits.
  virtual std::optional<std::string> planProblem(const ConvProblem &problem,
                                                 IGemmConfigAttr config) const {
    return std::nullopt;
  }
};

/// The least predicted saving for which the cost model overrides the
/// heuristic: closer calls are within the model's error.
inline constexpr double kModelMargin = 0.05;
/// The cost model chooses only where the heuristic's configuration fills
/// less than this many waves of the machine: there occupancy (tiles, waves,
/// split-K), which the model prices well, decides. On full machines the
/// per-tile details it does not model (register pressure, the halo
/// mainloop's reuse) decide, and the rules, tuned there, measured better
/// (bench/RESULTS.md: the suite's video_r3d_64 ran 0.132 ms on the rules'
/// halo tile, 0.206 ms on the model's im2col pick).
inline constexpr double kModelMaxWaves = 1.0;

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

/// The families of `target`, in fallback order.
ArrayRef<const KernelFamily *> getKernelFamilies(Target target);

/// The family that runs a configuration written without a kernel on
/// `target` (the target's own kernel): cpu, sm80, sm90-im2col, sm100.
const KernelFamily &getDefaultKernelFamily(Target target);

/// The family that runs `config` when compiling for `target` (a config
/// without a kernel, `kernel = cpu`, is for the target's own), or null when
/// `target` has no such family.
const KernelFamily *getKernelFamilyFor(IGemmConfigAttr config, Target target);

/// The family named `name` ("sm90-halo"), or null.
const KernelFamily *lookupKernelFamily(StringRef name);

/// What a family said of a convolution.
struct FamilyVerdict {
  enum class Kind {
    /// It takes the convolution.
    Chosen,
    /// It could compute it; its heuristic leaves it to a later family.
    Declined,
    /// It cannot compute it.
    Refused,
    /// An earlier family took it.
    NotReached,
  };
  const KernelFamily *family = nullptr;
  Kind kind = Kind::NotReached;
  std::string reason;
};
StringRef stringifyVerdict(FamilyVerdict::Kind kind);

/// What selectKernel decided for a convolution.
struct KernelSelection {
  /// The family that runs it: the first taker, else the target's last
  /// family (whose lowering reports why it cannot: `refused` is then set).
  const KernelFamily *family = nullptr;
  bool refused = false;
  /// The heuristic configuration. It names the family's kernel, except for
  /// the cpu and sm80 kernels on their own targets, whose configurations
  /// are written without one (`kernel = cpu`: whatever target compiles
  /// them).
  IGemmConfigAttr config;
  /// Every family of the target, in order.
  SmallVector<FamilyVerdict> verdicts;
  /// The chosen family's remarks.
  SmallVector<std::string> notes;
  /// The chosen family's estimate (none where the model does not cover it).
  std::optional<KernelPrediction> prediction;
  /// Where the cost model overrode the heuristic: the heuristic's
  /// configuration and its estimate.
  IGemmConfigAttr heuristic;
  std::optional<KernelPrediction> heuristicPrediction;

  /// The reason the target's own kernel (the family that runs a
  /// configuration without a kernel) refused, when another chip's kernel
  /// runs the convolution: conv3d-select-config's fallback remark.
  std::optional<std::string> fallbackReason(Target target) const;
};

/// The choice of family and configuration for `problem` on `target`: the
/// first family that takes it, and its heuristic's configuration or, with
/// SelectionPolicy::CostModel, the cheapest predicted candidate.
KernelSelection
selectKernel(MLIRContext *context, const ConvProblem &problem, Target target,
             SelectionPolicy policy = SelectionPolicy::CostModel);

/// The heuristic configuration of `family` for `problem` on `target`,
/// whether or not it can implement it (for cost models that need a tile
/// shape), written as selectKernel writes it.
IGemmConfigAttr heuristicConfig(MLIRContext *context,
                                const KernelFamily &family,
                                const ConvProblem &problem, Target target);

/// What a tuner times for `problem` on `target`, besides the heuristic's
/// configuration (timed first, and not repeated here): the candidates of
/// every family up to and including the first that can implement it and
/// does not only specialize (the sm90 halo mainloop's join the im2col
/// kernel's), written as selectKernel writes them, without tile_k values
/// that split NVFP4 blocks.
SmallVector<IGemmConfigAttr> tuningCandidates(MLIRContext *context,
                                              const ConvProblem &problem,
                                              Target target);

/// `config` for the kernel `kernel` (cluster_m and the mainloop are sm90
/// options: reset for other kernels).
IGemmConfigAttr withKernel(IGemmConfigAttr config, Target kernel);

} // namespace mlir::conv3d

#endif // CONV3D_TARGET_KERNELFAMILY_H
