//===- PipelineOptionsTest.cpp - typed pipeline options -------------------===//
//
// The pipelines' options are parsed once into typed fields (enums with one
// string table each); describe() and fingerprint() (cache keys) spell them
// as the options are written, and every spelling parses back.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Pipelines/Pipelines.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;

namespace {

TEST(PipelineOptionsTest, ParsedOnceIntoEnums) {
  llvm::Expected<PipelineOptions> options = parsePipelineOptions(
      "target=sm90 qslice=separate quant-placement=prepass "
      "prologue-placement=fused gpu-binary-format=isa lowering=reference");
  ASSERT_TRUE(static_cast<bool>(options)) << toString(options.takeError());
  EXPECT_EQ(options->target, Target::sm90);
  EXPECT_EQ(options->qslice, QSliceStrategy::Separate);
  EXPECT_EQ(options->quantPlacement, QuantPlacement::Prepass);
  EXPECT_EQ(options->prologuePlacement, ProloguePlacement::Fused);
  EXPECT_EQ(options->gpuBinaryFormat, GpuBinaryFormat::Isa);
  EXPECT_EQ(options->lowering, CpuLowering::Reference);
  EXPECT_EQ(options->nvfp4Mode, NVFP4Mode::Fake);
}

TEST(PipelineOptionsTest, DescribeKeepsTheSpelling) {
  PipelineOptions options;
  EXPECT_EQ(options.describe(),
            "target=cpu lowering=igemm config=auto qslice=auto quant=auto "
            "nvfp4=fake prologue=prepass wgrad-fold=auto");
  options.target = Target::sm100;
  options.qslice = QSliceStrategy::Fused;
  options.quantPlacement = QuantPlacement::Tile;
  options.nvfp4Mode = NVFP4Mode::Real;
  options.prologuePlacement = ProloguePlacement::Fused;
  options.wgradFold = WgradFoldPolicy::HeightWidth;
  options.gpuBinaryFormat = GpuBinaryFormat::Isa;
  EXPECT_EQ(options.describe(),
            "target=sm100 lowering=igemm config=auto qslice=fused quant=tile "
            "nvfp4=real prologue=fused wgrad-fold=height-width");
  EXPECT_NE(options.fingerprint().find("gpu-binary-format=isa"),
            std::string::npos);
}

TEST(PipelineOptionsTest, EverySpellingParsesBack) {
  for (unsigned i = 0; i <= getMaxEnumValForWgradFoldPolicy(); ++i) {
    WgradFoldPolicy value = *symbolizeWgradFoldPolicy(i);
    llvm::Expected<PipelineOptions> options = parsePipelineOptions(
        ("wgrad-fold=" + stringifyWgradFoldPolicy(value)).str());
    ASSERT_TRUE(static_cast<bool>(options)) << toString(options.takeError());
    EXPECT_EQ(options->wgradFold, value);
  }
  for (unsigned i = 0; i <= getMaxEnumValForQSliceStrategy(); ++i) {
    QSliceStrategy value = *symbolizeQSliceStrategy(i);
    llvm::Expected<PipelineOptions> options = parsePipelineOptions(
        ("qslice=" + stringifyQSliceStrategy(value)).str());
    ASSERT_TRUE(static_cast<bool>(options)) << toString(options.takeError());
    EXPECT_EQ(options->qslice, value);
  }
  for (unsigned i = 0; i <= getMaxEnumValForQuantPlacement(); ++i) {
    QuantPlacement value = *symbolizeQuantPlacement(i);
    EXPECT_EQ(symbolizeQuantPlacement(stringifyQuantPlacement(value)), value);
  }
  for (GpuBinaryFormat format : {GpuBinaryFormat::Bin, GpuBinaryFormat::Isa})
    EXPECT_EQ(symbolizeGpuBinaryFormat(stringifyGpuBinaryFormat(format)),
              format);
  for (CpuLowering lowering :
       {CpuLowering::Reference, CpuLowering::ImplicitGemm})
    EXPECT_EQ(symbolizeCpuLowering(stringifyCpuLowering(lowering)), lowering);
}

TEST(PipelineOptionsTest, BadValuesNameTheOption) {
  for (auto [text, message] :
       {std::pair{"qslice=halves",
                  "qslice=halves: expected one of auto, none, fused, separate"},
        std::pair{"prologue-placement=both",
                  "prologue-placement=both: expected one of prepass, fused"},
        std::pair{"nvfp4-mode=genuine",
                  "nvfp4-mode=genuine: expected one of fake, real"}}) {
    llvm::Expected<PipelineOptions> options = parsePipelineOptions(text);
    ASSERT_FALSE(static_cast<bool>(options)) << text;
    EXPECT_EQ(toString(options.takeError()), message);
  }
}

} // namespace
