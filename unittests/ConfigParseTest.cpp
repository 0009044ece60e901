//===- ConfigParseTest.cpp - parsing of --config strings ------------------===//

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::conv3d;

TEST(ConfigParse, AcceptsKeyValueList) {
  MLIRContext context;
  std::string error;
  IGemmConfigAttr config = parseIGemmConfig(
      &context, "tile_m=64,tile_n=32, tile_k=16,stages=3,k_order=qslice_outer",
      error);
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config.getTileM(), 64);
  EXPECT_EQ(config.getTileN(), 32);
  EXPECT_EQ(config.getTileK(), 16);
  EXPECT_EQ(config.getStages(), 3);
  EXPECT_EQ(config.getKOrder(), KOrder::qslice_outer);
  EXPECT_EQ(config.getSplitK(), 1);
}

TEST(ConfigParse, RejectsBadInput) {
  MLIRContext context;
  std::string error;
  EXPECT_FALSE(parseIGemmConfig(&context, "tile_m=64", error));
  EXPECT_NE(error.find("tile_n"), std::string::npos) << error;
  EXPECT_FALSE(parseIGemmConfig(&context, "tile_m=0,tile_n=8,tile_k=8", error));
  EXPECT_NE(error.find("tile_m must be positive"), std::string::npos) << error;
  EXPECT_FALSE(parseIGemmConfig(&context, "tile_m", error));
  EXPECT_NE(error.find("key=value"), std::string::npos) << error;
  EXPECT_FALSE(
      parseIGemmConfig(&context, "tile_m=8,tile_n=8,tile_k=8,bogus=1", error));
}
