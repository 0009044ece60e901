// conv3d.conv takes the clauses after `outs(...)` in any order (issue 26,
// item 12: swapping two of them gave "cannot name an operation with no
// results"), each at most once, and prints them in one order without the
// defaults.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @any_order
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>) outs(%{{.*}} : tensor<1x2x6x6x16xbf16>) overwrite strides = [2, 1, 1] padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = relu config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16> -> tensor<1x2x6x6x16xbf16>
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>) outs(%{{.*}} : tensor<1x2x6x6x16xbf16>) overwrite strides = [2, 1, 1] padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = relu config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16> -> tensor<1x2x6x6x16xbf16>
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>) outs(%{{.*}} : tensor<1x4x6x6x16xbf16>) padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x6x6x16xbf16>
func.func @any_order(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<16x3x3x3x16xbf16>,
                     %e: tensor<1x2x6x6x16xbf16>, %f: tensor<1x4x6x6x16xbf16>)
    -> (tensor<1x2x6x6x16xbf16>, tensor<1x2x6x6x16xbf16>, tensor<1x4x6x6x16xbf16>) {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>)
         outs(%e : tensor<1x2x6x6x16xbf16>) overwrite strides = [2, 1, 1]
         padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = relu
         config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16>
         -> tensor<1x2x6x6x16xbf16>
  %1 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>)
         outs(%e : tensor<1x2x6x6x16xbf16>)
         config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16>
         activation = relu padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc
         overwrite strides = [2, 1, 1] -> tensor<1x2x6x6x16xbf16>
  // Defaults given explicitly are not printed.
  %2 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x16xbf16>)
         outs(%f : tensor<1x4x6x6x16xbf16>) filter_layout = fqrsc
         dilations = [1, 1, 1] padding = [2, 0, 1, 1, 1, 1] strides = [1, 1, 1]
         activation = none -> tensor<1x4x6x6x16xbf16>
  return %0, %1, %2 : tensor<1x2x6x6x16xbf16>, tensor<1x2x6x6x16xbf16>, tensor<1x4x6x6x16xbf16>
}

// -----

func.func @twice(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<3x3x3x16x16xbf16>,
                 %e: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  // expected-error @+2 {{'padding' is given twice}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>)
         outs(%e : tensor<1x4x6x6x16xbf16>) padding = [2, 0, 1, 1, 1, 1] overwrite padding = [2, 0, 1, 1, 1, 1]
         -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

// -----

func.func @bad_value(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<3x3x3x16x16xbf16>,
                     %e: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  // expected-error @+2 {{expected one of [none, relu, silu, gelu_tanh, relu_backward, silu_backward, gelu_tanh_backward], got 'tanh'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>)
         outs(%e : tensor<1x4x6x6x16xbf16>) padding = [2, 0, 1, 1, 1, 1] activation = tanh
         -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}
