//===- CAPIExplainTest.cpp - conv3d_explain of the C API ------------------===//
//
// conv3d_explain returns what conv3d-run --explain prints (text or JSON) for
// any target without a GPU, a string the caller frees with
// conv3d_string_destroy; bad arguments and options are errors with a
// message.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "conv3d/CAPI/conv3d.h"

#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace mlir::conv3d::capi_test;

namespace {

/// 1x4x16x16x16 bf16 input, 3x3x3 window, 384 FQRSC filters.
conv3d_spec narrowSpec() {
  conv3d_spec spec =
      makeSpec({1, 4, 16, 16, 16}, {3, 3, 3}, 384, CONV3D_FQRSC, CONV3D_BF16);
  for (int64_t &p : spec.padding)
    p = 1;
  return spec;
}

struct Explained {
  std::string text, error;
};

Explained explain(conv3d_engine *engine, const conv3d_spec &spec,
                  const char *options, int32_t format) {
  char error[4096] = "";
  char *text = conv3d_explain(engine, &spec, nullptr, nullptr, options, format,
                              error, sizeof(error));
  Explained result;
  result.error = error;
  if (text) {
    result.text = text;
    conv3d_string_destroy(text);
  }
  return result;
}

using CAPIExplainTest = CAPITest;

TEST_F(CAPIExplainTest, TextAndJson) {
  conv3d_spec spec = narrowSpec();
  Explained text = explain(engine, spec, "target=sm90", CONV3D_EXPLAIN_TEXT);
  ASSERT_TRUE(text.error.empty()) << text.error;
  EXPECT_NE(text.text.find("kernel:        sm80"), std::string::npos)
      << text.text;
  EXPECT_NE(text.text.find("sm90-im2col         refused: C = 16 is under one "
                           "64-channel TMA box"),
            std::string::npos)
      << text.text;

  Explained json = explain(engine, spec, "target=sm90", CONV3D_EXPLAIN_JSON);
  ASSERT_TRUE(json.error.empty()) << json.error;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json.text);
  ASSERT_TRUE(static_cast<bool>(value)) << toString(value.takeError());
  const llvm::json::Object *object = value->getAsObject();
  ASSERT_TRUE(object);
  EXPECT_EQ(object->getString("target"), "sm90");
  const llvm::json::Array *convs = object->getArray("convolutions");
  ASSERT_TRUE(convs && convs->size() == 1);
  const llvm::json::Object *conv = (*convs)[0].getAsObject();
  EXPECT_EQ(conv->getString("family"), "sm80");
  const llvm::json::Object *prediction = conv->getObject("prediction");
  ASSERT_TRUE(prediction) << "the cost model's estimate of the sm80 kernel";
  EXPECT_GT(prediction->getNumber("seconds").value_or(0), 0);
  const llvm::json::Array *families = conv->getArray("families");
  ASSERT_TRUE(families && families->size() == 3);
  EXPECT_EQ((*families)[1].getAsObject()->getString("verdict"), "refused");
}

TEST_F(CAPIExplainTest, Errors) {
  conv3d_spec spec = narrowSpec();
  EXPECT_EQ(explain(engine, spec, "target=sm70", CONV3D_EXPLAIN_TEXT).error,
            "target=sm70: expected one of cpu, sm80, sm90, sm100");
  EXPECT_EQ(explain(engine, spec, "target=cpu", 7).error,
            "conv3d_explain: format must be CONV3D_EXPLAIN_TEXT or "
            "CONV3D_EXPLAIN_JSON, got 7");
  spec.channels = 0;
  EXPECT_FALSE(
      explain(engine, spec, "target=cpu", CONV3D_EXPLAIN_TEXT).error.empty());
  EXPECT_EQ(conv3d_explain(nullptr, &spec, nullptr, nullptr, "", 0, error,
                           sizeof(error)),
            nullptr);
  EXPECT_STREQ(error, "conv3d_explain: null engine or spec");
}

} // namespace
