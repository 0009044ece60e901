//===- KernelFamilyTest.cpp - the target layer's families and registry ----===//
//
// Each target lists its families in fallback order; selectKernel keeps the
// first that can implement a convolution and does not decline, and every
// family's verdict with its reason; a fallback to another chip's kernel
// names the target's own kernel's refusal; configurations of the cpu and
// sm80 kernels are written without a kernel on their own targets; the
// families answer canImplement from the facts given (unknown facts are not
// checked) and predict nothing yet.
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/Target/CostModel.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

struct KernelFamilyTest : ::testing::Test {
  KernelFamilyTest() { context.getOrLoadDialect<Conv3dDialect>(); }

  /// A bf16 convolution with an FQRSC filter of `filters` x `channels`,
  /// 3x3x3 over 8x16x56x56 with padding 1.
  ConvProblem problem(int64_t channels, int64_t filters) {
    ConvProblem p;
    p.geometry = ConvGeometry::fromShapes(
        {8, 16, 56, 56, channels}, {3, 3, 3, channels, filters},
        FilterLayout::qrscf, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1});
    p.filterLayout = FilterLayout::fqrsc;
    p.inputType = BFloat16Type::get(&context);
    return p;
  }

  static std::vector<std::string> names(Target target) {
    std::vector<std::string> result;
    for (const KernelFamily *family : getKernelFamilies(target))
      result.push_back(family->getName().str());
    return result;
  }

  MLIRContext context;
};

TEST_F(KernelFamilyTest, FallbackOrderPerTarget) {
  EXPECT_EQ(names(Target::cpu), std::vector<std::string>{"cpu"});
  EXPECT_EQ(names(Target::sm80), std::vector<std::string>{"sm80"});
  EXPECT_EQ(names(Target::sm90),
            (std::vector<std::string>{"sm90-halo", "sm90-im2col", "sm80"}));
  EXPECT_EQ(names(Target::sm100),
            (std::vector<std::string>{"sm100-block-scaled", "sm100", "sm80"}));
  EXPECT_EQ(getDefaultKernelFamily(Target::sm90).getName(), "sm90-im2col");
  EXPECT_EQ(lookupKernelFamily("sm90-halo"), &getSM90HaloFamily());
  EXPECT_EQ(lookupKernelFamily("sm70"), nullptr);
  for (Target target : {Target::cpu, Target::sm80, Target::sm90, Target::sm100})
    for (const KernelFamily *family : getKernelFamilies(target)) {
      EXPECT_FALSE(family->getChip().empty()) << family->getName().str();
      EXPECT_TRUE(family->getLoweringPass().starts_with("conv3d-lower-"));
    }
}

TEST_F(KernelFamilyTest, ConfigurationsFindTheirFamily) {
  auto config = [&](Target kernel, Mainloop mainloop) {
    return IGemmConfigAttr::get(&context, 128, 64, 64, 4, 8, 1,
                                KOrder::taps_outer, 1, kernel,
                                KernelSchedule::cooperative, 1, mainloop);
  };
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::sm90, Mainloop::halo), Target::sm90),
      &getSM90HaloFamily());
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::sm90, Mainloop::im2col), Target::sm90),
      &getSM90Im2colFamily());
  // Without a kernel: the target's own.
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::cpu, Mainloop::halo), Target::sm90),
      &getSM90HaloFamily());
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::cpu, Mainloop::im2col), Target::sm100),
      &getSM100Family());
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::sm80, Mainloop::im2col), Target::sm90),
      &getSM80Family());
  // Another target's kernel is none of this target's families.
  EXPECT_EQ(
      getKernelFamilyFor(config(Target::sm100, Mainloop::im2col), Target::sm90),
      nullptr);
}

TEST_F(KernelFamilyTest, SelectionKeepsEveryVerdict) {
  // F = 64, a 3x3 window, 1568 tiles: the halo mainloop.
  // The rules' choices (the cost model's are tested below).
  KernelSelection halo = selectKernel(&context, problem(64, 64), Target::sm90,
                                      SelectionPolicy::Heuristic);
  EXPECT_EQ(halo.family, &getSM90HaloFamily());
  EXPECT_EQ(halo.config.getMainloop(), Mainloop::halo);
  ASSERT_EQ(halo.verdicts.size(), 3u);
  EXPECT_EQ(halo.verdicts[0].kind, FamilyVerdict::Kind::Chosen);
  EXPECT_EQ(halo.verdicts[1].kind, FamilyVerdict::Kind::NotReached);
  EXPECT_FALSE(halo.fallbackReason(Target::sm90));
  ASSERT_TRUE(halo.prediction);
  EXPECT_GT(halo.prediction->seconds, 0);
  EXPECT_FALSE(halo.heuristic) << "the rules chose";

  // F = 384: the halo mainloop declines, the im2col kernel takes it.
  KernelSelection wide = selectKernel(&context, problem(384, 384), Target::sm90,
                                      SelectionPolicy::Heuristic);
  EXPECT_EQ(wide.family, &getSM90Im2colFamily());
  EXPECT_EQ(wide.verdicts[0].kind, FamilyVerdict::Kind::Declined);
  EXPECT_NE(wide.verdicts[0].reason.find("F = 384"), std::string::npos);
  EXPECT_EQ(wide.config.getKernel(), Target::sm90);

  // C = 16: both sm90 mainloops refuse; the sm80 kernel runs it, and the
  // fallback names the im2col kernel's reason.
  KernelSelection narrow = selectKernel(&context, problem(16, 64), Target::sm90,
                                        SelectionPolicy::Heuristic);
  EXPECT_EQ(narrow.family, &getSM80Family());
  EXPECT_EQ(narrow.verdicts[0].kind, FamilyVerdict::Kind::Refused);
  EXPECT_EQ(narrow.verdicts[1].kind, FamilyVerdict::Kind::Refused);
  EXPECT_EQ(narrow.config.getKernel(), Target::sm80);
  std::optional<std::string> why = narrow.fallbackReason(Target::sm90);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "C = 16 is under one 64-channel TMA box; the sm80 kernel "
                  "reads narrow channels without padding them");
  EXPECT_FALSE(narrow.refused);
}

TEST_F(KernelFamilyTest, OwnTargetConfigsNameNoKernel) {
  // The sm80 kernel's configuration serves whatever target compiles it: on
  // sm80 it names no kernel, as a fallback of sm90 it names sm80.
  ConvProblem p = problem(64, 64);
  EXPECT_EQ(selectKernel(&context, p, Target::sm80).config.getKernel(),
            Target::cpu);
  EXPECT_EQ(
      heuristicConfig(&context, getSM80Family(), p, Target::sm90).getKernel(),
      Target::sm80);
  EXPECT_EQ(selectKernel(&context, p, Target::cpu).config.getKernel(),
            Target::cpu);
}

TEST_F(KernelFamilyTest, UnknownFactsAreNotChecked) {
  // The halo mainloop needs a TMA-storable output: refused when the fact
  // is known to be false, not when it is unknown (the tuner's problems).
  ConvProblem p = problem(64, 64);
  EXPECT_FALSE(getSM90HaloFamily().canImplement(p));
  p.outputTakesTmaStore = false;
  EXPECT_TRUE(getSM90HaloFamily().canImplement(p));
  // Memref layouts: unaligned operands refuse the TMA kernels.
  ConvProblem memref = problem(64, 64);
  OperandLayouts layouts;
  layouts.inputAlignment = 4;
  memref.layouts = layouts;
  std::optional<std::string> why = getSM90Im2colFamily().canImplement(memref);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("multiples of 16 bytes"), std::string::npos);
  EXPECT_FALSE(getSM80Family().canImplement(memref));
}

TEST_F(KernelFamilyTest, PackedFiltersAreTheBlockScaledKernels) {
  ConvProblem p = problem(256, 256);
  p.packedFilter = true;
  p.quantBlockSize = 16;
  p.quantizesInTile = true;
  KernelSelection selection = selectKernel(&context, p, Target::sm100);
  EXPECT_EQ(selection.family, &getSM100BlockScaledFamily());
  EXPECT_EQ(selection.config.getTileM(), 128);
  // Every other family refuses a packed filter.
  for (const KernelFamily *family :
       {static_cast<const KernelFamily *>(&getSM100Family()),
        static_cast<const KernelFamily *>(&getSM80Family()),
        static_cast<const KernelFamily *>(&getCpuFamily())})
    EXPECT_TRUE(family->canImplement(p)) << family->getName().str();
  // Nothing packed: the block-scaled kernel refuses, naming why.
  std::optional<std::string> why =
      getSM100BlockScaledFamily().canImplement(problem(256, 256));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("filter is not packed"), std::string::npos);
}

TEST_F(KernelFamilyTest, NoFamilyTakesIt) {
  // A packed filter on sm90: every family refuses; the last one is kept
  // (its lowering reports why) and the selection says so.
  ConvProblem p = problem(256, 256);
  p.packedFilter = true;
  KernelSelection selection = selectKernel(&context, p, Target::sm90);
  EXPECT_TRUE(selection.refused);
  EXPECT_EQ(selection.family, &getSM80Family());
  for (const FamilyVerdict &verdict : selection.verdicts)
    EXPECT_EQ(verdict.kind, FamilyVerdict::Kind::Refused);
}

TEST_F(KernelFamilyTest, TileIndicesFit31Bits) {
  ConvGeometry g = problem(64, 64).geometry;
  EXPECT_FALSE(tileIndexProblem(g, 128, 1000));
  EXPECT_TRUE(tileIndexProblem(g, 128, int64_t(1) << 31));
}

} // namespace

TEST_F(KernelFamilyTest, CostModelPicksSplitKForLateLayers) {
  // r3d_18's last layers: M = 196 rows, K = 13824. The rules leave 2 output
  // tiles for 132 multiprocessors; the model takes split-K, predicted
  // faster, and keeps the rules' configuration and estimate beside it.
  ConvProblem late;
  late.geometry = ConvGeometry::fromShapes(
      {2, 2, 7, 7, 512}, {3, 3, 3, 512, 512}, FilterLayout::qrscf, {1, 1, 1},
      {1, 1, 1}, {1, 1, 1, 1, 1, 1});
  late.filterLayout = FilterLayout::fqrsc;
  late.inputType = BFloat16Type::get(&context);
  KernelSelection rules =
      selectKernel(&context, late, Target::sm90, SelectionPolicy::Heuristic);
  KernelSelection model = selectKernel(&context, late, Target::sm90);
  EXPECT_EQ(rules.config.getSplitK(), 1);
  EXPECT_GT(model.config.getSplitK(), 1);
  EXPECT_EQ(model.family, &getSM90Im2colFamily());
  EXPECT_EQ(model.heuristic, rules.config);
  ASSERT_TRUE(model.prediction && model.heuristicPrediction);
  EXPECT_LT(model.prediction->seconds,
            (1 - kModelMargin) * model.heuristicPrediction->seconds);
  // The pick's plan builds; every target without timings keeps its rules.
  EXPECT_FALSE(model.family->planProblem(late, model.config));
  for (Target target : {Target::cpu, Target::sm80, Target::sm100})
    EXPECT_EQ(selectKernel(&context, late, target).config,
              selectKernel(&context, late, target, SelectionPolicy::Heuristic)
                  .config);
}

TEST_F(KernelFamilyTest, CostModelCountsTilesPerDepthSlice) {
  // The sm90 kernel tiles each output depth slice on its own where it loads
  // the input per depth slice: 128 images x 3 slices of 9 rows are 384
  // tiles of 128 rows, not the volume's 27 (the model had priced the
  // weight gradient's old forward form 14x too fast).
  ConvGeometry g = ConvGeometry::fromShapes(
      {128, 21, 60, 3, 112}, {21, 60, 1, 112, 512}, FilterLayout::qrscf,
      {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 0, 0});
  std::string why;
  ASSERT_EQ(g.chooseTmaIm2colForm(2, why), TmaIm2colForm::depthSlices);
  auto config = [&](Target kernel) {
    return IGemmConfigAttr::get(
        &context, 128, 256, 64, 3, 8, 1, KOrder::taps_outer, 1, kernel,
        KernelSchedule::cooperative, 1, Mainloop::im2col);
  };
  std::optional<CostEstimate> sm90 =
      estimateKernelCost(g, config(Target::sm90), Target::sm90, 132);
  ASSERT_TRUE(sm90);
  EXPECT_DOUBLE_EQ(sm90->waves, 384.0 * 2 / 132);
  // sm100 takes no per-depth-slice loads: its tiles run over all of M.
  std::optional<CostEstimate> sm100 =
      estimateKernelCost(g, config(Target::sm100), Target::sm100, 132);
  ASSERT_TRUE(sm100);
  EXPECT_DOUBLE_EQ(sm100->waves, 27.0 * 2 / 132);
}

TEST_F(KernelFamilyTest, PlanProblemRefusesHaloWithoutTmaStores) {
  ConvProblem p = problem(64, 64);
  IGemmConfigAttr halo =
      selectKernel(&context, p, Target::sm90, SelectionPolicy::Heuristic)
          .config;
  ASSERT_EQ(halo.getMainloop(), Mainloop::halo);
  EXPECT_FALSE(getSM90HaloFamily().planProblem(p, halo));
  p.outputTakesTmaStore = false;
  std::optional<std::string> why = getSM90HaloFamily().planProblem(p, halo);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("TMA"), std::string::npos);
}

namespace {

TEST_F(KernelFamilyTest, GroupedConvolutionsAreTheGroupedGemmsOrDepthwise) {
  // The TMA families refuse groups > 1 with the reason; the sm80 family
  // takes groups whose channels and filters are multiples of 8 (its grouped
  // implicit GEMM) and names what the others lack; takesDepthwiseKernel
  // gives the depthwise kernel the rest on the GPU targets, and the
  // depthwise ones on the cpu target (whose family takes every group).
  for (int64_t cg : {1, 2, 4, 8, 16, 24})
    for (int64_t fg : {1, 4, 8, 16, 32}) {
      SCOPED_TRACE("channels per group " + std::to_string(cg) +
                   ", filters per group " + std::to_string(fg));
      int64_t groups = 48 / cg;
      ConvProblem p = problem(48, groups * fg);
      p.geometry.groups = groups;
      ASSERT_FALSE(p.geometry.validate()) << *p.geometry.validate();
      bool gemm = cg % 8 == 0 && fg % 8 == 0;
      std::optional<std::string> sm80 = getSM80Family().canImplement(p);
      EXPECT_EQ(!sm80, gemm) << sm80.value_or("");
      if (sm80)
        EXPECT_NE(sm80->find(cg % 8 ? " input channels per group, and the "
                                      "sm80 kernel takes groups of a "
                                      "multiple of 8 input channels"
                                    : " filters per group, and the sm80 "
                                      "kernel takes groups of a multiple of "
                                      "8 filters"),
                  std::string::npos)
            << *sm80;
      for (Target target : {Target::sm90, Target::sm100})
        for (const KernelFamily *family : getKernelFamilies(target)) {
          if (family == &getSM80Family() ||
              family == &getSM100BlockScaledFamily())
            continue; // (the block-scaled one refuses unpacked filters)
          std::optional<std::string> why = family->canImplement(p);
          ASSERT_TRUE(why) << family->getName().str();
          EXPECT_NE(why->find("it is a grouped convolution (groups = " +
                              std::to_string(groups)),
                    std::string::npos)
              << *why;
        }
      EXPECT_FALSE(getCpuFamily().canImplement(p));
      EXPECT_FALSE(depthwiseKernelProblem(p));
      EXPECT_EQ(takesDepthwiseKernel(p, Target::cpu), cg == 1);
      for (Target target : {Target::sm80, Target::sm90, Target::sm100}) {
        EXPECT_EQ(takesDepthwiseKernel(p, target), !gemm);
        KernelSelection selection =
            selectKernel(&context, p, target, SelectionPolicy::Heuristic);
        EXPECT_EQ(selection.refused, !gemm);
        if (!gemm)
          continue;
        // One group's N tile: its filters (multiples of 8 up to 64).
        EXPECT_EQ(selection.family, &getSM80Family());
        EXPECT_EQ(selection.config.getTileN(), fg);
      }
      if (!gemm)
        continue;
      // The tuner's N tiles span one group's filters too.
      SmallVector<IGemmConfigAttr> candidates;
      getSM80Family().addCandidates(&context, p, candidates);
      ASSERT_FALSE(candidates.empty());
      for (IGemmConfigAttr config : candidates)
        EXPECT_EQ(config.getTileN(), fg);
    }
}

TEST_F(KernelFamilyTest, GroupedGemmMessages) {
  ConvProblem p = problem(256, 256);
  p.geometry.groups = 64;
  EXPECT_EQ(getSM80Family().canImplement(p),
            "it is a grouped convolution (groups = 64) of 4 input channels "
            "per group, and the sm80 kernel takes groups of a multiple of 8 "
            "input channels (16-byte vectors of each group's slice; the "
            "depthwise kernel takes the others)");
  // What the depthwise kernel cannot take (a history operand) and the sm80
  // kernel can, the grouped GEMM takes; neither: the sm80 kernel's lowering
  // reports it.
  p.geometry.groups = 16;
  p.hasHistory = true;
  EXPECT_FALSE(takesDepthwiseKernel(p, Target::sm90));
  EXPECT_FALSE(selectKernel(&context, p, Target::sm90).refused);
  p.geometry.groups = 64;
  EXPECT_FALSE(takesDepthwiseKernel(p, Target::sm90));
  EXPECT_TRUE(selectKernel(&context, p, Target::sm90).refused);
}

TEST_F(KernelFamilyTest, DepthwiseKernelRefusals) {
  ConvProblem p = problem(64, 64);
  EXPECT_EQ(depthwiseKernelProblem(p),
            "the depthwise kernel takes grouped convolutions (groups > 1); "
            "dense ones are GEMMs");
  p.geometry.groups = 64;
  EXPECT_FALSE(depthwiseKernelProblem(p));
  ConvProblem history = p;
  history.hasHistory = true;
  EXPECT_EQ(depthwiseKernelProblem(history),
            "the depthwise kernel does not read a history operand");
  ConvProblem prologue = p;
  prologue.hasPrologue = true;
  EXPECT_NE(depthwiseKernelProblem(prologue)->find("input prologue"),
            std::string::npos);
  ConvProblem quantized = p;
  quantized.quantBlockSize = 16;
  EXPECT_EQ(depthwiseKernelProblem(quantized),
            "the depthwise kernel does not take NVFP4 operands");
  ConvProblem dynamic = p;
  dynamic.geometry.batch = ConvGeometry::kDynamic;
  EXPECT_EQ(depthwiseKernelProblem(dynamic),
            "the depthwise kernel needs static shapes");
}

} // namespace

TEST_F(KernelFamilyTest, FewTileConvolutionsGetWideSplitK) {
  // A weight gradient's forward form (a 7x7 stem's, height-width fold): one
  // 64 x 16 output tile, K = 16 taps of 100352 channels. Splits past 16 are
  // candidates while the blocks stay within one wave; the model takes one.
  ConvProblem stem;
  stem.geometry = ConvGeometry::fromShapes(
      {1, 16, 1, 98, 100352}, {16, 1, 1, 100352, 64}, FilterLayout::qrscf,
      {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0});
  stem.filterLayout = FilterLayout::fqrsc;
  stem.inputType = BFloat16Type::get(&context);
  SmallVector<IGemmConfigAttr> candidates;
  getSM90Im2colFamily().addCandidates(&context, stem, candidates);
  int64_t widest = 1;
  for (IGemmConfigAttr config : candidates) {
    widest = std::max(widest, config.getSplitK());
    int64_t tiles = ceilDiv(stem.geometry.gemmM(), config.getTileM()) *
                    ceilDiv(stem.geometry.gemmN(), config.getTileN());
    if (config.getSplitK() > 16)
      EXPECT_LE(tiles * config.getSplitK(), 132);
  }
  EXPECT_EQ(widest, 128);
  KernelSelection model = selectKernel(&context, stem, Target::sm90);
  EXPECT_GT(model.config.getSplitK(), 16);
  EXPECT_FALSE(model.family->planProblem(stem, model.config));

  // 16 output tiles: 16-way splits already fill two waves' worth of
  // blocks, so no wider ones.
  ConvProblem late = stem;
  late.geometry = ConvGeometry::fromShapes(
      {1, 16, 1, 1024, 100352}, {16, 1, 1, 100352, 256}, FilterLayout::qrscf,
      {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0});
  candidates.clear();
  getSM90Im2colFamily().addCandidates(&context, late, candidates);
  for (IGemmConfigAttr config : candidates)
    EXPECT_LE(config.getSplitK(), 16);
}
