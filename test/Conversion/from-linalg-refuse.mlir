// With refuse-unconverted (the conv3d pipelines run conv3d-from-linalg
// first with it), a linalg.conv_3d_ndhwc_dhwcf / conv_3d_ncdhw_fcdhw the
// import cannot take is an error naming why, never left to upstream's
// generic lowering (bf16 accumulated in bf16, and far slower); other linalg
// 3-D convolutions, which conv3d does not compute, get a warning. The
// pipelines refuse the same way (last splits). Without the option the same
// convolutions stay untouched (from-linalg.mlir).
//
// RUN: conv3d-opt %s -split-input-file -conv3d-from-linalg=refuse-unconverted=1 -verify-diagnostics
// RUN: not conv3d-opt %s -split-input-file -conv3d-cpu-pipeline 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not conv3d-opt %s -split-input-file -conv3d-graph-pipeline 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: cannot import this convolution into conv3d: conv3d computes bf16, f16 and f32 convolutions whose filter has the input's element type and whose output is f32 or the input's type; this one has a i8 input, a i8 filter and a i32 output

func.func @integer_types(%x: tensor<1x6x6x6x4xi8>, %w: tensor<3x3x3x4x8xi8>,
                         %o: tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32> {
  // expected-error @below {{cannot import this convolution into conv3d: conv3d computes bf16, f16 and f32 convolutions whose filter has the input's element type and whose output is f32 or the input's type; this one has a i8 input, a i8 filter and a i32 output (the conv3d pipelines do not hand a convolution to upstream's generic lowering)}}
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xi8>, tensor<3x3x3x4x8xi8>)
         outs(%o : tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32>
  return %0 : tensor<1x4x4x4x8xi32>
}

// -----

// bf16 in, f16 out (written generically: the named form's region builder
// adds f16 to bf16).
func.func @bf16_to_f16(%x: tensor<1x6x8x8x32xbf16>, %w: tensor<3x3x3x32x16xbf16>,
                       %init: tensor<1x4x6x6x16xf16>) -> tensor<1x4x6x6x16xf16> {
  // expected-error @below {{this one has a bf16 input, a bf16 filter and a f16 output}}
  %y = "linalg.conv_3d_ndhwc_dhwcf"(%x, %w, %init) <{dilations = dense<1> : tensor<3xi64>, operandSegmentSizes = array<i32: 2, 1>, strides = dense<1> : tensor<3xi64>}> ({
  ^bb0(%a: bf16, %b: bf16, %c: f16):
    %a1 = arith.extf %a : bf16 to f32
    %b1 = arith.extf %b : bf16 to f32
    %m = arith.mulf %a1, %b1 : f32
    %m1 = arith.truncf %m : f32 to f16
    %s = arith.addf %c, %m1 : f16
    linalg.yield %s : f16
  }) : (tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>, tensor<1x4x6x6x16xf16>) -> tensor<1x4x6x6x16xf16>
  return %y : tensor<1x4x6x6x16xf16>
}

// -----

func.func @mixed_input_filter_types(%x: tensor<1x6x6x6x4xbf16>, %w: tensor<3x3x3x4x8xf32>,
                                    %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @below {{this one has a bf16 input, a f32 filter and a f32 output}}
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xbf16>, tensor<3x3x3x4x8xf32>)
         outs(%o : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @memref_operands(%x: memref<1x6x6x6x4xf32>, %w: memref<3x3x3x4x8xf32>,
                           %o: memref<1x4x4x4x8xf32>) {
  // expected-error @below {{cannot import this convolution into conv3d: conv3d imports convolutions on tensors, not memrefs (import before bufferization)}}
  linalg.conv_3d_ndhwc_dhwcf
    ins(%x, %w : memref<1x6x6x6x4xf32>, memref<3x3x3x4x8xf32>)
    outs(%o : memref<1x4x4x4x8xf32>)
  return
}

// -----

func.func @dynamic_filter(%x: tensor<1x6x6x6x4xf32>, %w: tensor<?x3x3x4x?xf32>,
                          %o: tensor<1x?x4x4x?xf32>) -> tensor<1x?x4x4x?xf32> {
  // expected-error @below {{its filter shape is dynamic; conv3d needs static window, channel and filter sizes}}
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<?x3x3x4x?xf32>)
         outs(%o : tensor<1x?x4x4x?xf32>) -> tensor<1x?x4x4x?xf32>
  return %0 : tensor<1x?x4x4x?xf32>
}

// -----

func.func @dynamic_input_channels_ncdhw(%x: tensor<1x?x6x6x6xf32>, %w: tensor<8x4x3x3x3xf32>,
                                        %o: tensor<1x8x4x4x4xf32>) -> tensor<1x8x4x4x4xf32> {
  // expected-error @below {{cannot import this convolution into conv3d: channel, filter and window sizes must be static}}
  %0 = linalg.conv_3d_ncdhw_fcdhw
         ins(%x, %w : tensor<1x?x6x6x6xf32>, tensor<8x4x3x3x3xf32>)
         outs(%o : tensor<1x8x4x4x4xf32>) -> tensor<1x8x4x4x4xf32>
  return %0 : tensor<1x8x4x4x4xf32>
}

// -----

func.func @input_larger_than_read(%xc: tensor<1x4x9x6x6xf32>, %wc: tensor<8x4x3x3x3xf32>,
                                  %oc: tensor<1x8x3x4x4xf32>) -> tensor<1x8x3x4x4xf32> {
  // expected-error @below {{its output is 1x3x4x4x8 (NDHWF) where the padded input gives 1x4x4x4x8: conv3d.conv reads the whole input, linalg only what the output needs}}
  %1 = linalg.conv_3d_ncdhw_fcdhw
         {dilations = dense<1> : tensor<3xi64>, strides = dense<[2, 1, 1]> : tensor<3xi64>}
         ins(%xc, %wc : tensor<1x4x9x6x6xf32>, tensor<8x4x3x3x3xf32>)
         outs(%oc : tensor<1x8x3x4x4xf32>) -> tensor<1x8x3x4x4xf32>
  return %1 : tensor<1x8x3x4x4xf32>
}

// -----

// An unbatched 3-D convolution is not a convolution conv3d computes:
// upstream lowers it, with a warning.
func.func @unbatched(%x: tensor<6x6x6xf32>, %w: tensor<3x3x3xf32>,
                     %o: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  // expected-warning @below {{conv3d does not compute linalg.conv_3d (it imports linalg.conv_3d_ndhwc_dhwcf, linalg.conv_3d_ncdhw_fcdhw and the depthwise linalg.depthwise_conv_3d_ndhwc_dhwc, _ncdhw_cdhw and _ndhwc_dhwcm); upstream's generic lowering computes it}}
  %0 = linalg.conv_3d
         ins(%x, %w : tensor<6x6x6xf32>, tensor<3x3x3xf32>)
         outs(%o : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %0 : tensor<4x4x4xf32>
}

// -----

// A depthwise convolution the import cannot express (its output is smaller
// than the input gives) is refused with the reason.
func.func @depthwise_short_output(%x: tensor<1x6x6x6x4xf32>, %w: tensor<3x3x3x4xf32>,
                                  %o: tensor<1x3x4x4x4xf32>) -> tensor<1x3x4x4x4xf32> {
  // expected-error @below {{cannot import this convolution into conv3d: its output is 1x3x4x4x4 (NDHWF) where the padded input gives 1x4x4x4x4: conv3d.conv reads the whole input, linalg only what the output needs (the conv3d pipelines do not hand a convolution to upstream's generic lowering)}}
  %0 = linalg.depthwise_conv_3d_ndhwc_dhwc
         ins(%x, %w : tensor<1x6x6x6x4xf32>, tensor<3x3x3x4xf32>)
         outs(%o : tensor<1x3x4x4x4xf32>) -> tensor<1x3x4x4x4xf32>
  return %0 : tensor<1x3x4x4x4xf32>
}

// -----

// The depthwise import refuses element types as the dense one does, naming
// them (both share the operand checks).
func.func @depthwise_integer_types(%x: tensor<1x6x6x6x4xi8>, %w: tensor<3x3x3x4xi8>,
                                   %o: tensor<1x4x4x4x4xi32>) -> tensor<1x4x4x4x4xi32> {
  // expected-error @below {{cannot import this convolution into conv3d: conv3d computes bf16, f16 and f32 convolutions whose filter has the input's element type and whose output is f32 or the input's type; this one has a i8 input, a i8 filter and a i32 output}}
  %0 = linalg.depthwise_conv_3d_ndhwc_dhwc
         ins(%x, %w : tensor<1x6x6x6x4xi8>, tensor<3x3x3x4xi8>)
         outs(%o : tensor<1x4x4x4x4xi32>) -> tensor<1x4x4x4x4xi32>
  return %0 : tensor<1x4x4x4x4xi32>
}
