//===- Passes.h - conv3d graph and tile passes ------------------*- C++ -*-===//
//
// Each pass is a thin shell around the rewrite functions and pattern sets
// declared here, so that a host compiler can run them in its own pipeline
// and steer the decisions (which convolutions, which configuration,
// placement) through the hooks.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_PASSES_H
#define CONV3D_TRANSFORMS_PASSES_H

#include "conv3d/Geometry/GradientGeometry.h"
#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Transforms/PassEnums.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
} // namespace mlir

namespace mlir::conv3d {

#define GEN_PASS_DECL
#include "conv3d/Transforms/Passes.h.inc"

//===----------------------------------------------------------------------===//
// conv3d-fuse-quant
//===----------------------------------------------------------------------===//

/// The placement the cost model picks for a quantized convolution whose
/// config is `config` (or the target heuristic's, when null).
QuantPlacement chooseQuantPlacement(ConvOp conv, Target target);

/// Folds `conv3d.quantize` producers into convolutions where equivalent and
/// applies `placement` (Auto: the cost model for `target`). Convolutions
/// for which a forced prepass is impossible are reported through
/// `onImpossible`, if given.
void populateFuseQuantPatterns(
    RewritePatternSet &patterns, QuantPlacement placement, Target target,
    std::function<void(ConvOp, StringRef)> onImpossible = nullptr);

//===----------------------------------------------------------------------===//
// conv3d-place-prologue
//===----------------------------------------------------------------------===//

/// With `Prepass`, moves every prologue of a convolution on tensors into a
/// `conv3d.prologue` feeding it; with `Fused`, adds nothing.
void populatePlaceProloguePatterns(RewritePatternSet &patterns,
                                   ProloguePlacement placement);

//===----------------------------------------------------------------------===//
// conv3d-relayout-filter
//===----------------------------------------------------------------------===//

/// For `target` = sm90: convolutions on tensors with a QRSCF filter that the
/// sm90 kernel could otherwise take get their filter transposed to FQRSC,
/// and channel counts TMA cannot stride over are padded with zeros. For
/// every target: the depthwise kernel's convolutions with an FQRSC filter
/// get it transposed to QRSCF (vector loads of a tap's weights).
void populateFilterRelayoutPatterns(RewritePatternSet &patterns, Target target);

//===----------------------------------------------------------------------===//
// conv3d-fold-upsample
//===----------------------------------------------------------------------===//

/// Rewrites each `conv3d.conv` on tensors (geometry only: no epilogue,
/// prologue, history, quantization or config) of a nearest-neighbour
/// upsampling (a `linalg.generic` copy whose input map divides D, H or W by
/// 2) into a `conv3d.conv_backward_data` of the upsampling's source with
/// the folded filter.
void populateFoldUpsamplePatterns(RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// conv3d-lower-conv-gradients
//===----------------------------------------------------------------------===//

/// Rewrites `conv3d.conv_backward_data` (by stride phase) and
/// `conv3d.conv_backward_filter` on tensors into forward `conv3d.conv`s,
/// the weight gradients folded as `policy` says for `target`, a data
/// gradient's activation derivative applied as `dgradActivation` says.
void populateLowerConvGradientsPatterns(
    RewritePatternSet &patterns, Target target = Target::cpu,
    WgradFoldPolicy policy = WgradFoldPolicy::Auto,
    DgradActivationPolicy dgradActivation = DgradActivationPolicy::Auto);

/// The weight-gradient fold (GradientGeometry's WgradFold) that `policy`
/// says for a forward convolution of `forward` on `elementType`: the one it
/// names, or for Auto the one `target` runs faster: on a GPU target the one
/// whose forward form the target's cost model predicts cheaper (with the
/// gathers' memory traffic), the width fold on the cpu target and where the
/// model covers neither form.
WgradFold chooseWgradFold(MLIRContext *context, const ConvGeometry &forward,
                          Type elementType, Target target,
                          WgradFoldPolicy policy = WgradFoldPolicy::Auto);

//===----------------------------------------------------------------------===//
// conv3d-fuse-epilogue
//===----------------------------------------------------------------------===//

/// Folds bias, activation, residual and cast consumers into convolutions.
void populateFuseEpiloguePatterns(RewritePatternSet &patterns);

/// The activation a scalar elementwise body computes, if it is one the
/// epilogue supports (recognized by evaluating the body).
std::optional<Activation> matchActivationBody(Block &body);

/// The value a linalg body yields for block arguments `arguments` (the
/// first ones; the rest must not be used), evaluated in double precision
/// over arith and math ops; none if it uses anything else.
std::optional<double> evaluateScalarBody(Block &body,
                                         ArrayRef<double> arguments);

//===----------------------------------------------------------------------===//
// conv3d-qslice
//===----------------------------------------------------------------------===//

/// Rewrites a tensor convolution into depth slices with one-deep windows
/// accumulating in f32, followed by a conv3d.epilogue. Fails (with the
/// reason) when the decomposition does not apply.
FailureOr<Value> decomposeIntoSeparateQSlices(RewriterBase &rewriter,
                                              ConvOp conv);

/// Whether fusing the Q-slices (skipping halo-only slices per tile) can save
/// work: some depth slice has output depths that read only padding.
bool qsliceFusionSkipsWork(const ConvGeometry &geometry);

//===----------------------------------------------------------------------===//
// conv3d-implicit-gemm
//===----------------------------------------------------------------------===//

/// The discardable attribute that marks the grid loop of an implicit GEMM
/// and carries its tile configuration.
inline constexpr StringLiteral kIGemmConfigAttrName = "conv3d.igemm_config";

struct ImplicitGemmOptions {
  /// Which convolutions to rewrite (default: all on memrefs).
  std::function<bool(ConvOp)> shouldConvert;
  /// The configuration of a convolution that carries none (default: the
  /// heuristic of `target`).
  std::function<IGemmConfigAttr(ConvOp)> selectConfig;
  Target target = Target::cpu;
};

/// Rewrites one memref convolution into the tile-level grid loop. Returns
/// the grid loop.
FailureOr<scf::ForallOp> lowerConvToImplicitGemm(RewriterBase &rewriter,
                                                 ConvOp conv,
                                                 IGemmConfigAttr config);

void populateImplicitGemmPatterns(RewritePatternSet &patterns,
                                  const ImplicitGemmOptions &options);

//===----------------------------------------------------------------------===//
// Passes with a host compiler's hooks (ConvolutionHooks, Pipelines.h)
//===----------------------------------------------------------------------===//

/// conv3d-select-config asking `selectConfig` first for each convolution
/// without a config; its answer is checked as a forced config is.
std::unique_ptr<Pass>
createConv3dSelectConfig(const Conv3dSelectConfigOptions &options,
                         std::function<IGemmConfigAttr(ConvOp)> selectConfig);

/// conv3d-implicit-gemm with the hooks of `options`.
std::unique_ptr<Pass> createConv3dImplicitGemm(ImplicitGemmOptions options);

#define GEN_PASS_REGISTRATION
#include "conv3d/Transforms/Passes.h.inc"

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_PASSES_H
