//===- PackRunner.cpp - conv3d-run --pack-nvfp4 ---------------------------===//
//
// Checks the packing prepass of real NVFP4 (conv3d.pack_nvfp4, compiled for
// the target and run there) byte for byte against the reference packer of
// lib/Quant. The data are random normals whose blocks span 2^-30 .. 2^12 of
// amax (subnormal and flushed E4M3 scales, saturation at 448), with a few
// zeros, negative zeros, infinities and NaNs planted in them.
//
//===----------------------------------------------------------------------===//

#include "Runners.h"

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

using namespace mlir::conv3d;
using namespace conv3d_run;

/// Random data with a different magnitude per block and special values.
static void fillPackingData(HostTensor &x, int64_t blockSize, uint64_t seed) {
  fillRandomNormal(x, seed, 1.0);
  std::mt19937_64 rng(seed ^ 0xF4);
  int64_t n = x.numElements();
  for (int64_t block = 0; block < n / blockSize; ++block) {
    double scale = std::ldexp(1.0, int(rng() % 43) - 30);
    for (int64_t i = block * blockSize; i < (block + 1) * blockSize; ++i)
      x.set(i, x.get(i) * scale);
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {0.0, -0.0, inf, -inf, std::nan("")};
  for (int64_t k = 0; k < std::min<int64_t>(n / 64 + 1, 64); ++k)
    x.set(int64_t(rng() % uint64_t(n)), specials[k % 5]);
  // One all-zero block, when there are several.
  if (n / blockSize > 1)
    for (int64_t i = 0; i < blockSize; ++i)
      x.set(blockSize + i, 0.0);
}

static int compareBytes(llvm::StringRef what, const std::vector<uint8_t> &got,
                        const std::vector<uint8_t> &expected) {
  int64_t mismatches = 0, first = -1;
  for (size_t i = 0; i < expected.size(); ++i)
    if (got[i] != expected[i] && mismatches++ == 0)
      first = int64_t(i);
  if (mismatches == 0)
    return 0;
  llvm::outs() << llvm::formatv(
      "pack-nvfp4: {0}: {1} of {2} bytes differ from the reference; first at "
      "byte {3}: got 0x{4:x-2}, expected 0x{5:x-2}\n",
      what, mismatches, expected.size(), first, got[first], expected[first]);
  return 1;
}

int conv3d_run::runPackNVFP4(const RunRequest &request) {
  const ConvSpec &spec = request.spec;
  int64_t blockSize = *request.packBlockSize;
  if (spec.geometry.channels % blockSize != 0)
    return fail(llvm::formatv("--pack-nvfp4: C = {0} is not a multiple of "
                              "the block size {1}",
                              spec.geometry.channels, blockSize));
  llvm::Expected<HostTensor> input =
      HostTensor::allocate(spec.inputType, spec.inputShape(), "input");
  if (!input)
    return fail(llvm::toString(input.takeError()));
  if (!request.inputPath.empty()) {
    llvm::Expected<HostTensor> loaded =
        readNpy(request.inputPath, spec.inputType);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    if (loaded->shape != input->shape)
      return fail("--input: the file's shape is not the spec's input shape");
    *input = std::move(*loaded);
  } else {
    fillPackingData(*input, blockSize, request.seed);
  }
  // The filter, K-major (FQRSC): its blocks along C of each tap are the
  // K-order blocks of the GEMM's B operand.
  std::optional<HostTensor> filter;
  if (spec.filterLayout == FilterLayout::fqrsc) {
    llvm::Expected<HostTensor> allocated =
        HostTensor::allocate(spec.inputType, spec.filterShape(), "filter");
    if (!allocated)
      return fail(llvm::toString(allocated.takeError()));
    filter = std::move(*allocated);
    fillPackingData(*filter, blockSize, request.seed + 1);
  }
  auto maxAbs = [](const HostTensor &t) {
    float result = 0.0f;
    for (int64_t i = 0, e = t.numElements(); i < e; ++i)
      if (std::isfinite(t.get(i)))
        result = std::max(result, float(std::fabs(t.get(i))));
    return result;
  };

  Engine engine(request.cache);
  int failed = 0;
  auto check = [&](llvm::StringRef what, const HostTensor &x, float amax,
                   bool isFilter) -> bool {
    // Block16 filters go through the offline filter quantization of real
    // NVFP4 (the same prepass, behind the filter's own checks).
    llvm::Expected<Engine::PackedNVFP4> packed =
        isFilter && blockSize == 16
            ? engine.quantizeFilter(spec, x, amax, request.options)
            : engine.packNVFP4(x, blockSize, amax, request.options);
    if (!packed) {
      llvm::errs() << "conv3d-run: error: "
                   << llvm::toString(packed.takeError()) << "\n";
      return false;
    }
    NVFP4Packed expected = referencePackNVFP4(x, blockSize, amax);
    int mismatch =
        compareBytes((what + " codes").str(), packed->codes, expected.codes) |
        compareBytes((what + " scales").str(), packed->scales, expected.scales);
    failed |= mismatch;
    llvm::outs() << llvm::formatv(
        "pack-nvfp4: {0} {1} {2}, block {3}, amax {4:e}, target {5}: {6} "
        "code bytes, {7} scale bytes: {8}\n",
        what,
        llvm::join(llvm::map_range(x.shape,
                                   [](int64_t s) { return std::to_string(s); }),
                   "x"),
        stringifyElementType(x.type), blockSize, amax,
        stringifyTarget(request.options.target), expected.codes.size(),
        expected.scales.size(),
        mismatch ? "FAIL" : "bit-exact with the reference");
    return true;
  };
  if (!check("input", *input, request.amax ? *request.amax : maxAbs(*input),
             /*isFilter=*/false))
    return kUsageError;
  if (filter &&
      !check("filter", *filter,
             request.filterAmax ? *request.filterAmax : maxAbs(*filter),
             /*isFilter=*/true))
    return kUsageError;
  return failed ? kCheckFailed : kOk;
}
