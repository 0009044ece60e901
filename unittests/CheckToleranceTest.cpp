//===- CheckToleranceTest.cpp - ConvSpec::checkTolerance ------------------===//
//
// The check tolerance is the output type's, except that a prologue on a
// 16-bit input (whose transformed values are rounded to that type) allows at
// least a tenth of the input type's.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/ConvSpec.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;

namespace {

TEST(CheckTolerance, OutputTypeWithoutPrologue) {
  ConvSpec spec;
  for (ElementType out :
       {ElementType::bf16, ElementType::f16, ElementType::f32}) {
    spec.outputType = out;
    EXPECT_EQ(spec.checkTolerance(), defaultTolerance(out));
  }
}

TEST(CheckTolerance, PrologueOnSixteenBitInputs) {
  ConvSpec spec;
  spec.inputType = ElementType::bf16;
  spec.outputType = ElementType::f32;
  spec.hasNorm = true;
  EXPECT_EQ(spec.checkTolerance(), defaultTolerance(ElementType::bf16) / 10);
  spec.hasNorm = false;
  spec.inputActivation = Activation::silu;
  spec.inputType = ElementType::f16;
  EXPECT_EQ(spec.checkTolerance(), defaultTolerance(ElementType::f16) / 10);
  // A bf16 output's own tolerance is already larger.
  spec.inputType = ElementType::bf16;
  spec.outputType = ElementType::bf16;
  EXPECT_EQ(spec.checkTolerance(), defaultTolerance(ElementType::bf16));
  // f32 inputs are not rounded after the prologue.
  spec.inputType = ElementType::f32;
  spec.outputType = ElementType::f32;
  EXPECT_EQ(spec.checkTolerance(), defaultTolerance(ElementType::f32));
}

} // namespace
