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
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "conv3d-run: error: " << message << "\n";
    return int(kUsageError);
  };
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
  float amax = 0.0f;
  if (request.amax) {
    amax = *request.amax;
  } else {
    for (int64_t i = 0, e = input->numElements(); i < e; ++i)
      if (std::isfinite(input->get(i)))
        amax = std::max(amax, float(std::fabs(input->get(i))));
  }

  Engine engine(request.cache);
  llvm::Expected<Engine::PackedNVFP4> packed =
      engine.packNVFP4(*input, blockSize, amax, request.options);
  if (!packed)
    return fail(llvm::toString(packed.takeError()));
  NVFP4Packed expected = referencePackNVFP4(*input, blockSize, amax);
  int failed = compareBytes("codes", packed->codes, expected.codes) |
               compareBytes("scales", packed->scales, expected.scales);
  llvm::outs() << llvm::formatv(
      "pack-nvfp4: {0} {1}, block {2}, amax {3:e}, target {4}: {5} code "
      "bytes, {6} scale bytes: {7}\n",
      llvm::join(llvm::map_range(spec.inputShape(),
                                 [](int64_t s) { return std::to_string(s); }),
                 "x"),
      stringifyElementType(spec.inputType), blockSize, amax,
      stringifyTarget(request.options.target), expected.codes.size(),
      expected.scales.size(), failed ? "FAIL" : "bit-exact with the reference");
  return failed ? kCheckFailed : kOk;
}
