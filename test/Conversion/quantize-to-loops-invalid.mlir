// conv3d-quantize-to-loops rejects what it cannot lower: a contiguous-block
// quantize on strided memrefs, and an alignment that is not a power of two
// up to 16.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-quantize-to-loops -verify-diagnostics
// RUN: not conv3d-opt %s -split-input-file -conv3d-quantize-to-loops=alignment=12 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: error: conv3d-quantize-to-loops: alignment must be 0 or a power of two up to 16 (bytes, the widest access), got 12
// A power of two beyond the widest access (2^62) would tag 16-byte
// accesses with an alignment they do not have.
// RUN: not conv3d-opt %s -split-input-file -conv3d-quantize-to-loops=alignment=4611686018427387904 2>&1 | FileCheck %s --check-prefix=ALIGN-HUGE
// ALIGN-HUGE: error: conv3d-quantize-to-loops: alignment must be 0 or a power of two up to 16 (bytes, the widest access), got 4611686018427387904

func.func @strided(%x: memref<1x2x2x2x32xbf16, strided<[512, 256, 128, 64, 1]>>, %amax: f32, %o: memref<1x2x2x2x32xbf16>) {
  // expected-error @below {{conv3d-quantize-to-loops needs operands with identity layouts}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : memref<1x2x2x2x32xbf16, strided<[512, 256, 128, 64, 1]>>) amax(%amax) outs(%o : memref<1x2x2x2x32xbf16>)
  return
}
