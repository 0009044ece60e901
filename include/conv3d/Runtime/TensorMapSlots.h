//===- TensorMapSlots.h - bounded bookkeeping of device TMA maps -*- C++
//-*-===//
//
// Kernels read their TMA descriptors from device memory, so every distinct
// descriptor a process encodes needs a device copy that stays unchanged
// while any kernel that was given it may still run. CudaDriver keeps those
// copies in a fixed array of slots; this class decides which slot a
// descriptor lives in, without touching the driver, so that the policy is
// unit-tested on machines without a GPU.
//
// The slots form two generations. New descriptors fill the current one;
// when it is full it is retired and the older generation is reused: its
// keys are forgotten, and the caller waits for all work enqueued so far
// (cuCtxSynchronize) before writing into it. A descriptor handed out from
// the retired generation stays valid until the next rotation, i.e. for
// another `perGeneration` new descriptors: lowered host code launches the
// kernel right after asking for its descriptors, so the window between the
// two is what this relies on.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_TENSORMAPSLOTS_H
#define CONV3D_RUNTIME_TENSORMAPSLOTS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mlir::conv3d {

class TensorMapSlots {
public:
  explicit TensorMapSlots(size_t perGeneration);

  /// The slot a key names, if it is still held.
  std::optional<size_t> lookup(llvm::StringRef key) const;

  /// Makes `key` name `slot` too (a descriptor is found both by its encoding
  /// parameters and by its content).
  void alias(llvm::StringRef key, size_t slot);

  struct Allocation {
    size_t slot;
    /// The slot belonged to a retired generation whose descriptors work
    /// enqueued earlier may still read: wait for that work before writing.
    bool reusesRetired;
    /// The slots whose contents were dropped by this allocation (the whole
    /// reused generation; empty unless a generation was rotated).
    size_t droppedBegin = 0, droppedEnd = 0;
  };
  /// A slot for a new descriptor (not yet named by any key).
  Allocation allocate();

  size_t capacity() const { return 2 * perGeneration; }
  size_t size() const { return keys.size(); }

private:
  size_t perGeneration;
  /// The generation being filled (0 or 1) and how many of its slots are used.
  unsigned current = 0;
  size_t used = 0;
  /// Whether the other generation holds descriptors (it has been filled once).
  bool otherFilled = false;
  llvm::StringMap<size_t> keys;
  std::vector<std::vector<std::string>> keysOfSlot;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_TENSORMAPSLOTS_H
