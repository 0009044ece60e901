//===- Families.h - the kernel families of today's targets -----*- C++ -*-===//
//
// One class per kernel (KernelFamily.h says what a family answers). Besides
// the common interface, each GPU family builds the plan its lowering
// consumes from a configuration: the lowerings call plan() and emit IR from
// the result, and nothing else decides a kernel's shape.
//
//   cpu                 loops (conv3d-lower-to-cpu)
//   sm80                mma.sync + cp.async, any sm_80+ GPU
//   sm90-im2col         wgmma + TMA im2col, warp-specialized (sm_90a)
//   sm90-halo           wgmma + tiled TMA loads of the input patch (sm_90a)
//   sm100               tcgen05.mma kind::f16 into TMEM + TMA im2col
//   sm100-block-scaled  tcgen05.mma kind::mxf4nvf4 on packed NVFP4 operands
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_FAMILIES_H
#define CONV3D_TARGET_FAMILIES_H

#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Target/SM100/SM100BlockScaledTma.h"
#include "conv3d/Target/SM100/SM100KernelPlan.h"
#include "conv3d/Target/SM80/SM80KernelPlan.h"
#include "conv3d/Target/SM90/SM90KernelPlan.h"

namespace mlir::conv3d {

class CpuFamily : public KernelFamily {
public:
  StringRef getName() const override { return "cpu"; }
  StringRef getSummary() const override {
    return "implicit-GEMM tiles as scalar loops on the host";
  }
  Target getKernel() const override { return Target::cpu; }
  StringRef getChip() const override { return "host"; }
  StringRef getLoweringPass() const override { return "conv3d-lower-to-cpu"; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override;
};

class SM80Family : public KernelFamily {
public:
  StringRef getName() const override { return "sm80"; }
  StringRef getSummary() const override {
    return "mma.sync + cp.async multistage ring, runs on any sm_80+ GPU";
  }
  Target getKernel() const override { return Target::sm80; }
  StringRef getChip() const override { return "sm_80"; }
  StringRef getLoweringPass() const override { return "conv3d-lower-to-sm80"; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override;

  /// The channels and filters per group of the grouped convolutions the
  /// kernel takes are multiples of this: each group's slices of the input,
  /// the filter and the output are whole 16-byte vectors (cp.async, vector
  /// stores).
  static constexpr int64_t kGroupedChannelMultiple = 8;
  /// Why the kernel cannot take `problem`'s groups (channels or filters per
  /// group not a multiple of kGroupedChannelMultiple), or none (dense, or
  /// groups it takes).
  static std::optional<std::string> groupedProblem(const ConvProblem &problem);

  /// The kernel plan of `config` for `problem` (its tile quantization and
  /// prologue), with the operands' `alignment`; or why it cannot be built.
  std::optional<std::string> plan(const ConvProblem &problem,
                                  IGemmConfigAttr config,
                                  const sm80::OperandAlignment &alignment,
                                  sm80::SM80KernelPlan &plan) const;
};

/// The sm90 kernel: warp-specialized wgmma, persistent, one plan
/// (SM90KernelPlan) for its two mainloops, each a family of its own.
class SM90Family : public KernelFamily {
public:
  Target getKernel() const override { return Target::sm90; }
  StringRef getChip() const override { return "sm_90a"; }
  StringRef getLoweringPass() const override { return "conv3d-lower-to-sm90"; }
  bool runs(IGemmConfigAttr config) const override {
    return config.getKernel() == Target::sm90 &&
           config.getMainloop() == getMainloop();
  }
  /// How its producer loads the activation.
  virtual Mainloop getMainloop() const = 0;
  /// plan() with what the graph passes know: 16-byte epilogue operands where
  /// F allows them, TMA stores where the output takes them, and split-K
  /// reduced in a cluster where the lowering would reduce it there.
  std::optional<std::string> planProblem(const ConvProblem &problem,
                                         IGemmConfigAttr config) const override;

  /// The kernel plan of `config` for `problem`, the output's and epilogue
  /// operands' facts given (`outputTakesTmaStore`: the TMA-store epilogue
  /// may store it; `epilogueAlignment`: elements;
  /// `reduceSplitsInCluster`: split-K partial sums are reduced across a
  /// cluster in the kernel, SM90KernelPlan::splitCluster); or why it cannot
  /// be built.
  std::optional<std::string>
  plan(const ConvProblem &problem, IGemmConfigAttr config,
       int64_t epilogueAlignment, bool outputTakesTmaStore,
       sm90::SM90KernelPlan &plan, bool reduceSplitsInCluster = false) const;
};

/// One TMA im2col load per filter tap and 64 channels.
class SM90Im2colFamily : public SM90Family {
public:
  StringRef getName() const override { return "sm90-im2col"; }
  StringRef getSummary() const override {
    return "wgmma + TMA im2col, warp-specialized, persistent";
  }
  Mainloop getMainloop() const override { return Mainloop::im2col; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override;
};

/// One tiled TMA load per depth tap and channel block of the input patch a
/// tile reads, which the MMAs of all R x S taps share; faster than im2col
/// for narrow N tiles (F <= 96), which im2col starves by reloading the
/// activation per tap, and for few input channels (C < 128).
class SM90HaloFamily : public SM90Family {
public:
  StringRef getName() const override { return "sm90-halo"; }
  StringRef getSummary() const override {
    return "wgmma + tiled TMA loads of the input patch, warp-specialized, "
           "TMA-stored output";
  }
  Mainloop getMainloop() const override { return Mainloop::halo; }
  bool specializes() const override { return true; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override;
};

class SM100Family : public KernelFamily {
public:
  StringRef getName() const override { return "sm100"; }
  StringRef getSummary() const override {
    return "tcgen05.mma kind::f16 into TMEM + TMA im2col, warp-specialized; "
           "generated and assembled, never run";
  }
  Target getKernel() const override { return Target::sm100; }
  StringRef getChip() const override { return "sm_100a"; }
  StringRef getLoweringPass() const override { return "conv3d-lower-to-sm100"; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override;

  /// The kernel plan of `config` for `problem`, or why it cannot be built
  /// (including the sm90 options the kernel does not take).
  std::optional<std::string> plan(const ConvProblem &problem,
                                  IGemmConfigAttr config,
                                  int64_t epilogueAlignment,
                                  sm100::SM100KernelPlan &plan) const;
};

/// Real NVFP4: a convolution with a packed filter and a quantized input is
/// this family's alone (every other family refuses packed filters), so it
/// comes first in sm100's list and runs() no configuration: its tile is
/// chosen by its lowering (select() is that choice) or named by a
/// configuration its lowering checks (configProblem).
class SM100BlockScaledFamily : public KernelFamily {
public:
  StringRef getName() const override { return "sm100-block-scaled"; }
  StringRef getSummary() const override {
    return "tcgen05.mma kind::mxf4nvf4 block16 on packed E2M1 codes and E4M3 "
           "scales; generated and assembled, never run";
  }
  Target getKernel() const override { return Target::sm100; }
  StringRef getChip() const override { return "sm_100a"; }
  StringRef getLoweringPass() const override {
    return "conv3d-lower-block-scaled-to-sm100";
  }
  bool runs(IGemmConfigAttr) const override { return false; }
  std::optional<std::string>
  canImplement(const ConvProblem &problem) const override;
  /// The tile its lowering chooses without a configuration: 128 x F
  /// (rounded up to 16, at most 256), the deepest ring up to 6 that fits.
  FamilyChoice select(MLIRContext *context,
                      const ConvProblem &problem) const override;
  void addCandidates(MLIRContext *context, const ConvProblem &problem,
                     SmallVectorImpl<IGemmConfigAttr> &out) const override {}

  /// The tile's defaults: F rounded up to 16, at most 256; the deepest ring
  /// up to 6 that fits a `tileN` tile (at least 2).
  static int64_t defaultTileN(const ConvGeometry &geometry);
  static int64_t defaultStages(const ConvGeometry &geometry, int64_t tileN);
  /// Why `config` cannot choose this kernel's tile, or none: it takes what
  /// sm100 configurations name (a 128 x tile_n tile, tile_k = 64, the four
  /// epilogue warps, `stages`), not cta_group::2, split-K, fused Q-slices
  /// or another kernel.
  std::optional<std::string> configProblem(IGemmConfigAttr config) const;
  /// The plan and TMA maps of a 128 x `tileN` tile with `stages` stages, or
  /// why they cannot be built.
  std::optional<std::string> plan(const ConvProblem &problem, int64_t tileN,
                                  int64_t stages, int64_t epilogueAlignment,
                                  sm100::nvfp4::BlockScaledPlan &plan,
                                  sm100::nvfp4::BlockScaledTmaPlan &tma) const;
};

/// The depthwise kernel (conv3d-lower-depthwise: a direct, memory-bound
/// loop nest, a thread per W block of a channel vector, on every GPU
/// target): why it cannot take `problem`, or none. It takes grouped
/// convolutions (depthwise ones, channel multipliers, several channels per
/// group) of static shape without history, prologue or NVFP4 operands. Not a
/// KernelFamily of the selection lists: the pipelines run it before the
/// implicit GEMM, on what takesDepthwiseKernel gives it.
std::optional<std::string> depthwiseKernelProblem(const ConvProblem &problem);

/// Whether the pipelines of `target` give `problem` to the depthwise kernel
/// (conv3d-lower-depthwise, before the implicit GEMM) rather than to one of
/// the target's kernel families: the one statement of the boundary between
/// the two, which conv3d-lower-depthwise, conv3d-select-config,
/// conv3d-qslice and explain ask. The depthwise kernel must take the
/// convolution (depthwiseKernelProblem) and
///  - on the cpu target, it has one channel per group (the CPU's implicit
///    GEMM tiles the others over a group grid dimension);
///  - on a GPU target, no family of the target implements it: the sm80
///    family's grouped implicit GEMM takes groups of multiples of
///    SM80Family::kGroupedChannelMultiple (8) channels and filters, so the
///    depthwise kernel keeps depthwise convolutions, channel multipliers
///    and groups of fewer (or unaligned) channels or filters.
bool takesDepthwiseKernel(const ConvProblem &problem, Target target);

const CpuFamily &getCpuFamily();
const SM80Family &getSM80Family();
const SM90Im2colFamily &getSM90Im2colFamily();
const SM90HaloFamily &getSM90HaloFamily();
const SM100Family &getSM100Family();
const SM100BlockScaledFamily &getSM100BlockScaledFamily();

} // namespace mlir::conv3d

#endif // CONV3D_TARGET_FAMILIES_H
