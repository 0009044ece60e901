// conv3d-check-pipeline-input, the first pass of the conv3d pipelines: a
// module that already frees its buffers was lowered before, and is refused
// with a message saying what the pipelines take (issue 26, item 12: an
// already-lowered module given to the GPU pipeline failed with upstream's
// "memory free side-effect on MemRef value not supported!"). The GPU
// pipelines: gpu-pipeline-dynamic-shapes.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-check-pipeline-input -verify-diagnostics
// RUN: not conv3d-opt %s -split-input-file -conv3d-cpu-pipeline 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: this module already frees its buffers (memref.dealloc): it was bufferized and lowered before. The conv3d pipelines take a module before buffer deallocation (conv3d and upstream ops on tensors, or on memrefs without deallocations): run them on the module this one was lowered from
// CPU-NOT: memory free side-effect

func.func @lowered(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  // expected-error @below {{this module already frees its buffers (memref.dealloc): it was bufferized and lowered before}}
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Memrefs without deallocations (conv3d's memref form) are what the
// pipelines take.
func.func @buffers(%x: memref<1x4x4x4x8xf32>, %w: memref<1x1x1x8x8xf32>, %o: memref<1x4x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x8xf32>, memref<1x1x1x8x8xf32>) outs(%o : memref<1x4x4x4x8xf32>) overwrite
  return
}
