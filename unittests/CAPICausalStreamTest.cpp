//===- CAPICausalStreamTest.cpp - weight sizes of the causal stream -------===//
//
// conv3d_causal_stream_create takes the size of every weight it copies and
// refuses one that is not exactly what the spec reads, naming it, before
// reading anything: a norm gamma of 4 values for 8 channels, placed against
// an unreadable page, was a read past its end (a SIGSEGV in memcpy) before
// the sizes were taken; now it is an error. Right sizes create a stream
// that steps.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include "conv3d/CAPI/conv3d.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace mlir::conv3d::capi_test;

namespace {

constexpr int64_t kChannels = 8, kFilters = 4;

/// A causal 3x3x3 f32 stream over 1 x L x 4 x 4 x 8 chunks with bias and an
/// RMS norm with beta (padding (2, 0) in depth, 1 in height and width).
conv3d_spec streamSpec() {
  conv3d_spec spec = makeSpec({1, 1, 4, 4, kChannels}, {3, 3, 3}, kFilters,
                              CONV3D_QRSCF, CONV3D_F32);
  const int64_t padding[6] = {2, 0, 1, 1, 1, 1};
  std::memcpy(spec.padding, padding, sizeof(padding));
  spec.has_bias = 1;
  return spec;
}

conv3d_input_ext normExt() {
  conv3d_input_ext ext;
  std::memset(&ext, 0, sizeof(ext));
  ext.has_norm = ext.has_norm_beta = 1;
  ext.norm_eps = 1e-6f;
  return ext;
}

/// Two pages, the second unreadable: `bytes` at the end of the first.
class GuardedBuffer {
public:
  explicit GuardedBuffer(size_t bytes) {
    page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *mapping = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(mapping, MAP_FAILED);
    base = static_cast<char *>(mapping);
    EXPECT_EQ(mprotect(base + page, page, PROT_NONE), 0);
    data = base + page - bytes;
    std::memset(data, 0, bytes);
  }
  ~GuardedBuffer() { munmap(base, 2 * page); }
  char *data = nullptr;

private:
  char *base = nullptr;
  size_t page = 0;
};

class CAPICausalStream : public CAPITest {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CAPITest::SetUp());
    for (size_t i = 0; i < filter.size(); ++i)
      filter[i] = 0.01f * float(i % 17) - 0.08f;
  }
  /// conv3d_causal_stream_create with the given gamma (the others right);
  /// null with the message in `error` when refused.
  conv3d_causal_stream *create(const void *gamma, size_t gammaSize,
                               size_t filterSize, size_t biasSize,
                               size_t betaSize) {
    conv3d_spec spec = streamSpec();
    conv3d_input_ext ext = normExt();
    return conv3d_causal_stream_create(engine, &spec, &ext, "target=cpu",
                                       filter.data(), filterSize, bias.data(),
                                       biasSize, gamma, gammaSize, beta.data(),
                                       betaSize, error, sizeof(error));
  }

  std::vector<float> filter =
      std::vector<float>(27 * kChannels * kFilters, 0.0f);
  std::vector<float> bias = std::vector<float>(kFilters, 0.5f);
  std::vector<float> gamma = std::vector<float>(kChannels, 1.0f);
  std::vector<float> beta = std::vector<float>(kChannels, 0.25f);
};

TEST_F(CAPICausalStream, ShortGammaAgainstAnUnreadablePageIsRefused) {
  // 4 of the 8 values, ending where the readable memory ends: copying the
  // 32 bytes the spec reads faulted before the size was passed.
  GuardedBuffer shortGamma(4 * sizeof(float));
  conv3d_causal_stream *stream =
      create(shortGamma.data, 4 * sizeof(float), filter.size() * 4,
             bias.size() * 4, beta.size() * 4);
  EXPECT_EQ(stream, nullptr);
  EXPECT_STREQ(error, "conv3d_causal_stream_create: the norm gamma has 16 "
                      "bytes; the spec reads 32 (8 f32 values)");
}

TEST_F(CAPICausalStream, EveryWrongSizeIsNamed) {
  const size_t f = filter.size() * 4, b = bias.size() * 4, g = gamma.size() * 4,
               n = beta.size() * 4;
  struct Case {
    size_t filter, bias, gamma, beta;
    const char *message;
  } cases[] = {
      {f - 4, b, g, n,
       "the filter has 3452 bytes; the spec reads 3456 (864 f32 values)"},
      {f, b + 4, g, n,
       "the bias has 20 bytes; the spec reads 16 (4 f32 values)"},
      {f, b, g, n * 2,
       "the norm beta has 64 bytes; the spec reads 32 (8 f32 values)"},
      {f, b, 0, n,
       "the norm gamma has 0 bytes; the spec reads 32 (8 f32 values)"},
  };
  for (const Case &c : cases) {
    conv3d_causal_stream *stream =
        create(gamma.data(), c.gamma, c.filter, c.bias, c.beta);
    EXPECT_EQ(stream, nullptr) << c.message;
    EXPECT_EQ(std::string(error),
              std::string("conv3d_causal_stream_create: ") + c.message);
  }
  // A weight the spec does not have, given anyway, is refused too.
  conv3d_spec spec = streamSpec();
  spec.has_bias = 0;
  conv3d_input_ext ext = normExt();
  EXPECT_EQ(conv3d_causal_stream_create(engine, &spec, &ext, "target=cpu",
                                        filter.data(), f, bias.data(), b,
                                        gamma.data(), g, beta.data(), n, error,
                                        sizeof(error)),
            nullptr);
  EXPECT_STREQ(error, "conv3d_causal_stream_create: the bias is given but "
                      "the spec has none");
}

TEST_F(CAPICausalStream, RightSizesCreateAStreamThatSteps) {
  conv3d_causal_stream *stream =
      create(gamma.data(), gamma.size() * 4, filter.size() * 4, bias.size() * 4,
             beta.size() * 4);
  ASSERT_NE(stream, nullptr) << error;
  std::vector<float> chunk(2 * 4 * 4 * kChannels);
  for (size_t i = 0; i < chunk.size(); ++i)
    chunk[i] = std::sin(0.37f * float(i)) + 0.1f;
  ASSERT_EQ(conv3d_causal_stream_output_frames(stream, 2), 2);
  std::vector<float> out(2 * 4 * 4 * kFilters, std::nanf(""));
  ASSERT_EQ(conv3d_causal_stream_step(stream, chunk.data(), 2, nullptr,
                                      out.data(), error, sizeof(error)),
            0)
      << error;
  for (float v : out)
    EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(conv3d_causal_stream_frames_seen(stream), 2);
  conv3d_causal_stream_destroy(stream);
}

} // namespace
