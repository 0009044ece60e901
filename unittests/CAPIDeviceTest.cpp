//===- CAPIDeviceTest.cpp - the C API's CUDA device and memory pool -------===//
//
// conv3d_cuda_device and conv3d_cuda_pool_memory: a null argument is an
// error naming the function; without a driver both fail with the driver's
// reason, the same message; with a GPU the device is described and the
// runtime's pool either reports itself (its high-water mark at least what it
// uses, what it reserves at least that, a reset bringing the mark down to the
// use) or names why there is none.
//
//===----------------------------------------------------------------------===//

#include "conv3d/CAPI/conv3d.h"

#include "gtest/gtest.h"

#include <string>

namespace {

TEST(CAPIDevice, NullArgumentsAreNamed) {
  char error[256] = "";
  EXPECT_NE(conv3d_cuda_device(nullptr, error, sizeof(error)), 0);
  EXPECT_STREQ(error, "conv3d_cuda_device: null argument");
  EXPECT_NE(conv3d_cuda_pool_memory(nullptr, 0, error, sizeof(error)), 0);
  EXPECT_STREQ(error, "conv3d_cuda_pool_memory: null argument");
}

TEST(CAPIDevice, PoolMemoryFailsAsTheDeviceDoesOrReportsItself) {
  conv3d_device_info info;
  char deviceError[1024] = "";
  int noDevice = conv3d_cuda_device(&info, deviceError, sizeof(deviceError));
  conv3d_pool_memory memory = {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, -1};
  char error[1024] = "";
  int failed = conv3d_cuda_pool_memory(&memory, 0, error, sizeof(error));
  if (noDevice) {
    // No driver or device: the same reason, nothing written.
    EXPECT_NE(failed, 0);
    EXPECT_STREQ(error, deviceError);
    EXPECT_EQ(memory.used, ~0ull);
    return;
  }
  EXPECT_GT(info.multiprocessors, 0);
  if (failed) {
    // A device without memory pools (or the PTX emulator): said so.
    EXPECT_NE(std::string(error).find("memory pool"), std::string::npos)
        << error;
    return;
  }
  EXPECT_GE(memory.used_high, memory.used);
  EXPECT_GE(memory.reserved, memory.used);
  EXPECT_TRUE(memory.graph_reported == 0 || memory.graph_reported == 1);
  if (memory.graph_reported)
    EXPECT_GE(memory.graph_used_high, memory.graph_used);
  ASSERT_EQ(conv3d_cuda_pool_memory(&memory, 1, error, sizeof(error)), 0)
      << error;
  conv3d_pool_memory reset;
  ASSERT_EQ(conv3d_cuda_pool_memory(&reset, 0, error, sizeof(error)), 0)
      << error;
  EXPECT_EQ(reset.used_high, reset.used);
  if (reset.graph_reported)
    EXPECT_EQ(reset.graph_used_high, reset.graph_used);
}

} // namespace
