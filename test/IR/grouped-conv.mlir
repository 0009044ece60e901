// conv3d.conv's `groups` clause: printed after `padding` when not 1, parsed
// in any position among the clauses, omitted at its default. The filter's
// channel dimension is C/groups (one channel for a depthwise convolution).
//
// RUN: conv3d-opt %s | FileCheck %s
// RUN: conv3d-opt %s | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s -mlir-print-op-generic | conv3d-opt | FileCheck %s

// CHECK-LABEL: func.func @depthwise
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x1x8xbf16>) outs(%{{.*}} : tensor<1x4x6x6x8xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 8 activation = relu -> tensor<1x4x6x6x8xbf16>
func.func @depthwise(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<3x3x3x1x8xbf16>,
                     %o: tensor<1x4x6x6x8xbf16>) -> tensor<1x4x6x6x8xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x1x8xbf16>)
         outs(%o : tensor<1x4x6x6x8xbf16>) activation = relu groups = 8
         overwrite padding = [1, 1, 1, 1, 1, 1] -> tensor<1x4x6x6x8xbf16>
  return %0 : tensor<1x4x6x6x8xbf16>
}

// Two groups of 4 channels, 6 filters each, FQRSC.
// CHECK-LABEL: func.func @grouped_fqrsc
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : memref<2x4x6x6x8xf32>, memref<12x1x3x3x4xf32>) outs(%{{.*}} : memref<2x4x4x4x12xf32>) groups = 2 filter_layout = fqrsc{{$}}
func.func @grouped_fqrsc(%x: memref<2x4x6x6x8xf32>, %w: memref<12x1x3x3x4xf32>,
                         %o: memref<2x4x4x4x12xf32>) {
  conv3d.conv ins(%x, %w : memref<2x4x6x6x8xf32>, memref<12x1x3x3x4xf32>)
    outs(%o : memref<2x4x4x4x12xf32>) filter_layout = fqrsc groups = 2
  return
}

// groups = 1 is the default and is not printed.
// CHECK-LABEL: func.func @dense
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x3x3x3x4xf32>, tensor<1x1x1x4x4xf32>) outs(%{{.*}} : tensor<1x3x3x3x4xf32>) -> tensor<1x3x3x3x4xf32>{{$}}
func.func @dense(%x: tensor<1x3x3x3x4xf32>, %w: tensor<1x1x1x4x4xf32>,
                 %o: tensor<1x3x3x3x4xf32>) -> tensor<1x3x3x3x4xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x3x3x3x4xf32>, tensor<1x1x1x4x4xf32>)
         outs(%o : tensor<1x3x3x3x4xf32>) groups = 1 -> tensor<1x3x3x3x4xf32>
  return %0 : tensor<1x3x3x3x4xf32>
}
