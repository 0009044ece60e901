//===- HostTensor.cpp - a typed, row-major host tensor --------------------===//

#include "conv3d/Support/HostTensor.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <unistd.h>

using namespace mlir::conv3d;

int64_t mlir::conv3d::numElementsOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size < 0)
      llvm::report_fatal_error("HostTensor: negative dimension size");
    count *= size;
  }
  return count;
}

HostTensor HostTensor::zeros(ElementType type, std::vector<int64_t> shape) {
  HostTensor tensor;
  tensor.type = type;
  tensor.shape = std::move(shape);
  // All-zero bytes are +0 in every element type.
  tensor.bytes.assign(
      static_cast<size_t>(numElementsOf(tensor.shape)) * elementSize(type), 0);
  return tensor;
}

static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return text.empty() ? "scalar" : text;
}

llvm::Expected<int64_t> mlir::conv3d::tensorBytes(llvm::ArrayRef<int64_t> shape,
                                                  int64_t bytesPerElement,
                                                  llvm::StringRef what) {
  int64_t total = bytesPerElement;
  for (int64_t size : shape) {
    if (size < 0)
      return llvm::createStringError(
          llvm::formatv("{0} of shape {1} has a negative size", what,
                        formatShape(shape))
              .str());
    if (llvm::MulOverflow(total, size, total))
      return llvm::createStringError(
          llvm::formatv("{0} of shape {1} needs more than 2^63 bytes", what,
                        formatShape(shape))
              .str());
  }
  return total;
}

int64_t mlir::conv3d::physicalMemoryBytes() {
  int64_t pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  int64_t bytes;
  if (pages <= 0 || pageSize <= 0 || llvm::MulOverflow(pages, pageSize, bytes))
    return INT64_MAX; // unknown: do not refuse
  return bytes;
}

llvm::Error mlir::conv3d::checkHostMemory(int64_t bytes, llvm::StringRef what) {
  int64_t physical = physicalMemoryBytes();
  if (bytes <= physical)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("{0} needs {1} bytes of host memory; this machine has {2}",
                    what, bytes, physical)
          .str());
}

llvm::Expected<HostTensor> HostTensor::allocate(ElementType type,
                                                std::vector<int64_t> shape,
                                                llvm::StringRef what) {
  llvm::Expected<int64_t> bytes =
      tensorBytes(shape, int64_t(elementSize(type)), what);
  if (!bytes)
    return bytes.takeError();
  std::string description =
      llvm::formatv("{0} of shape {1} ({2})", what, formatShape(shape),
                    stringifyElementType(type))
          .str();
  if (llvm::Error error = checkHostMemory(*bytes, description))
    return std::move(error);
  return zeros(type, std::move(shape));
}

int64_t HostTensor::numElements() const { return numElementsOf(shape); }

double HostTensor::get(int64_t linearIndex) const {
  const uint8_t *p = bytes.data() + linearIndex * elementSize(type);
  switch (type) {
  case ElementType::bf16: {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    return bf16BitsToFloat(bits);
  }
  case ElementType::f16: {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    return f16BitsToFloat(bits);
  }
  case ElementType::f32: {
    float value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
  }
  llvm_unreachable("unknown element type");
}

void HostTensor::set(int64_t linearIndex, double value) {
  uint8_t *p = bytes.data() + linearIndex * elementSize(type);
  switch (type) {
  case ElementType::bf16: {
    uint16_t bits = toBF16Bits(value);
    std::memcpy(p, &bits, sizeof(bits));
    return;
  }
  case ElementType::f16: {
    uint16_t bits = toF16Bits(value);
    std::memcpy(p, &bits, sizeof(bits));
    return;
  }
  case ElementType::f32: {
    float rounded = static_cast<float>(roundToElementType(value, type));
    std::memcpy(p, &rounded, sizeof(rounded));
    return;
  }
  }
  llvm_unreachable("unknown element type");
}

void mlir::conv3d::fillPoison(HostTensor &tensor) {
  // 0xFFFF is a NaN in bf16 and f16 (all-ones exponent, non-zero
  // fraction), and 0xFFFFFFFF is one in f32. An empty tensor (a stream
  // step that yields no frame) has no storage to poison.
  if (!tensor.bytes.empty())
    std::memset(tensor.bytes.data(), 0xFF, tensor.bytes.size());
}

namespace {
/// Uniform and normal variates from mt19937_64 with a fixed, portable
/// derivation (the standard distributions are implementation-defined).
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(engine() >> 11) * 0x1p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Log-uniform in [lo, hi), lo > 0.
  double logUniform(double lo, double hi) {
    return std::exp(uniform(std::log(lo), std::log(hi)));
  }
  double sign() { return (engine() & 1) ? -1.0 : 1.0; }
  uint64_t below(uint64_t n) { return engine() % n; }

  /// Standard normal, Box-Muller; the second variate is kept for the next
  /// call.
  double normal() {
    if (hasSpare) {
      hasSpare = false;
      return spare;
    }
    double u1 = 1.0 - uniform(); // (0, 1]: log stays finite
    double u2 = uniform();
    double radius = std::sqrt(-2.0 * std::log(u1));
    double angle = 2.0 * M_PI * u2;
    spare = radius * std::sin(angle);
    hasSpare = true;
    return radius * std::cos(angle);
  }

private:
  std::mt19937_64 engine;
  double spare = 0.0;
  bool hasSpare = false;
};
} // namespace

void mlir::conv3d::fillRandomNormal(HostTensor &tensor, uint64_t seed,
                                    double stddev) {
  Random random(seed);
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    tensor.set(i, stddev * random.normal());
}

void mlir::conv3d::fillRandomUniform(HostTensor &tensor, uint64_t seed,
                                     double lo, double hi) {
  Random random(seed);
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    tensor.set(i, random.uniform(lo, hi));
}

void mlir::conv3d::fillOutlierHeavy(HostTensor &tensor, uint64_t seed) {
  // Groups of 16 consecutive elements line up with the default NVFP4 block
  // when the innermost dimension is a multiple of 16.
  constexpr int64_t kGroup = 16;
  enum class Kind { zeros, tiny, outlier, small };
  Random random(seed);
  const int64_t count = tensor.numElements();
  const int64_t groups = (count + kGroup - 1) / kGroup;
  std::vector<Kind> kinds(groups);

  // Pass 1: everything except the tiny groups, whose size is relative to the
  // tensor's maximum.
  for (int64_t g = 0; g < groups; ++g) {
    double u = random.uniform();
    Kind kind = u < 0.10   ? Kind::zeros
                : u < 0.25 ? Kind::tiny
                : u < 0.35 ? Kind::outlier
                           : Kind::small;
    kinds[g] = kind;
    int64_t begin = g * kGroup, end = std::min(count, begin + kGroup);
    if (kind == Kind::zeros || kind == Kind::tiny) {
      // Tiny groups are zero until pass 2 so they do not affect amax.
      for (int64_t i = begin; i < end; ++i)
        tensor.set(i, 0.0);
      continue;
    }
    for (int64_t i = begin; i < end; ++i) {
      bool zero = random.uniform() < 0.05;
      double value = random.sign() * random.logUniform(1e-6, 1e-3);
      tensor.set(i, zero ? 0.0 : value);
    }
    if (kind == Kind::outlier) {
      int64_t at = begin + int64_t(random.below(uint64_t(end - begin)));
      tensor.set(at, random.sign() * random.logUniform(10.0, 1000.0));
    }
  }
  double amax = 0.0;
  for (int64_t i = 0; i < count; ++i)
    amax = std::max(amax, std::fabs(tensor.get(i)));
  if (amax == 0.0)
    amax = 1.0;

  // Pass 2: with amax = max|x| a block's scale is s = bmax * 448 / amax.
  // Aim s log-uniformly at [2^-11, 2^-5]: below half the smallest E4M3
  // subnormal (2^-10, rounds to 0), the subnormals (2^-9 .. 7 * 2^-9) and
  // the first normal binades.
  for (int64_t g = 0; g < groups; ++g) {
    if (kinds[g] != Kind::tiny)
      continue;
    int64_t begin = g * kGroup, end = std::min(count, begin + kGroup);
    double bmax = random.logUniform(0x1p-11, 0x1p-5) * amax / 448.0;
    int64_t at = begin + int64_t(random.below(uint64_t(end - begin)));
    for (int64_t i = begin; i < end; ++i)
      tensor.set(i, random.sign() * (i == at ? bmax : random.uniform(0, bmax)));
  }
}
