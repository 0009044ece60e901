// conv3d-lower-host-ops-to-gpu tiles host loops by block-size, the threads
// per block of the kernels it makes: a block size outside [1, 1024] is an
// error naming it (0 used to divide by zero in scf::tileParallelLoop, -4 to
// emit a loop step of -4, and 4096 to build kernels no GPU can launch).
//
// RUN: not conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: conv3d-lower-host-ops-to-gpu: block-size must be in [1, 1024] (threads per block), got 0
// RUN: not conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=-4 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: conv3d-lower-host-ops-to-gpu: block-size must be in [1, 1024] (threads per block), got -4
// RUN: not conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=4096 2>&1 | FileCheck %s --check-prefix=LARGE
// LARGE: error: conv3d-lower-host-ops-to-gpu: block-size must be in [1, 1024] (threads per block), got 4096
// RUN: conv3d-opt %s -conv3d-lower-host-ops-to-gpu=block-size=1024 | FileCheck %s --check-prefix=MAX
// The largest is taken: the epilogue's loop in blocks of 1024 threads.
// MAX: arith.constant 1024 : index
// MAX: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[BLOCK:.*]]) {
// MAX-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[BLOCK]]) step

func.func @epilogue(%s: memref<2x4x4x4x8xf32>, %o: memref<2x4x4x4x8xbf16>) {
  conv3d.epilogue ins(%s : memref<2x4x4x4x8xf32>) outs(%o : memref<2x4x4x4x8xbf16>) overwrite activation = relu
  return
}
