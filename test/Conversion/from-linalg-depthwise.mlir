// Import of linalg's depthwise 3-D convolutions as grouped conv3d.conv
// (groups = C): the filter gains its one channel per group by a reshape,
// a channel multiplier M folds into F = C*M (filter f = c*M + m reads
// channel c, which is group f / M), NCDHW operands are transposed as for
// linalg.conv_3d_ncdhw_fcdhw, and zero tensor.pad producers fold into the
// padding.
//
// RUN: conv3d-opt %s -conv3d-from-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @ndhwc_dhwc
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x6x8x8x4xbf16>, %[[W:.*]]: tensor<3x3x3x4xbf16>, %[[O:.*]]: tensor<1x6x3x8x4xf32>)
//       CHECK:   %[[W5:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [3, 3, 3, 1, 4] : tensor<3x3x3x4xbf16> into tensor<3x3x3x1x4xbf16>
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W5]] : tensor<1x6x8x8x4xbf16>, tensor<3x3x3x1x4xbf16>) outs(%[[O]] : tensor<1x6x3x8x4xf32>) strides = [1, 2, 1] padding = [1, 1, 0, 0, 1, 1] groups = 4 -> tensor<1x6x3x8x4xf32>
//       CHECK:   return %[[R]]
func.func @ndhwc_dhwc(%x: tensor<1x6x8x8x4xbf16>, %w: tensor<3x3x3x4xbf16>,
                      %o: tensor<1x6x3x8x4xf32>) -> tensor<1x6x3x8x4xf32> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 1, 0, 1, 0] high[0, 1, 0, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %e: index):
    tensor.yield %zero : bf16
  } : tensor<1x6x8x8x4xbf16> to tensor<1x8x8x10x4xbf16>
  %0 = linalg.depthwise_conv_3d_ndhwc_dhwc
         {dilations = dense<1> : tensor<3xi64>, strides = dense<[1, 2, 1]> : tensor<3xi64>}
         ins(%p, %w : tensor<1x8x8x10x4xbf16>, tensor<3x3x3x4xbf16>)
         outs(%o : tensor<1x6x3x8x4xf32>) -> tensor<1x6x3x8x4xf32>
  return %0 : tensor<1x6x3x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @ndhwc_dhwcm
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x6x6x6x4xf32>, %[[W:.*]]: tensor<3x3x3x4x2xf32>, %[[O:.*]]: tensor<1x4x4x4x4x2xf32>)
//       CHECK:   %[[WF:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<3x3x3x4x2xf32> into tensor<3x3x3x8xf32>
//       CHECK:   %[[W5:.*]] = tensor.expand_shape %[[WF]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [3, 3, 3, 1, 8] : tensor<3x3x3x8xf32> into tensor<3x3x3x1x8xf32>
//       CHECK:   %[[OF:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0], [1], [2], [3], [4, 5]] : tensor<1x4x4x4x4x2xf32> into tensor<1x4x4x4x8xf32>
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W5]] : tensor<1x6x6x6x4xf32>, tensor<3x3x3x1x8xf32>) outs(%[[OF]] : tensor<1x4x4x4x8xf32>) groups = 4 -> tensor<1x4x4x4x8xf32>
//       CHECK:   %[[RE:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2], [3], [4, 5]] output_shape [1, 4, 4, 4, 4, 2] : tensor<1x4x4x4x8xf32> into tensor<1x4x4x4x4x2xf32>
//       CHECK:   return %[[RE]]
func.func @ndhwc_dhwcm(%x: tensor<1x6x6x6x4xf32>, %w: tensor<3x3x3x4x2xf32>,
                       %o: tensor<1x4x4x4x4x2xf32>) -> tensor<1x4x4x4x4x2xf32> {
  %0 = linalg.depthwise_conv_3d_ndhwc_dhwcm
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x2xf32>)
         outs(%o : tensor<1x4x4x4x4x2xf32>) -> tensor<1x4x4x4x4x2xf32>
  return %0 : tensor<1x4x4x4x4x2xf32>
}

// -----

// CHECK-LABEL: func.func @ncdhw_cdhw
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x4x6x6x6xf16>, %[[W:.*]]: tensor<4x3x3x3xf16>, %[[O:.*]]: tensor<2x4x4x2x4xf16>)
//       CHECK:   %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4x6x6x6xf16>) outs(%{{.*}} : tensor<2x6x6x6x4xf16>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[W5:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [4, 3, 3, 3, 1] : tensor<4x3x3x3xf16> into tensor<4x3x3x3x1xf16>
//       CHECK:   %[[OT:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x4x2x4xf16>) outs(%{{.*}} : tensor<2x4x2x4x4xf16>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[XT]], %[[W5]] : tensor<2x6x6x6x4xf16>, tensor<4x3x3x3x1xf16>) outs(%[[OT]] : tensor<2x4x2x4x4xf16>) dilations = [1, 2, 1] groups = 4 filter_layout = fqrsc -> tensor<2x4x2x4x4xf16>
//       CHECK:   %[[RT:.*]] = linalg.transpose ins(%[[R]] : tensor<2x4x2x4x4xf16>) outs(%[[O]] : tensor<2x4x4x2x4xf16>) permutation = [0, 4, 1, 2, 3]
//       CHECK:   return %[[RT]]
func.func @ncdhw_cdhw(%x: tensor<2x4x6x6x6xf16>, %w: tensor<4x3x3x3xf16>,
                      %o: tensor<2x4x4x2x4xf16>) -> tensor<2x4x4x2x4xf16> {
  %0 = linalg.depthwise_conv_3d_ncdhw_cdhw
         {dilations = dense<[1, 2, 1]> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
         ins(%x, %w : tensor<2x4x6x6x6xf16>, tensor<4x3x3x3xf16>)
         outs(%o : tensor<2x4x4x2x4xf16>) -> tensor<2x4x4x2x4xf16>
  return %0 : tensor<2x4x4x2x4xf16>
}

// -----

// Dynamic batch and depth stay dynamic.
// CHECK-LABEL: func.func @dynamic_batch
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<?x?x6x6x4xf32>, tensor<1x3x3x1x4xf32>) outs(%{{.*}} : tensor<?x?x4x4x4xf32>) groups = 4 -> tensor<?x?x4x4x4xf32>
func.func @dynamic_batch(%x: tensor<?x?x6x6x4xf32>, %w: tensor<1x3x3x4xf32>,
                         %o: tensor<?x?x4x4x4xf32>) -> tensor<?x?x4x4x4xf32> {
  %0 = linalg.depthwise_conv_3d_ndhwc_dhwc
         ins(%x, %w : tensor<?x?x6x6x4xf32>, tensor<1x3x3x4xf32>)
         outs(%o : tensor<?x?x4x4x4xf32>) -> tensor<?x?x4x4x4xf32>
  return %0 : tensor<?x?x4x4x4xf32>
}
