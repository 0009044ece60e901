// conv3d-lower-depthwise: a depthwise memref convolution becomes a parallel
// loop nest over (n, do, ho, W blocks, channel vectors): per window row
// inside the input, each distinct input vector is loaded once (W block 4,
// S = 3: 6 vectors for 12 FMAs) and each tap vector once; the epilogue
// before a 16-byte vector store. Convolutions the depthwise kernel does not
// take, and those a kernel family of the target takes (takesDepthwiseKernel:
// on a GPU target the sm80 kernel's grouped GEMM, on the cpu target every
// one with several channels per group), stay for conv3d-implicit-gemm.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-lower-depthwise=target=sm80 | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -conv3d-lower-depthwise=target=sm90 | FileCheck %s --check-prefix=FMA
// RUN: conv3d-opt %s -split-input-file -conv3d-lower-depthwise | FileCheck %s --check-prefix=CPU
// RUN: not conv3d-opt %s -conv3d-lower-depthwise=target=sm70 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: Cannot find option named 'sm70'
// RUN: not conv3d-opt %s -conv3d-lower-depthwise=w-block=0 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: conv3d-lower-depthwise: w-block must be in [1, 16], got 0

// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[X:.*]]: memref<1x4x6x7x16xbf16>, %[[W:.*]]: memref<3x3x3x1x16xbf16>, %[[B:.*]]: memref<16xf32>, %[[O:.*]]: memref<1x4x6x7x16xbf16>)
// CHECK-NOT: conv3d.conv
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = ({{.*}}) to (%c1{{.*}}, %c4{{.*}}, %c6{{.*}}, %c2{{.*}}, %c2{{.*}})
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-3: vector.load %[[W]]
// CHECK-NOT: vector.load %[[W]]
// CHECK: scf.yield
// CHECK: vector.load %[[B]]
// CHECK: vector.store %{{.*}}, %[[O]]{{.*}} {alignment = 16 : i64} : memref<1x4x6x7x16xbf16>, vector<8xbf16>
func.func @depthwise(%x: memref<1x4x6x7x16xbf16>, %w: memref<3x3x3x1x16xbf16>, %b: memref<16xf32>, %o: memref<1x4x6x7x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x7x16xbf16>, memref<3x3x3x1x16xbf16>) bias(%b : memref<16xf32>) outs(%o : memref<1x4x6x7x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 16 activation = relu
  return
}

// -----

// The input vectors of one window row: offsets 0..5 of the W block.
// CHECK-LABEL: func.func @row_loads
// CHECK: scf.if
// CHECK-COUNT-6: vector.load %arg0
// CHECK-NOT: vector.load %arg0
// FMA-LABEL: func.func @row_loads
// FMA-COUNT-12: vector.fma
// FMA-NOT: vector.fma
func.func @row_loads(%x: memref<1x4x6x8x16xf32>, %w: memref<1x1x3x1x16xf32>, %o: memref<1x4x6x8x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x8x16xf32>, memref<1x1x3x1x16xf32>) outs(%o : memref<1x4x6x8x16xf32>) overwrite padding = [0, 0, 0, 0, 1, 1] groups = 16
  return
}

// -----

// A channel multiplier (F = 2C) and two channels per group: vectors of one
// group's filters, the group's
// channels broadcast against the taps' filter vectors (f32: vectors of 2
// here, F/G = 2 filters a group). On the cpu target (the CPU pipeline's
// implicit GEMM) the second is left to the implicit GEMM; a dense
// convolution always is.
// CHECK-LABEL: func.func @grouped
// FMA-LABEL: func.func @grouped
// CHECK: scf.parallel {{.*}} to (%c1{{.*}}, %c4{{.*}}, %c6{{.*}}, %c2{{.*}}, %c8{{.*}})
// CHECK: vector.broadcast %{{.*}} : f32 to vector<2xf32>
// CHECK: scf.parallel {{.*}} to (%c1{{.*}}, %c4{{.*}}, %c6{{.*}}, %c2{{.*}}, %c4{{.*}})
// CHECK: vector.load %arg0{{.*}} : memref<1x4x6x6x8xf32>, vector<2xf32>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<2xf32>
// CHECK: conv3d.conv ins(%arg0, %arg5 : memref<1x4x6x6x8xf32>, memref<3x3x3x8x8xf32>) outs(%arg6 : memref<1x4x6x6x8xf32>) padding = [1, 1, 1, 1, 1, 1]{{$}}
// CPU-LABEL: func.func @grouped
// CPU: scf.parallel
// CPU-NOT: scf.parallel
// CPU: conv3d.conv {{.*}} groups = 4
// CPU: conv3d.conv {{.*}} padding = [1, 1, 1, 1, 1, 1]{{$}}
func.func @grouped(%x: memref<1x4x6x6x8xf32>, %w: memref<3x3x3x1x16xf32>, %o: memref<1x4x6x6x16xf32>,
                   %w2: memref<3x3x3x2x8xf32>, %o2: memref<1x4x6x6x8xf32>,
                   %w3: memref<3x3x3x8x8xf32>, %o3: memref<1x4x6x6x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<3x3x3x1x16xf32>) outs(%o : memref<1x4x6x6x16xf32>) padding = [1, 1, 1, 1, 1, 1] groups = 8
  conv3d.conv ins(%x, %w2 : memref<1x4x6x6x8xf32>, memref<3x3x3x2x8xf32>) outs(%o2 : memref<1x4x6x6x8xf32>) padding = [1, 1, 1, 1, 1, 1] groups = 4
  conv3d.conv ins(%x, %w3 : memref<1x4x6x6x8xf32>, memref<3x3x3x8x8xf32>) outs(%o3 : memref<1x4x6x6x8xf32>) padding = [1, 1, 1, 1, 1, 1]
  return
}

// -----

// Groups of 8 channels and 8 filters are the sm80 kernel's grouped GEMM on
// every GPU target (left here); 4 channels a group stay the depthwise
// kernel's, as do 8 channels with 4 filters a group.
// CHECK-LABEL: func.func @grouped_gemm
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: conv3d.conv {{.*}} groups = 2
// CHECK-NOT: conv3d.conv
// FMA-LABEL: func.func @grouped_gemm
// FMA: vector.fma
// FMA: conv3d.conv {{.*}} groups = 2
// CPU-LABEL: func.func @grouped_gemm
// CPU-NOT: scf.parallel
func.func @grouped_gemm(%x: memref<1x4x6x6x16xbf16>, %w4: memref<3x3x3x4x16xbf16>, %w8: memref<3x3x3x8x8xbf16>, %o8: memref<1x4x6x6x8xbf16>, %w: memref<3x3x3x8x16xbf16>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w4 : memref<1x4x6x6x16xbf16>, memref<3x3x3x4x16xbf16>) outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 4
  conv3d.conv ins(%x, %w8 : memref<1x4x6x6x16xbf16>, memref<3x3x3x8x8xbf16>) outs(%o8 : memref<1x4x6x6x8xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 2
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x8x16xbf16>) outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 2
  return
}
