// conv3d.prologue (the input prologue as a stand-alone pass): round trips in
// the custom form, through the generic form and bytecode, on tensors and
// memrefs, then one split per diagnostic of its verifier.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/roundtrip.mlir | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %t/roundtrip.mlir --mlir-print-op-generic | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %t/roundtrip.mlir -emit-bytecode | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %t/invalid.mlir -split-input-file -verify-diagnostics

//--- roundtrip.mlir
// CHECK-LABEL: func.func @norm_beta_silu
// CHECK: conv3d.prologue ins(%{{.*}} : tensor<1x4x6x6x16xbf16>) rms_norm(%{{.*}} : tensor<16xf32>) norm_beta(%{{.*}} : tensor<16xbf16>) norm_eps = 9.99999997E-7 input_activation = silu outs(%{{.*}} : tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16>
func.func @norm_beta_silu(%x: tensor<1x4x6x6x16xbf16>, %g: tensor<16xf32>, %b: tensor<16xbf16>, %e: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x16xbf16>) rms_norm(%g : tensor<16xf32>) norm_beta(%b : tensor<16xbf16>) norm_eps = 1.0e-06 input_activation = silu outs(%e : tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}
// CHECK-LABEL: func.func @activation_only_dynamic
// CHECK: conv3d.prologue ins(%{{.*}} : tensor<?x?x6x6x8xf32>) input_activation = gelu_tanh outs(%{{.*}} : tensor<?x?x6x6x8xf32>) -> tensor<?x?x6x6x8xf32>
func.func @activation_only_dynamic(%x: tensor<?x?x6x6x8xf32>, %e: tensor<?x?x6x6x8xf32>) -> tensor<?x?x6x6x8xf32> {
  %0 = conv3d.prologue ins(%x : tensor<?x?x6x6x8xf32>) input_activation = gelu_tanh outs(%e : tensor<?x?x6x6x8xf32>) -> tensor<?x?x6x6x8xf32>
  return %0 : tensor<?x?x6x6x8xf32>
}
// CHECK-LABEL: func.func @memref_norm
// CHECK: conv3d.prologue ins(%{{.*}} : memref<2x3x4x5x8xf16>) rms_norm(%{{.*}} : memref<8xf16>) norm_eps = 0.00999999977 outs(%{{.*}} : memref<2x3x4x5x8xf16>)
// CHECK-NOT: input_activation
func.func @memref_norm(%x: memref<2x3x4x5x8xf16>, %g: memref<8xf16>, %o: memref<2x3x4x5x8xf16>) {
  conv3d.prologue ins(%x : memref<2x3x4x5x8xf16>) rms_norm(%g : memref<8xf16>) norm_eps = 0.01 outs(%o : memref<2x3x4x5x8xf16>)
  return
}

//--- invalid.mlir
func.func @empty(%x: tensor<1x4x6x6x8xf32>, %e: tensor<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op needs rms_norm or an input_activation (an empty prologue is a copy)}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) outs(%e : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return
}

// -----

func.func @rank(%x: tensor<4x6x6x8xf32>, %e: tensor<4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op input must have rank 5}}
  %0 = conv3d.prologue ins(%x : tensor<4x6x6x8xf32>) input_activation = relu outs(%e : tensor<4x6x6x8xf32>) -> tensor<4x6x6x8xf32>
  return
}

// -----

func.func @integer(%x: tensor<1x4x6x6x8xi8>, %e: tensor<1x4x6x6x8xi8>) {
  // expected-error @+1 {{'conv3d.prologue' op input element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xi8>) input_activation = relu outs(%e : tensor<1x4x6x6x8xi8>) -> tensor<1x4x6x6x8xi8>
  return
}

// -----

func.func @outs_type(%x: tensor<1x4x6x6x8xf32>, %e: tensor<1x4x6x6x8xbf16>) {
  // expected-error @+1 {{'conv3d.prologue' op outs element type 'bf16' must match the input element type 'f32'}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) input_activation = relu outs(%e : tensor<1x4x6x6x8xbf16>) -> tensor<1x4x6x6x8xbf16>
  return
}

// -----

func.func @outs_shape(%x: tensor<1x4x6x6x8xf32>, %e: tensor<1x4x6x7x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op outs}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) input_activation = relu outs(%e : tensor<1x4x6x7x8xf32>) -> tensor<1x4x6x7x8xf32>
  return
}

// -----

func.func @dynamic_channels(%x: tensor<1x4x6x6x?xf32>, %e: tensor<1x4x6x6x?xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op the channel dimension of the input must be static}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x?xf32>) input_activation = relu outs(%e : tensor<1x4x6x6x?xf32>) -> tensor<1x4x6x6x?xf32>
  return
}

// -----

func.func @beta_without_norm(%x: tensor<1x4x6x6x8xf32>, %b: tensor<8xf32>, %e: tensor<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op norm_beta needs rms_norm (the scale gamma)}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) norm_beta(%b : tensor<8xf32>) input_activation = relu outs(%e : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return
}

// -----

func.func @norm_without_eps(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %e: tensor<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op rms_norm needs norm_eps, the positive constant added to the mean square}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) rms_norm(%g : tensor<8xf32>) outs(%e : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return
}

// -----

func.func @eps_zero(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %e: tensor<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op norm_eps must be finite and positive, got 0}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) rms_norm(%g : tensor<8xf32>) norm_eps = 0.0 outs(%e : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return
}

// -----

func.func @gamma_length(%x: tensor<1x4x6x6x8xf32>, %g: tensor<6xf32>, %e: tensor<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op rms_norm scale must have 8 elements (one per input channel), got 6}}
  %0 = conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) rms_norm(%g : tensor<6xf32>) norm_eps = 1.0e-06 outs(%e : tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  return
}

// -----

func.func @mixed_forms(%x: tensor<1x4x6x6x8xf32>, %e: memref<1x4x6x6x8xf32>) {
  // expected-error @+1 {{'conv3d.prologue' op}}
  conv3d.prologue ins(%x : tensor<1x4x6x6x8xf32>) input_activation = relu outs(%e : memref<1x4x6x6x8xf32>)
  return
}
