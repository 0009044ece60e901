//===- NpyTest.cpp - .npy reader and writer -------------------------------===//

#include "conv3d/Support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir::conv3d;

namespace {

/// A temporary file removed at the end of the test.
class TempFile {
public:
  TempFile() {
    int fd;
    std::error_code ec =
        llvm::sys::fs::createTemporaryFile("conv3d-npy-test", "npy", fd, path);
    EXPECT_FALSE(ec) << ec.message();
    llvm::sys::fs::closeFile(fd);
  }
  ~TempFile() { llvm::sys::fs::remove(path); }
  llvm::StringRef str() const { return path; }

  void write(llvm::StringRef contents) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << contents;
  }
  std::string read() const {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(buffer));
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }

private:
  llvm::SmallString<128> path;
};

/// A .npy file with the given header dict and raw data, version `major`.
std::string makeNpy(llvm::StringRef dict, llvm::StringRef data,
                    unsigned major = 1) {
  std::string header = dict.str();
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY";
  file += char(major);
  file += char(0);
  uint32_t length = header.size();
  file.append(reinterpret_cast<const char *>(&length), major == 1 ? 2 : 4);
  return file + header + data.str();
}

std::string rawF64(std::initializer_list<double> values) {
  std::string data;
  for (double v : values)
    data.append(reinterpret_cast<const char *>(&v), sizeof(v));
  return data;
}

std::string rawF32(std::initializer_list<float> values) {
  std::string data;
  for (float v : values)
    data.append(reinterpret_cast<const char *>(&v), sizeof(v));
  return data;
}

std::string errorOf(llvm::Expected<HostTensor> result) {
  if (result)
    return "<no error>";
  return llvm::toString(result.takeError());
}

TEST(Npy, RoundTripsF32) {
  TempFile file;
  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 0.1f * float(i) - 1.0f + (i == 5 ? 1e-40f : 0.0f);
  values[7] = -0.0f;
  ASSERT_FALSE(bool(writeNpyF32(file.str(), shape, values)));

  // The header is the one NumPy writes, and the data is 64-byte aligned.
  std::string contents = file.read();
  ASSERT_EQ(contents.size(), 128u + 24 * 4);
  EXPECT_EQ(contents.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(contents.substr(10, 62),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }");
  EXPECT_EQ(contents.find_first_not_of(' ', 72), 127u);
  EXPECT_EQ(contents[127], '\n');

  llvm::Expected<HostTensor> read = readNpy(file.str(), ElementType::f32);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->shape, shape);
  EXPECT_EQ(read->type, ElementType::f32);
  for (size_t i = 0; i < values.size(); ++i) {
    float v = float(read->get(int64_t(i)));
    EXPECT_EQ(std::memcmp(&v, &values[i], 4), 0) << i;
  }
}

TEST(Npy, WritesScalarsAndVectors) {
  TempFile file;
  ASSERT_FALSE(bool(writeNpyF32(file.str(), {}, {2.5f})));
  EXPECT_NE(file.read().find("'shape': (), }"), std::string::npos);
  auto scalar = readNpy(file.str(), ElementType::f16);
  ASSERT_TRUE(bool(scalar));
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->get(0), 2.5);

  ASSERT_FALSE(bool(writeNpyF32(file.str(), {3}, {1.f, 2.f, 3.f})));
  EXPECT_NE(file.read().find("'shape': (3,), }"), std::string::npos);
  auto vector = readNpy(file.str(), ElementType::bf16);
  ASSERT_TRUE(bool(vector));
  EXPECT_EQ(vector->shape, std::vector<int64_t>{3});
  EXPECT_EQ(vector->get(2), 3.0);

  // The HostTensor overload converts bf16 exactly.
  HostTensor t = HostTensor::zeros(ElementType::bf16, {2, 2});
  t.set(3, 1.0 + 0x1p-7);
  ASSERT_FALSE(bool(writeNpyF32(file.str(), t)));
  auto back = readNpy(file.str(), ElementType::f32);
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(back->get(3), 1.0 + 0x1p-7);

  // Shape and value count must agree.
  llvm::Error mismatch = writeNpyF32(file.str(), {2, 2}, {1.f});
  EXPECT_NE(llvm::toString(std::move(mismatch)).find("4 elements"),
            std::string::npos);
}

TEST(Npy, ReadsF64WithOneRounding) {
  TempFile file;
  // 1 + 2^-8 + 2^-30 rounds to 1 + 2^-7 in bf16 when rounded once; through
  // f32 it would become 1.
  file.write(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                     "'shape': (2, 1), }",
                     rawF64({1.0 + 0x1p-8 + 0x1p-30, -3.0})));
  auto bf16 = readNpy(file.str(), ElementType::bf16);
  ASSERT_TRUE(bool(bf16)) << llvm::toString(bf16.takeError());
  EXPECT_EQ(bf16->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(bf16->get(0), 1.0 + 0x1p-7);
  EXPECT_EQ(bf16->get(1), -3.0);
  auto f32 = readNpy(file.str(), ElementType::f32);
  ASSERT_TRUE(bool(f32));
  EXPECT_EQ(f32->get(0), double(float(1.0 + 0x1p-8 + 0x1p-30)));
}

TEST(Npy, AcceptsVersion2AndOtherSpellings) {
  TempFile file;
  file.write(makeNpy("{\"shape\": (2,), \"fortran_order\": False, "
                     "\"descr\": \"<f4\"}",
                     rawF32({1.5f, -2.0f}), /*major=*/2));
  auto t = readNpy(file.str(), ElementType::f32);
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, std::vector<int64_t>{2});
  EXPECT_EQ(t->get(1), -2.0);
}

TEST(Npy, ReportsErrors) {
  TempFile file;
  std::string missing = file.str().str() + ".does-not-exist";
  std::string error = errorOf(readNpy(missing, ElementType::f32));
  EXPECT_NE(error.find(missing), std::string::npos) << error;
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;

  file.write("PK\x03\x04 this is a zip file");
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '>f4', 'fortran_order': False, "
                     "'shape': (1,), }",
                     rawF32({1.f})));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("unsupported dtype '>f4'"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '<i4', 'fortran_order': False, "
                     "'shape': (1,), }",
                     rawF32({1.f})));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("'<i4'"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '<f4', 'fortran_order': True, "
                     "'shape': (1, 2), }",
                     rawF32({1.f, 2.f})));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("Fortran-order"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (2, 3), }",
                     rawF32({1.f, 2.f, 3.f})));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("truncated data"), std::string::npos) << error;
  EXPECT_NE(error.find("expected 24 data bytes"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (2, -3), }",
                     ""));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("malformed .npy header"), std::string::npos) << error;

  file.write(makeNpy("{'descr': '<f4', 'shape': (1,), }", rawF32({1.f})));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("lacks"), std::string::npos) << error;

  // Header length pointing past the end of the file.
  file.write(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("truncated .npy header"), std::string::npos) << error;

  file.write(std::string("\x93NUMPY\x07\x00\x10\x00", 10));
  error = errorOf(readNpy(file.str(), ElementType::f32));
  EXPECT_NE(error.find("unsupported .npy version 7.0"), std::string::npos)
      << error;
}

} // namespace
