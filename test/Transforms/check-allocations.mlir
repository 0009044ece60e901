// conv3d-check-allocations: static host allocations are size-checked and
// their total is recorded on the module for the engine.
// RUN: conv3d-opt %s -split-input-file -conv3d-check-allocations=max-bytes=100 -verify-diagnostics | FileCheck %s

// 16 + 8 * 8 (index) + 2 * 4 * 2 (vector<4xf16>) = 96 bytes; the dynamic one
// and the GPU code's are not counted.
// CHECK: module attributes {conv3d.host_allocation_bytes = 96 : i64}
func.func @counted(%n: index) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloca() : memref<8xindex>
  %v = memref.alloc() : memref<2xvector<4xf16>>
  %d = memref.alloc(%n) : memref<?xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = memref.alloca() : memref<1000000xf32>
    gpu.terminator
  }
  return
}

// -----

// CHECK-NOT: module attributes
func.func @over_the_limit() {
  // expected-error @below {{conv3d-check-allocations: memref.alloc of 'memref<32xf32>' needs 128 bytes; the limit is 100}}
  %a = memref.alloc() : memref<32xf32>
  return
}

// -----

// Each under the limit, 120 in all.
// expected-error @below {{conv3d-check-allocations: the module's allocations need 120 bytes in all; the limit is 100}}
module {
  func.func @total_over_the_limit() {
    %a = memref.alloc() : memref<15xf32>
    %b = memref.alloc() : memref<15xf32>
    return
  }
}

// -----

func.func @wraps() {
  // expected-error @below {{conv3d-check-allocations: memref.alloc of 'memref<4611686018427387904x4xf32>' needs more than 2^63 bytes}}
  %a = memref.alloc() : memref<4611686018427387904x4xf32>
  return
}
