//===- PipelineHooksTest.cpp - a host's hooks in the pipeline builders ----===//
//
// A host compiler builds conv3d's pipelines on its own pass manager and
// decides, per convolution, which linalg convolutions conv3d takes and
// which tile configuration each gets (ConvolutionHooks).
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Registration.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

// Two imported convolutions: @small (F = 8) and @wide (F = 64), each a
// linalg.conv_3d_ndhwc_dhwcf whose zero fill folds into `overwrite`.
constexpr const char *kModule = R"mlir(
func.func @small(%x: tensor<1x6x8x8x16xf32>, %w: tensor<3x3x3x16x8xf32>)
    -> tensor<1x4x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6x8xf32>)
      -> tensor<1x4x6x6x8xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x, %w : tensor<1x6x8x8x16xf32>, tensor<3x3x3x16x8xf32>)
      outs(%init : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return %y : tensor<1x4x6x6x8xf32>
}
func.func @wide(%x: tensor<1x6x8x8x16xf32>, %w: tensor<3x3x3x16x64xf32>)
    -> tensor<1x4x6x6x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6x64xf32>)
      -> tensor<1x4x6x6x64xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x, %w : tensor<1x6x8x8x16xf32>, tensor<3x3x3x16x64xf32>)
      outs(%init : tensor<1x4x6x6x64xf32>) -> tensor<1x4x6x6x64xf32>
  return %y : tensor<1x4x6x6x64xf32>
}
)mlir";

class PipelineHooksTest : public ::testing::Test {
protected:
  PipelineHooksTest() {
    registerConv3dDialects(registry);
    registerConv3dPipelineDependencies(registry);
    registry.insert<arith::ArithDialect, func::FuncDialect,
                    linalg::LinalgDialect, tensor::TensorDialect>();
    registerConv3dPasses();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModule, &context);
  }

  /// The diagnostics of the import and graph pipelines run with `options`
  /// and a hook that gives every convolution `config`, which the pipelines
  /// must refuse.
  std::string refusedHookConfig(StringRef config,
                                const PipelineOptions &options) {
    std::string diagnostics;
    EXPECT_TRUE(module);
    if (!module)
      return diagnostics;
    ConvolutionHooks hooks;
    hooks.selectConfig = [&](ConvOp conv) {
      std::string error;
      return parseIGemmConfig(conv.getContext(), config, error);
    };
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    PassManager pm(&context);
    buildConv3dImportPipeline(pm, hooks);
    buildConv3dGraphPipeline(pm, options, hooks);
    EXPECT_TRUE(failed(pm.run(*module)));
    return diagnostics;
  }

  /// The number of output channels of a convolution (either form).
  static int64_t filtersOf(Operation *op) {
    auto type = cast<ShapedType>(op->getResult(0).getType());
    return type.getShape().back();
  }

  template <typename OpTy> int count() {
    int n = 0;
    module->walk([&](OpTy) { ++n; });
    return n;
  }

  DialectRegistry registry;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(PipelineHooksTest, ShouldConvertLeavesRefusedConvsToTheHost) {
  ASSERT_TRUE(module);
  int asked = 0;
  ConvolutionHooks hooks;
  hooks.shouldConvert = [&](Operation *op) {
    ++asked;
    EXPECT_TRUE(isa<linalg::Conv3DNdhwcDhwcfOp>(op));
    return filtersOf(op) >= 64;
  };
  PassManager pm(&context);
  buildConv3dImportPipeline(pm, hooks);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_GE(asked, 2);
  EXPECT_EQ(count<ConvOp>(), 1);
  EXPECT_EQ(count<linalg::Conv3DNdhwcDhwcfOp>(), 1);
  module->walk([&](ConvOp conv) { EXPECT_EQ(filtersOf(conv), 64); });
}

TEST_F(PipelineHooksTest, WithoutHooksEveryConvIsImported) {
  ASSERT_TRUE(module);
  PassManager pm(&context);
  buildConv3dImportPipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(count<ConvOp>(), 2);
  EXPECT_EQ(count<linalg::Conv3DNdhwcDhwcfOp>(), 0);
}

TEST_F(PipelineHooksTest, SelectConfigChoosesPerConvolution) {
  ASSERT_TRUE(module);
  ConvolutionHooks hooks;
  // The host configures the wide convolution and leaves the small one to
  // the heuristic (a null attribute).
  hooks.selectConfig = [&](ConvOp conv) -> IGemmConfigAttr {
    if (filtersOf(conv) != 64)
      return {};
    std::string error;
    IGemmConfigAttr config = parseIGemmConfig(
        conv.getContext(), "tile_m=16,tile_n=32,tile_k=48", error);
    EXPECT_TRUE(config) << error;
    return config;
  };
  PipelineOptions options;
  PassManager pm(&context);
  buildConv3dImportPipeline(pm, hooks);
  buildConv3dGraphPipeline(pm, options, hooks);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  int seen = 0;
  module->walk([&](ConvOp conv) {
    ++seen;
    std::optional<IGemmConfigAttr> config = conv.getConfig();
    ASSERT_TRUE(config.has_value());
    if (filtersOf(conv) == 64) {
      EXPECT_EQ(config->getTileM(), 16);
      EXPECT_EQ(config->getTileN(), 32);
      EXPECT_EQ(config->getTileK(), 48);
    } else {
      EXPECT_NE(config->getTileM(), 16); // the CPU heuristic's
    }
  });
  EXPECT_EQ(seen, 2);
}

TEST_F(PipelineHooksTest, HookConfigReachesTheGridLoops) {
  ASSERT_TRUE(module);
  ConvolutionHooks hooks;
  hooks.selectConfig = [&](ConvOp conv) {
    std::string error;
    return parseIGemmConfig(conv.getContext(), "tile_m=8,tile_n=8,tile_k=16",
                            error);
  };
  PipelineOptions options;
  PassManager pm(&context);
  buildConv3dImportPipeline(pm, hooks);
  buildConv3dCpuLoweringPipeline(pm, options, hooks);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  // Each function's grid loop carries the hook's tiles (the CPU heuristic
  // takes tile_n = F here: 8 and 64).
  int grids = 0;
  module->walk([&](Operation *op) {
    auto config = op->getAttrOfType<IGemmConfigAttr>("conv3d.igemm_config");
    if (!config)
      return;
    ++grids;
    EXPECT_EQ(config.getTileM(), 8);
    EXPECT_EQ(config.getTileN(), 8);
    EXPECT_EQ(config.getTileK(), 16);
  });
  EXPECT_EQ(grids, 2);
}

TEST_F(PipelineHooksTest, TheCpuPipelineWithHooksEndsInTheLlvmDialect) {
  ASSERT_TRUE(module);
  ConvolutionHooks hooks;
  hooks.shouldConvert = [](Operation *op) { return filtersOf(op) == 64; };
  hooks.selectConfig = [&](ConvOp conv) {
    std::string error;
    return parseIGemmConfig(conv.getContext(), "tile_m=8,tile_n=8,tile_k=16",
                            error);
  };
  PipelineOptions options;
  PassManager pm(&context);
  buildConv3dImportPipeline(pm, hooks);
  buildConv3dCpuPipeline(pm, options, hooks);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  // The convolution left to the host (F = 8) is lowered by the host part of
  // the pipeline (linalg to loops) like any other linalg op.
  module->walk([&](Operation *op) {
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    EXPECT_TRUE(ns == "llvm" || ns == "builtin")
        << op->getName().getStringRef().str();
  });
}

TEST_F(PipelineHooksTest, AConfigThatDoesNotFitIsAnErrorOnTheConv) {
  // split_k needs the taps-outer K order: refused as a forced config is.
  std::string diagnostics =
      refusedHookConfig("tile_m=8,tile_n=8,tile_k=16,split_k=2,"
                        "k_order=qslice_outer",
                        PipelineOptions());
  EXPECT_NE(diagnostics.find("cannot use the hook's tile configuration"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("split_k > 1 needs k_order = taps_outer"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PipelineHooksTest, AnSm90ConfigOnAConvItsKernelCannotTakeIsRefused) {
  // f32 operands: the sm90 kernel takes bf16/f16 only.
  PipelineOptions options;
  options.target = Target::sm90;
  std::string diagnostics = refusedHookConfig(
      "tile_m=128,tile_n=64,tile_k=64,warps_m=8,warps_n=1,kernel=sm90",
      options);
  EXPECT_NE(diagnostics.find("the sm90 kernel cannot take this convolution"),
            std::string::npos)
      << diagnostics;
}

} // namespace
