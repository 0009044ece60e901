// conv3d-lower-host-ops-to-gpu tiles host loops by block-size: a block size
// that is not positive is an error naming it (it used to divide by zero in
// scf::tileParallelLoop, or emit a loop step of -1).
//
// RUN: not conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: conv3d-lower-host-ops-to-gpu: block-size must be positive, got 0
// RUN: not conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=-4 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: conv3d-lower-host-ops-to-gpu: block-size must be positive, got -4

func.func @copy(%a: memref<16xf32>, %b: memref<16xf32>) {
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  return
}
