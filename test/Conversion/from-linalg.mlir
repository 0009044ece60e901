// Import of linalg's named 3-D convolutions as conv3d.conv: layouts, element
// types, strides and dilations, zero tensor.pad producers folded into the
// padding attribute and zero linalg.fill destinations folded into
// `overwrite`. The last splits are convolutions that must stay untouched.
//
// RUN: conv3d-opt %s -conv3d-from-linalg -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// linalg.conv_3d_ndhwc_dhwcf
//===----------------------------------------------------------------------===//

// bf16 operands, f32 destination, default strides and dilations: a plain
// accumulating conv3d.conv on the same operands.
// CHECK-LABEL: func.func @ndhwc_bf16_f32
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x6x8x8x4xbf16>, %[[W:.*]]: tensor<3x3x3x4x8xbf16>, %[[O:.*]]: tensor<1x4x6x6x8xf32>)
//   CHECK-NOT:   linalg.conv_3d
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x6x8x8x4xbf16>, tensor<3x3x3x4x8xbf16>) outs(%[[O]] : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>{{$}}
//       CHECK:   return %[[R]]
func.func @ndhwc_bf16_f32(%x: tensor<1x6x8x8x4xbf16>, %w: tensor<3x3x3x4x8xbf16>,
                          %o: tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
         ins(%x, %w : tensor<1x6x8x8x4xbf16>, tensor<3x3x3x4x8xbf16>)
         outs(%o : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return %0 : tensor<1x4x6x6x8xf32>
}

// -----

// f32 throughout, without attributes (linalg's defaults are unit strides and
// dilations).
// CHECK-LABEL: func.func @ndhwc_f32_no_attrs
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<2x5x5x5x3xf32>, tensor<2x2x2x3x7xf32>) outs(%{{.*}} : tensor<2x4x4x4x7xf32>) -> tensor<2x4x4x4x7xf32>{{$}}
func.func @ndhwc_f32_no_attrs(%x: tensor<2x5x5x5x3xf32>, %w: tensor<2x2x2x3x7xf32>,
                              %o: tensor<2x4x4x4x7xf32>) -> tensor<2x4x4x4x7xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<2x5x5x5x3xf32>, tensor<2x2x2x3x7xf32>)
         outs(%o : tensor<2x4x4x4x7xf32>) -> tensor<2x4x4x4x7xf32>
  return %0 : tensor<2x4x4x4x7xf32>
}

// -----

// Strides and dilations carry over per axis (d, h, w).
// D: (9 - 5) / 1 + 1 = 5; H: (9 - 3) / 2 + 1 = 4; W: (10 - 3) / 3 + 1 = 3.
// CHECK-LABEL: func.func @ndhwc_strides_dilations
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x9x9x10x4xf32>, tensor<3x3x3x4x8xf32>) outs(%{{.*}} : tensor<1x5x4x3x8xf32>)
//  CHECK-SAME:     strides = [1, 2, 3] dilations = [2, 1, 1] -> tensor<1x5x4x3x8xf32>{{$}}
func.func @ndhwc_strides_dilations(%x: tensor<1x9x9x10x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                                   %o: tensor<1x5x4x3x8xf32>) -> tensor<1x5x4x3x8xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         {dilations = dense<[2, 1, 1]> : tensor<3xi64>, strides = dense<[1, 2, 3]> : tensor<3xi64>}
         ins(%x, %w : tensor<1x9x9x10x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x5x4x3x8xf32>) -> tensor<1x5x4x3x8xf32>
  return %0 : tensor<1x5x4x3x8xf32>
}

// -----

// Causal temporal padding (2 before, 0 after along D) and symmetric spatial
// padding materialized by a front end, with a zero-filled tensor.empty
// destination: the pad becomes the padding attribute, the fill `overwrite`,
// and neither is left.
// CHECK-LABEL: func.func @ndhwc_causal_pad_zero_fill
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x8x8x4xbf16>, %[[W:.*]]: tensor<3x3x3x4x8xbf16>)
//   CHECK-NOT:   tensor.pad
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x8x8x8xf32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x8x8x4xbf16>, tensor<3x3x3x4x8xbf16>) outs(%[[E]] : tensor<1x4x8x8x8xf32>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x8xf32>{{$}}
//       CHECK:   return %[[R]]
func.func @ndhwc_causal_pad_zero_fill(%x: tensor<1x4x8x8x4xbf16>, %w: tensor<3x3x3x4x8xbf16>)
    -> tensor<1x4x8x8x8xf32> {
  %zero = arith.constant 0.0 : bf16
  %fzero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : bf16
  } : tensor<1x4x8x8x4xbf16> to tensor<1x6x10x10x4xbf16>
  %e = tensor.empty() : tensor<1x4x8x8x8xf32>
  %f = linalg.fill ins(%fzero : f32) outs(%e : tensor<1x4x8x8x8xf32>) -> tensor<1x4x8x8x8xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
         ins(%p, %w : tensor<1x6x10x10x4xbf16>, tensor<3x3x3x4x8xbf16>)
         outs(%f : tensor<1x4x8x8x8xf32>) -> tensor<1x4x8x8x8xf32>
  return %0 : tensor<1x4x8x8x8xf32>
}

// -----

// Asymmetric padding together with strides and dilations; the destination is
// a function argument, so the conv accumulates (no overwrite).
// D: (3+1+2 - 3)/1 + 1 = 4; H: (7+0+3 - 5)/2 + 1 = 3; W: (6+2+1 - 3)/3 + 1 = 3.
// CHECK-LABEL: func.func @ndhwc_asymmetric_pad_strided
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x3x7x6x2xf32>, %[[W:.*]]: tensor<3x3x3x2x5xf32>, %[[O:.*]]: tensor<1x4x3x3x5xf32>)
//   CHECK-NOT:   tensor.pad
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x3x7x6x2xf32>, tensor<3x3x3x2x5xf32>) outs(%[[O]] : tensor<1x4x3x3x5xf32>)
//  CHECK-SAME:     strides = [1, 2, 3] dilations = [1, 2, 1] padding = [1, 2, 0, 3, 2, 1] -> tensor<1x4x3x3x5xf32>{{$}}
func.func @ndhwc_asymmetric_pad_strided(%x: tensor<1x3x7x6x2xf32>, %w: tensor<3x3x3x2x5xf32>,
                                        %o: tensor<1x4x3x3x5xf32>) -> tensor<1x4x3x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 0, 2, 0] high[0, 2, 3, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x3x7x6x2xf32> to tensor<1x6x10x9x2xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         {dilations = dense<[1, 2, 1]> : tensor<3xi64>, strides = dense<[1, 2, 3]> : tensor<3xi64>}
         ins(%p, %w : tensor<1x6x10x9x2xf32>, tensor<3x3x3x2x5xf32>)
         outs(%o : tensor<1x4x3x3x5xf32>) -> tensor<1x4x3x3x5xf32>
  return %0 : tensor<1x4x3x3x5xf32>
}

// -----

// A negative zero is a zero padding value too (x * -0 adds nothing).
// CHECK-LABEL: func.func @ndhwc_negative_zero_pad
//   CHECK-NOT:   tensor.pad
//       CHECK:   conv3d.conv {{.*}} padding = [0, 0, 1, 1, 0, 0] -> tensor<1x4x6x4x8xbf16>{{$}}
func.func @ndhwc_negative_zero_pad(%x: tensor<1x6x6x6x4xbf16>, %w: tensor<3x3x3x4x8xbf16>,
                                   %o: tensor<1x4x6x4x8xbf16>) -> tensor<1x4x6x4x8xbf16> {
  %zero = arith.constant -0.0 : bf16
  %p = tensor.pad %x low[0, 0, 1, 0, 0] high[0, 0, 1, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : bf16
  } : tensor<1x6x6x6x4xbf16> to tensor<1x6x8x6x4xbf16>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%p, %w : tensor<1x6x8x6x4xbf16>, tensor<3x3x3x4x8xbf16>)
         outs(%o : tensor<1x4x6x4x8xbf16>) -> tensor<1x4x6x4x8xbf16>
  return %0 : tensor<1x4x6x4x8xbf16>
}

// -----

// A non-zero fill of the destination is a real initial value: the conv
// accumulates onto it and the fill stays.
// CHECK-LABEL: func.func @ndhwc_nonzero_fill
//       CHECK:   %[[F:.*]] = linalg.fill
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>) outs(%[[F]] : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>{{$}}
func.func @ndhwc_nonzero_fill(%x: tensor<1x6x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>)
    -> tensor<1x4x4x4x8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4x8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%f : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// A dynamic batch (with static channels and window) is fine.
// CHECK-LABEL: func.func @ndhwc_dynamic_batch
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<?x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>) outs(%{{.*}} : tensor<?x4x4x4x8xf32>) -> tensor<?x4x4x4x8xf32>
func.func @ndhwc_dynamic_batch(%x: tensor<?x6x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                               %o: tensor<?x4x4x4x8xf32>) -> tensor<?x4x4x4x8xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<?x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<?x4x4x4x8xf32>) -> tensor<?x4x4x4x8xf32>
  return %0 : tensor<?x4x4x4x8xf32>
}

//===----------------------------------------------------------------------===//
// linalg.conv_3d_ncdhw_fcdhw
//===----------------------------------------------------------------------===//

// -----

// Channels-first: the input goes to NDHWC and the filter to FQRSC (only C
// moves last), the destination to NDHWF; the result is transposed back into
// the original destination.
// CHECK-LABEL: func.func @ncdhw_basic
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x8x8xf32>, %[[W:.*]]: tensor<8x4x3x3x3xf32>, %[[O:.*]]: tensor<1x8x4x6x6xf32>)
//       CHECK:   %[[XE:.*]] = tensor.empty() : tensor<1x6x8x8x4xf32>
//       CHECK:   %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<1x4x6x8x8xf32>) outs(%[[XE]] : tensor<1x6x8x8x4xf32>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[WE:.*]] = tensor.empty() : tensor<8x3x3x3x4xf32>
//       CHECK:   %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<8x4x3x3x3xf32>) outs(%[[WE]] : tensor<8x3x3x3x4xf32>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[OE:.*]] = tensor.empty() : tensor<1x4x6x6x8xf32>
//       CHECK:   %[[OT:.*]] = linalg.transpose ins(%[[O]] : tensor<1x8x4x6x6xf32>) outs(%[[OE]] : tensor<1x4x6x6x8xf32>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[C:.*]] = conv3d.conv ins(%[[XT]], %[[WT]] : tensor<1x6x8x8x4xf32>, tensor<8x3x3x3x4xf32>) outs(%[[OT]] : tensor<1x4x6x6x8xf32>) filter_layout = fqrsc -> tensor<1x4x6x6x8xf32>{{$}}
//       CHECK:   %[[R:.*]] = linalg.transpose ins(%[[C]] : tensor<1x4x6x6x8xf32>) outs(%[[O]] : tensor<1x8x4x6x6xf32>) permutation = [0, 4, 1, 2, 3]
//       CHECK:   return %[[R]]
//   CHECK-NOT:   linalg.conv_3d
func.func @ncdhw_basic(%x: tensor<1x4x6x8x8xf32>, %w: tensor<8x4x3x3x3xf32>,
                       %o: tensor<1x8x4x6x6xf32>) -> tensor<1x8x4x6x6xf32> {
  %0 = linalg.conv_3d_ncdhw_fcdhw
         {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
         ins(%x, %w : tensor<1x4x6x8x8xf32>, tensor<8x4x3x3x3xf32>)
         outs(%o : tensor<1x8x4x6x6xf32>) -> tensor<1x8x4x6x6xf32>
  return %0 : tensor<1x8x4x6x6xf32>
}

// -----

// Channels-first with a zero pad of dims 2, 3, 4 (D, H, W), strides and
// dilations, bf16 operands and a zero-filled f32 destination: the pad folds,
// the destination is a fresh NDHWF tensor.empty with `overwrite` (no
// transpose of the zeros), and the result goes back to NCDHW into the fill's
// destination (the fill itself is dead).
// D: (3+2+0 - 3)/1 + 1 = 3; H: (6+1+1 - 5)/1 + 1 = 4; W: (7+1+1 - 3)/2 + 1 = 4.
// CHECK-LABEL: func.func @ncdhw_pad_zero_fill
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3x3x6x7xbf16>, %[[W:.*]]: tensor<5x3x3x3x3xbf16>)
//   CHECK-NOT:   tensor.pad
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[F:.*]] = tensor.empty() : tensor<2x5x3x4x4xf32>
//       CHECK:   %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x3x6x7xbf16>) outs(%{{.*}} : tensor<2x3x6x7x3xbf16>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<5x3x3x3x3xbf16>) outs(%{{.*}} : tensor<5x3x3x3x3xbf16>) permutation = [0, 2, 3, 4, 1]
//       CHECK:   %[[OE:.*]] = tensor.empty() : tensor<2x3x4x4x5xf32>
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[C:.*]] = conv3d.conv ins(%[[XT]], %[[WT]] : tensor<2x3x6x7x3xbf16>, tensor<5x3x3x3x3xbf16>) outs(%[[OE]] : tensor<2x3x4x4x5xf32>) overwrite
//  CHECK-SAME:     strides = [1, 1, 2] dilations = [1, 2, 1] padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<2x3x4x4x5xf32>{{$}}
//       CHECK:   %[[R:.*]] = linalg.transpose ins(%[[C]] : tensor<2x3x4x4x5xf32>) outs(%[[F]] : tensor<2x5x3x4x4xf32>) permutation = [0, 4, 1, 2, 3]
//       CHECK:   return %[[R]]
func.func @ncdhw_pad_zero_fill(%x: tensor<2x3x3x6x7xbf16>, %w: tensor<5x3x3x3x3xbf16>)
    -> tensor<2x5x3x4x4xf32> {
  %zero = arith.constant 0.0 : bf16
  %fzero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 1, 1] high[0, 0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : bf16
  } : tensor<2x3x3x6x7xbf16> to tensor<2x3x5x8x9xbf16>
  %e = tensor.empty() : tensor<2x5x3x4x4xf32>
  %f = linalg.fill ins(%fzero : f32) outs(%e : tensor<2x5x3x4x4xf32>) -> tensor<2x5x3x4x4xf32>
  %0 = linalg.conv_3d_ncdhw_fcdhw
         {dilations = dense<[1, 2, 1]> : tensor<3xi64>, strides = dense<[1, 1, 2]> : tensor<3xi64>}
         ins(%p, %w : tensor<2x3x5x8x9xbf16>, tensor<5x3x3x3x3xbf16>)
         outs(%f : tensor<2x5x3x4x4xf32>) -> tensor<2x5x3x4x4xf32>
  return %0 : tensor<2x5x3x4x4xf32>
}

// -----

// Channels-first with a dynamic batch: the transposes' destinations take
// the batch size from tensor.dim.
// CHECK-LABEL: func.func @ncdhw_dynamic_batch
//  CHECK-SAME:   (%[[X:.*]]: tensor<?x4x6x8x8xf32>
//       CHECK:   %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x6x8x8xf32>
//       CHECK:   tensor.empty(%[[D]]) : tensor<?x6x8x8x4xf32>
//       CHECK:   conv3d.conv {{.*}} filter_layout = fqrsc -> tensor<?x4x6x6x8xf32>
func.func @ncdhw_dynamic_batch(%x: tensor<?x4x6x8x8xf32>, %w: tensor<8x4x3x3x3xf32>,
                               %o: tensor<?x8x4x6x6xf32>) -> tensor<?x8x4x6x6xf32> {
  %0 = linalg.conv_3d_ncdhw_fcdhw
         ins(%x, %w : tensor<?x4x6x8x8xf32>, tensor<8x4x3x3x3xf32>)
         outs(%o : tensor<?x8x4x6x6xf32>) -> tensor<?x8x4x6x6xf32>
  return %0 : tensor<?x8x4x6x6xf32>
}

//===----------------------------------------------------------------------===//
// Convolutions that stay untouched
//===----------------------------------------------------------------------===//

// -----

// Integer element types.
// CHECK-LABEL: func.func @integer_types
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
func.func @integer_types(%x: tensor<1x6x6x6x4xi8>, %w: tensor<3x3x3x4x8xi8>,
                         %o: tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xi8>, tensor<3x3x3x4x8xi8>)
         outs(%o : tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32>
  return %0 : tensor<1x4x4x4x8xi32>
}

// -----

// Integer channels-first.
// CHECK-LABEL: func.func @integer_types_ncdhw
//   CHECK-NOT:   conv3d.conv
//   CHECK-NOT:   linalg.transpose
//       CHECK:   linalg.conv_3d_ncdhw_fcdhw
//   CHECK-NOT:   conv3d.conv
func.func @integer_types_ncdhw(%x: tensor<1x4x6x6x6xi32>, %w: tensor<8x4x3x3x3xi32>,
                               %o: tensor<1x8x4x4x4xi32>) -> tensor<1x8x4x4x4xi32> {
  %0 = linalg.conv_3d_ncdhw_fcdhw
         ins(%x, %w : tensor<1x4x6x6x6xi32>, tensor<8x4x3x3x3xi32>)
         outs(%o : tensor<1x8x4x4x4xi32>) -> tensor<1x8x4x4x4xi32>
  return %0 : tensor<1x8x4x4x4xi32>
}

// -----

// Input and filter of different float types.
// CHECK-LABEL: func.func @mixed_input_filter_types
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
func.func @mixed_input_filter_types(%x: tensor<1x6x6x6x4xbf16>, %w: tensor<3x3x3x4x8xf32>,
                                    %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xbf16>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// A destination neither f32 nor the input type (f32 -> bf16).
// CHECK-LABEL: func.func @unsupported_output_type
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
func.func @unsupported_output_type(%x: tensor<1x6x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                                   %o: tensor<1x4x4x4x8xbf16>) -> tensor<1x4x4x4x8xbf16> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xbf16>) -> tensor<1x4x4x4x8xbf16>
  return %0 : tensor<1x4x4x4x8xbf16>
}

// -----

// A non-zero padding value is not a convolution padding: the pad stays and
// the convolution reads the padded tensor, without a padding attribute.
// CHECK-LABEL: func.func @nonzero_pad_value
//       CHECK:   %[[ONE:.*]] = arith.constant 1.0
//       CHECK:   %[[P:.*]] = tensor.pad {{.*}} low[0, 2, 0, 0, 0] high[0, 0, 0, 0, 0]
//       CHECK:     tensor.yield %[[ONE]]
//       CHECK:   conv3d.conv ins(%[[P]], %{{.*}} : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>) outs(%{{.*}} : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>{{$}}
func.func @nonzero_pad_value(%x: tensor<1x4x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                             %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 2, 0, 0, 0] high[0, 0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %one : f32
  } : tensor<1x4x6x6x4xf32> to tensor<1x6x6x6x4xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%p, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// A padding value only known at run time is not folded either.
// CHECK-LABEL: func.func @runtime_pad_value
//  CHECK-SAME:   %[[V:[^:]*]]: f32
//       CHECK:   %[[P:.*]] = tensor.pad
//       CHECK:     tensor.yield %[[V]]
//       CHECK:   conv3d.conv ins(%[[P]], %{{.*}} : tensor<1x6x6x6x4xf32>, {{.*}} -> tensor<1x4x4x4x8xf32>{{$}}
func.func @runtime_pad_value(%x: tensor<1x4x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                             %o: tensor<1x4x4x4x8xf32>, %v: f32) -> tensor<1x4x4x4x8xf32> {
  %p = tensor.pad %x low[0, 2, 0, 0, 0] high[0, 0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %v : f32
  } : tensor<1x4x6x6x4xf32> to tensor<1x6x6x6x4xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%p, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// A zero pad that also pads the channel dimension: the convolution is still
// imported, on the padded tensor, with no padding attribute.
// CHECK-LABEL: func.func @pad_of_channels
//       CHECK:   %[[P:.*]] = tensor.pad {{.*}} low[0, 1, 1, 1, 0] high[0, 1, 1, 1, 2]
//       CHECK:   conv3d.conv ins(%[[P]], %{{.*}} : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>) outs(%{{.*}} : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>{{$}}
func.func @pad_of_channels(%x: tensor<1x4x4x4x2xf32>, %w: tensor<3x3x3x4x8xf32>,
                           %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 1, 0] high[0, 1, 1, 1, 2] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4x2xf32> to tensor<1x6x6x6x4xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%p, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// The same with a pad of the batch dimension, channels-first.
// CHECK-LABEL: func.func @pad_of_batch_ncdhw
//       CHECK:   %[[P:.*]] = tensor.pad {{.*}} low[1, 0, 1, 1, 1] high[0, 0, 1, 1, 1]
//       CHECK:   %[[XT:.*]] = linalg.transpose ins(%[[P]] : tensor<2x4x6x6x6xf32>)
//       CHECK:   conv3d.conv ins(%[[XT]], %{{.*}} : tensor<2x6x6x6x4xf32>, tensor<8x3x3x3x4xf32>) outs(%{{.*}} : tensor<2x4x4x4x8xf32>) filter_layout = fqrsc -> tensor<2x4x4x4x8xf32>{{$}}
func.func @pad_of_batch_ncdhw(%x: tensor<1x4x4x4x4xf32>, %w: tensor<8x4x3x3x3xf32>,
                              %o: tensor<2x8x4x4x4xf32>) -> tensor<2x8x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 0, 1, 1, 1] high[0, 0, 1, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4x4xf32> to tensor<2x4x6x6x6xf32>
  %0 = linalg.conv_3d_ncdhw_fcdhw
         ins(%p, %w : tensor<2x4x6x6x6xf32>, tensor<8x4x3x3x3xf32>)
         outs(%o : tensor<2x8x4x4x4xf32>) -> tensor<2x8x4x4x4xf32>
  return %0 : tensor<2x8x4x4x4xf32>
}

// -----

// A `nofold` pad is kept as it is.
// CHECK-LABEL: func.func @nofold_pad
//       CHECK:   %[[P:.*]] = tensor.pad {{.*}} nofold
//       CHECK:   conv3d.conv ins(%[[P]], %{{.*}} : tensor<1x6x6x6x4xf32>, {{.*}} -> tensor<1x4x4x4x8xf32>{{$}}
func.func @nofold_pad(%x: tensor<1x4x4x4x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                      %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x nofold low[0, 1, 1, 1, 0] high[0, 1, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4x4xf32> to tensor<1x6x6x6x4xf32>
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%p, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// Buffers: only the tensor form is imported.
// CHECK-LABEL: func.func @memref_operands
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf ins(%{{.*}}, %{{.*}} : memref<1x6x6x6x4xf32>, memref<3x3x3x4x8xf32>)
//   CHECK-NOT:   conv3d.conv
func.func @memref_operands(%x: memref<1x6x6x6x4xf32>, %w: memref<3x3x3x4x8xf32>,
                           %o: memref<1x4x4x4x8xf32>) {
  linalg.conv_3d_ndhwc_dhwcf
    ins(%x, %w : memref<1x6x6x6x4xf32>, memref<3x3x3x4x8xf32>)
    outs(%o : memref<1x4x4x4x8xf32>)
  return
}

// -----

// Channels-first buffers.
// CHECK-LABEL: func.func @memref_operands_ncdhw
//   CHECK-NOT:   conv3d.conv
//   CHECK-NOT:   linalg.transpose
//       CHECK:   linalg.conv_3d_ncdhw_fcdhw
//   CHECK-NOT:   conv3d.conv
func.func @memref_operands_ncdhw(%x: memref<1x4x6x6x6xf32>, %w: memref<8x4x3x3x3xf32>,
                                 %o: memref<1x8x4x4x4xf32>) {
  linalg.conv_3d_ncdhw_fcdhw
    ins(%x, %w : memref<1x4x6x6x6xf32>, memref<8x4x3x3x3xf32>)
    outs(%o : memref<1x8x4x4x4xf32>)
  return
}

// -----

// A dynamic filter shape (window and filter count unknown).
// CHECK-LABEL: func.func @dynamic_filter
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
func.func @dynamic_filter(%x: tensor<1x6x6x6x4xf32>, %w: tensor<?x3x3x4x?xf32>,
                          %o: tensor<1x?x4x4x?xf32>) -> tensor<1x?x4x4x?xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<?x3x3x4x?xf32>)
         outs(%o : tensor<1x?x4x4x?xf32>) -> tensor<1x?x4x4x?xf32>
  return %0 : tensor<1x?x4x4x?xf32>
}

// -----

// A dynamic channel count of the input (conv3d.conv takes C from the input,
// and it must be static).
// CHECK-LABEL: func.func @dynamic_input_channels
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
func.func @dynamic_input_channels(%x: tensor<1x6x6x6x?xf32>, %w: tensor<3x3x3x4x8xf32>,
                                  %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x?xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// The same, channels-first.
// CHECK-LABEL: func.func @dynamic_input_channels_ncdhw
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ncdhw_fcdhw
//   CHECK-NOT:   conv3d.conv
func.func @dynamic_input_channels_ncdhw(%x: tensor<1x?x6x6x6xf32>, %w: tensor<8x4x3x3x3xf32>,
                                        %o: tensor<1x8x4x4x4xf32>) -> tensor<1x8x4x4x4xf32> {
  %0 = linalg.conv_3d_ncdhw_fcdhw
         ins(%x, %w : tensor<1x?x6x6x6xf32>, tensor<8x4x3x3x3xf32>)
         outs(%o : tensor<1x8x4x4x4xf32>) -> tensor<1x8x4x4x4xf32>
  return %0 : tensor<1x8x4x4x4xf32>
}

// -----

// linalg accepts an input larger than the output reads (here D = 7 where
// the 4 outputs read 6 planes; with stride 2, D = 9 where 3 outputs read 7);
// conv3d.conv derives the output size from the input, so these stay.
// CHECK-LABEL: func.func @input_larger_than_read
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ndhwc_dhwcf
//   CHECK-NOT:   conv3d.conv
//       CHECK:   linalg.conv_3d_ncdhw_fcdhw
//   CHECK-NOT:   conv3d.conv
func.func @input_larger_than_read(%x: tensor<1x7x6x6x4xf32>, %w: tensor<3x3x3x4x8xf32>,
                                  %o: tensor<1x4x4x4x8xf32>,
                                  %xc: tensor<1x4x9x6x6xf32>, %wc: tensor<8x4x3x3x3xf32>,
                                  %oc: tensor<1x8x3x4x4xf32>)
    -> (tensor<1x4x4x4x8xf32>, tensor<1x8x3x4x4xf32>) {
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x7x6x6x4xf32>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  %1 = linalg.conv_3d_ncdhw_fcdhw
         {dilations = dense<1> : tensor<3xi64>, strides = dense<[2, 1, 1]> : tensor<3xi64>}
         ins(%xc, %wc : tensor<1x4x9x6x6xf32>, tensor<8x4x3x3x3xf32>)
         outs(%oc : tensor<1x8x3x4x4xf32>) -> tensor<1x8x3x4x4xf32>
  return %0, %1 : tensor<1x4x4x4x8xf32>, tensor<1x8x3x4x4xf32>
}
