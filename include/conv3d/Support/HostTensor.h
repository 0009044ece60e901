//===- HostTensor.h - a typed, row-major host tensor ------------*- C++ -*-===//
//
// The buffers the reference, the runtime tests and the .npy files exchange:
// raw little-endian bytes of one element type plus a shape. Values are read
// and written as doubles; writes round once, to nearest even, to the type.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_SUPPORT_HOSTTENSOR_H
#define CONV3D_SUPPORT_HOSTTENSOR_H

#include "conv3d/Support/ElementType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::conv3d {

/// A contiguous row-major tensor. An empty shape is a scalar (one element).
struct HostTensor {
  ElementType type = ElementType::f32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  /// A tensor of `shape` whose elements are +0. The caller vouches for the
  /// size (a copy of a tensor that exists, a test's small shape); sizes
  /// that come from users go through allocate().
  static HostTensor zeros(ElementType type, std::vector<int64_t> shape);

  /// zeros(), after checking the size: an error, naming `what` and the
  /// bytes needed, when a size is negative, the byte count overflows int64
  /// or exceeds the machine's physical memory (checkHostMemory), instead
  /// of an out-of-memory abort.
  static llvm::Expected<HostTensor> allocate(ElementType type,
                                             std::vector<int64_t> shape,
                                             llvm::StringRef what = "tensor");

  int64_t numElements() const;
  /// The element at `linearIndex` (row-major), exactly.
  double get(int64_t linearIndex) const;
  /// Stores `value` rounded to nearest even to the element type.
  void set(int64_t linearIndex, double value);

  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }
  size_t sizeInBytes() const { return bytes.size(); }
};

/// Product of the sizes of `shape` (1 for a scalar).
int64_t numElementsOf(const std::vector<int64_t> &shape);

/// The bytes of a row-major tensor of `shape` with `bytesPerElement`: an
/// error naming `what` and the shape when a size is negative or the
/// product overflows int64.
llvm::Expected<int64_t> tensorBytes(llvm::ArrayRef<int64_t> shape,
                                    int64_t bytesPerElement,
                                    llvm::StringRef what = "tensor");

/// The machine's physical memory in bytes.
int64_t physicalMemoryBytes();

/// An error naming `what` and `bytes` when `bytes` exceed the machine's
/// physical memory: allocating them would abort or swap to death. (Memory
/// the operating system would refuse on other grounds still aborts; this
/// rejects what can never fit.)
llvm::Error checkHostMemory(int64_t bytes, llvm::StringRef what);

/// Fills every element with a NaN bit pattern (all bytes 0xFF, a NaN in
/// every element type), so that elements a kernel fails to write show up.
void fillPoison(HostTensor &tensor);
/// Normal(0, stddev) values from std::mt19937_64(seed), rounded to the type.
/// The normal variates come from our own Box-Muller transform because
/// std::normal_distribution differs between standard libraries.
void fillRandomNormal(HostTensor &tensor, uint64_t seed, double stddev = 1.0);
/// Uniform values in [lo, hi) from std::mt19937_64(seed), rounded to the
/// type.
void fillRandomUniform(HostTensor &tensor, uint64_t seed, double lo, double hi);
/// Data that exercises the NVFP4 edge cases when quantized with
/// amax = max|x| in blocks of 16 along the row-major order: mostly small
/// values (1e-6 .. 1e-3), rare large outliers (10 .. 1000), exact zeros
/// (single elements and whole blocks), and blocks of tiny values scaled
/// relative to max|x| so that their E4M3 block scale falls around and inside
/// the E4M3 subnormal range (including scales that round to 0).
void fillOutlierHeavy(HostTensor &tensor, uint64_t seed);

} // namespace mlir::conv3d

#endif // CONV3D_SUPPORT_HOSTTENSOR_H
