// conv3d-qslice: the fused strategy (k_order = qslice_outer on the config),
// the separate strategy (one-deep slice convolutions over the output depths
// each tap contributes to, accumulated in f32, then one conv3d.epilogue),
// auto and none. Errors: qslice-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-qslice=strategy=separate | FileCheck %s --check-prefix=SEP
// RUN: conv3d-opt %s -split-input-file -conv3d-qslice=strategy=fused | FileCheck %s --check-prefix=FUSED
// RUN: conv3d-opt %s -split-input-file -conv3d-qslice | FileCheck %s --check-prefix=AUTO
// RUN: conv3d-opt %s -split-input-file -conv3d-qslice="strategy=auto target=sm90 selection=heuristic" 2>%t.remarks90 | FileCheck %s --check-prefix=AUTO90
// RUN: FileCheck %s --input-file=%t.remarks90 --check-prefix=REMARK90
// RUN: conv3d-opt %s -split-input-file -conv3d-qslice=strategy=none | FileCheck %s --check-prefix=NONE

// A causal 3-tap convolution (depth padding [2, 0]) with the whole epilogue.
// Output depth 6; tap q reads input depth d - 2 + q, so it contributes to
// output depths [2 - q, 6) from input depth 0.

// SEP-LABEL: func.func @causal
// SEP-SAME: (%[[X:.*]]: tensor<1x6x8x8x16xbf16>, %[[W:.*]]: tensor<3x3x3x16x32xbf16>, %[[B:.*]]: tensor<32xf32>, %[[R:.*]]: tensor<1x6x8x8x32xbf16>, %[[I:.*]]: tensor<1x6x8x8x32xbf16>)
// The f32 accumulator of an overwrite conv starts at zero.
// SEP: %[[E:.*]] = tensor.empty() : tensor<1x6x8x8x32xf32>
// SEP: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// SEP: %[[ACC0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<1x6x8x8x32xf32>)
// q = 0: output depths [2, 6), input depths [0, 4).
// SEP: %[[IN0:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 4, 8, 8, 16] [1, 1, 1, 1, 1] : tensor<1x6x8x8x16xbf16> to tensor<1x4x8x8x16xbf16>
// SEP: %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0, 0] [1, 3, 3, 16, 32] [1, 1, 1, 1, 1] : tensor<3x3x3x16x32xbf16> to tensor<1x3x3x16x32xbf16>
// SEP: %[[A0:.*]] = tensor.extract_slice %[[ACC0]][0, 2, 0, 0, 0] [1, 4, 8, 8, 32] [1, 1, 1, 1, 1] : tensor<1x6x8x8x32xf32> to tensor<1x4x8x8x32xf32>
// SEP: %[[S0:.*]] = conv3d.conv ins(%[[IN0]], %[[W0]] : tensor<1x4x8x8x16xbf16>, tensor<1x3x3x16x32xbf16>) outs(%[[A0]] : tensor<1x4x8x8x32xf32>) padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x32xf32>
// SEP: %[[ACC1:.*]] = tensor.insert_slice %[[S0]] into %[[ACC0]][0, 2, 0, 0, 0] [1, 4, 8, 8, 32] [1, 1, 1, 1, 1]
// q = 1: output depths [1, 6), input depths [0, 5).
// SEP: %[[IN1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 5, 8, 8, 16] [1, 1, 1, 1, 1]
// SEP: %[[W1:.*]] = tensor.extract_slice %[[W]][1, 0, 0, 0, 0] [1, 3, 3, 16, 32] [1, 1, 1, 1, 1]
// SEP: %[[A1:.*]] = tensor.extract_slice %[[ACC1]][0, 1, 0, 0, 0] [1, 5, 8, 8, 32] [1, 1, 1, 1, 1]
// SEP: %[[S1:.*]] = conv3d.conv ins(%[[IN1]], %[[W1]] : tensor<1x5x8x8x16xbf16>, tensor<1x3x3x16x32xbf16>) outs(%[[A1]] : tensor<1x5x8x8x32xf32>) padding = [0, 0, 1, 1, 1, 1] -> tensor<1x5x8x8x32xf32>
// SEP: %[[ACC2:.*]] = tensor.insert_slice %[[S1]] into %[[ACC1]][0, 1, 0, 0, 0] [1, 5, 8, 8, 32] [1, 1, 1, 1, 1]
// q = 2: all output depths, all input depths.
// SEP: %[[IN2:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 6, 8, 8, 16] [1, 1, 1, 1, 1]
// SEP: %[[W2:.*]] = tensor.extract_slice %[[W]][2, 0, 0, 0, 0] [1, 3, 3, 16, 32] [1, 1, 1, 1, 1]
// SEP: %[[A2:.*]] = tensor.extract_slice %[[ACC2]][0, 0, 0, 0, 0] [1, 6, 8, 8, 32] [1, 1, 1, 1, 1]
// SEP: %[[S2:.*]] = conv3d.conv ins(%[[IN2]], %[[W2]] : tensor<1x6x8x8x16xbf16>, tensor<1x3x3x16x32xbf16>) outs(%[[A2]] : tensor<1x6x8x8x32xf32>) padding = [0, 0, 1, 1, 1, 1] -> tensor<1x6x8x8x32xf32>
// SEP: %[[ACC3:.*]] = tensor.insert_slice %[[S2]] into %[[ACC2]][0, 0, 0, 0, 0] [1, 6, 8, 8, 32] [1, 1, 1, 1, 1]
// The epilogue, once, in f32 until the final rounding.
// SEP: %[[Y:.*]] = conv3d.epilogue ins(%[[ACC3]] : tensor<1x6x8x8x32xf32>) bias(%[[B]] : tensor<32xf32>) residual(%[[R]] : tensor<1x6x8x8x32xbf16>) outs(%[[I]] : tensor<1x6x8x8x32xbf16>) overwrite activation = silu -> tensor<1x6x8x8x32xbf16>
// SEP-NEXT: return %[[Y]]

// FUSED-LABEL: func.func @causal
// FUSED: conv3d.conv {{.*}} padding = [2, 0, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 64, k_order = qslice_outer> ->
// AUTO-LABEL: func.func @causal
// AUTO: conv3d.conv {{.*}} padding = [2, 0, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 64, k_order = qslice_outer> ->
// The config comes from the target's heuristic: on sm90, that of the sm80
// kernel with a remark, as the sm90 kernel takes FQRSC filters and C >= 64
// only (@causal_sm90 below gets an sm90 one).
// AUTO90-LABEL: func.func @causal
// AUTO90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 4, warps_m = 2, k_order = qslice_outer, kernel = sm80> ->
// REMARK90: qslice.mlir:[[# @LINE + 5]]:8: remark: conv3d: the sm90 kernel cannot take this convolution (the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)); it runs on the sm80 kernel
// NONE-LABEL: func.func @causal
// NONE-NOT: config
// NONE: conv3d.conv {{.*}} padding = [2, 0, 1, 1, 1, 1] activation = silu ->
func.func @causal(%x: tensor<1x6x8x8x16xbf16>, %w: tensor<3x3x3x16x32xbf16>, %b: tensor<32xf32>, %r: tensor<1x6x8x8x32xbf16>, %i: tensor<1x6x8x8x32xbf16>) -> tensor<1x6x8x8x32xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x8x8x16xbf16>, tensor<3x3x3x16x32xbf16>) bias(%b : tensor<32xf32>) residual(%r : tensor<1x6x8x8x32xbf16>) outs(%i : tensor<1x6x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu -> tensor<1x6x8x8x32xbf16>
  return %0 : tensor<1x6x8x8x32xbf16>
}

// -----

// No depth padding: every tap covers every output depth, so auto leaves the
// conv alone (fused would skip nothing); fused and separate still apply.

// AUTO-LABEL: func.func @unpadded_depth
// AUTO-NOT: config
// AUTO-NOT: tensor.extract_slice
// AUTO: return
// FUSED-LABEL: func.func @unpadded_depth
// FUSED: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64, k_order = qslice_outer>
// SEP-LABEL: func.func @unpadded_depth
// SEP-COUNT-3: conv3d.conv {{.*}} outs({{.*}} : tensor<1x4x4x4x16xf32>) padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x4x4x16xf32>
// SEP: conv3d.epilogue
func.func @unpadded_depth(%x: tensor<1x6x4x4x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x4x4x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

// -----

// Symmetric depth padding also makes the first and last taps partly
// halo-only: auto fuses.

// AUTO-LABEL: func.func @symmetric_depth_padding
// AUTO: k_order = qslice_outer
func.func @symmetric_depth_padding(%x: tensor<1x4x4x4x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

// -----

// Fused keeps an existing config and only changes its K order.

// FUSED-LABEL: func.func @fused_keeps_config
// FUSED: config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16, stages = 3, warps_m = 2, k_order = qslice_outer> ->
// AUTO-LABEL: func.func @fused_keeps_config
// AUTO: config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16, stages = 3, warps_m = 2, k_order = qslice_outer> ->
// The slices of the separate strategy get the config with taps_outer.
// SEP-LABEL: func.func @fused_keeps_config
// SEP-COUNT-3: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16, stages = 3, warps_m = 2> ->
func.func @fused_keeps_config(%x: tensor<1x6x4x4x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %i: tensor<1x6x4x4x16xbf16>) -> tensor<1x6x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x4x4x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x6x4x4x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 16, stages = 3, warps_m = 2> -> tensor<1x6x4x4x16xbf16>
  return %0 : tensor<1x6x4x4x16xbf16>
}

// -----

// A conv that accumulates onto a bf16 destination: the accumulator is the
// destination widened to f32 once (an extf generic), the slices accumulate
// onto it, and the epilogue overwrites (the destination is already in the
// sum). Depth dilation 2 with causal padding 4 (FQRSC filter): tap q
// contributes to output depths [4 - 2q, 8), all from input depth 0; the
// slice convs keep the H/W dilations and get depth dilation 1.

// SEP-LABEL: func.func @dilated_accumulating_bf16
// SEP-SAME: (%[[X:.*]]: tensor<1x8x6x6x16xbf16>, %[[W:.*]]: tensor<8x3x3x3x16xbf16>, %[[I:.*]]: tensor<1x8x2x2x8xbf16>)
// SEP: %[[E:.*]] = tensor.empty() : tensor<1x8x2x2x8xf32>
// SEP: %[[ACC0:.*]] = linalg.generic {{.*}} ins(%[[I]] : tensor<1x8x2x2x8xbf16>) outs(%[[E]] : tensor<1x8x2x2x8xf32>)
// SEP-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// SEP-NEXT: %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// SEP-NEXT: linalg.yield %[[WIDE]] : f32
// SEP: tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 4, 6, 6, 16]
// SEP: tensor.extract_slice %[[W]][0, 0, 0, 0, 0] [8, 1, 3, 3, 16]
// SEP: tensor.extract_slice %[[ACC0]][0, 4, 0, 0, 0] [1, 4, 2, 2, 8]
// SEP: conv3d.conv {{.*}} : tensor<1x4x6x6x16xbf16>, tensor<8x1x3x3x16xbf16>) outs({{.*}} : tensor<1x4x2x2x8xf32>) dilations = [1, 2, 2] filter_layout = fqrsc -> tensor<1x4x2x2x8xf32>
// SEP: tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 6, 6, 6, 16]
// SEP: tensor.extract_slice %[[W]][0, 1, 0, 0, 0] [8, 1, 3, 3, 16]
// SEP: tensor.extract_slice %{{.*}}[0, 2, 0, 0, 0] [1, 6, 2, 2, 8]
// SEP: conv3d.conv {{.*}} outs({{.*}} : tensor<1x6x2x2x8xf32>) dilations = [1, 2, 2] filter_layout = fqrsc ->
// SEP: tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 8, 6, 6, 16]
// SEP: tensor.extract_slice %[[W]][0, 2, 0, 0, 0] [8, 1, 3, 3, 16]
// SEP: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 8, 2, 2, 8]
// SEP: conv3d.conv {{.*}} outs({{.*}} : tensor<1x8x2x2x8xf32>) dilations = [1, 2, 2] filter_layout = fqrsc ->
// SEP: %[[ACC3:.*]] = tensor.insert_slice
// SEP: conv3d.epilogue ins(%[[ACC3]] : tensor<1x8x2x2x8xf32>) outs(%[[I]] : tensor<1x8x2x2x8xbf16>) overwrite ->
func.func @dilated_accumulating_bf16(%x: tensor<1x8x6x6x16xbf16>, %w: tensor<8x3x3x3x16xbf16>, %i: tensor<1x8x2x2x8xbf16>) -> tensor<1x8x2x2x8xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x6x6x16xbf16>, tensor<8x3x3x3x16xbf16>) outs(%i : tensor<1x8x2x2x8xbf16>) dilations = [2, 2, 2] padding = [4, 0, 0, 0, 0, 0] filter_layout = fqrsc -> tensor<1x8x2x2x8xbf16>
  return %0 : tensor<1x8x2x2x8xbf16>
}

// -----

// A conv that accumulates onto an f32 destination accumulates into it
// directly. Depth stride 2, padding [2, 0], 9 input depths, 5 output
// depths: tap 0 covers output depths [1, 5) from input depth 0 (7 input
// depths: 0, 2, ..., 6), tap 1 [1, 5) from input depth 1, tap 2 [0, 5) from
// input depth 0.

// SEP-LABEL: func.func @strided_accumulating_f32
// SEP-SAME: (%[[X:.*]]: tensor<1x9x4x4x16xbf16>, %[[W:.*]]: tensor<3x1x1x16x8xbf16>, %[[I:.*]]: tensor<1x5x4x4x8xf32>)
// SEP-NOT: linalg.fill
// SEP-NOT: linalg.generic
// SEP: tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 7, 4, 4, 16]
// SEP: tensor.extract_slice %[[W]][0, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %[[I]][0, 1, 0, 0, 0] [1, 4, 4, 4, 8]
// SEP: conv3d.conv {{.*}} : tensor<1x7x4x4x16xbf16>, tensor<1x1x1x16x8xbf16>) outs({{.*}} : tensor<1x4x4x4x8xf32>) strides = [2, 1, 1] -> tensor<1x4x4x4x8xf32>
// SEP: tensor.extract_slice %[[X]][0, 1, 0, 0, 0] [1, 7, 4, 4, 16]
// SEP: tensor.extract_slice %[[W]][1, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %{{.*}}[0, 1, 0, 0, 0] [1, 4, 4, 4, 8]
// SEP: conv3d.conv {{.*}} outs({{.*}} : tensor<1x4x4x4x8xf32>) strides = [2, 1, 1] ->
// SEP: tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 9, 4, 4, 16]
// SEP: tensor.extract_slice %[[W]][2, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 5, 4, 4, 8]
// SEP: conv3d.conv {{.*}} outs({{.*}} : tensor<1x5x4x4x8xf32>) strides = [2, 1, 1] ->
// SEP: %[[ACC:.*]] = tensor.insert_slice
// SEP: conv3d.epilogue ins(%[[ACC]] : tensor<1x5x4x4x8xf32>) outs(%[[I]] : tensor<1x5x4x4x8xf32>) overwrite ->
func.func @strided_accumulating_f32(%x: tensor<1x9x4x4x16xbf16>, %w: tensor<3x1x1x16x8xbf16>, %i: tensor<1x5x4x4x8xf32>) -> tensor<1x5x4x4x8xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x9x4x4x16xbf16>, tensor<3x1x1x16x8xbf16>) outs(%i : tensor<1x5x4x4x8xf32>) strides = [2, 1, 1] padding = [2, 0, 0, 0, 0, 0] -> tensor<1x5x4x4x8xf32>
  return %0 : tensor<1x5x4x4x8xf32>
}

// -----

// Depth padding 3 on a 3-tap window over 2 input depths: tap 0 reads only
// the halo and gets no slice conv; taps 1 and 2 cover output depths [2, 3)
// and [1, 3). The quantization goes with the slices (R*S*C = 16 is a whole
// block).

// SEP-LABEL: func.func @halo_only_tap
// SEP-SAME: %[[AMAX:[^:]*]]: f32
// SEP-NOT: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %{{.*}}[1, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %{{.*}}[0, 2, 0, 0, 0] [1, 1, 4, 4, 8]
// SEP: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs({{.*}} : tensor<1x1x4x4x8xf32>) ->
// SEP: tensor.extract_slice %{{.*}}[2, 0, 0, 0, 0] [1, 1, 1, 16, 8]
// SEP: tensor.extract_slice %{{.*}}[0, 1, 0, 0, 0] [1, 2, 4, 4, 8]
// SEP: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs({{.*}} : tensor<1x2x4x4x8xf32>) ->
// SEP-NOT: conv3d.conv
// SEP: conv3d.epilogue
// FUSED-LABEL: func.func @halo_only_tap
// FUSED: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) {{.*}} config = #conv3d.igemm_config<tile_m = 48, tile_n = 8, tile_k = 48, k_order = qslice_outer>
func.func @halo_only_tap(%x: tensor<1x2x4x4x16xf32>, %w: tensor<3x1x1x16x8xf32>, %amax: f32, %i: tensor<1x3x4x4x8xf32>) -> tensor<1x3x4x4x8xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x2x4x4x16xf32>, tensor<3x1x1x16x8xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x3x4x4x8xf32>) padding = [3, 0, 0, 0, 0, 0] -> tensor<1x3x4x4x8xf32>
  return %0 : tensor<1x3x4x4x8xf32>
}

// -----

// Q = 1: nothing to slice, under any strategy.

// SEP-LABEL: func.func @one_tap
// SEP-NOT: tensor.extract_slice
// SEP-NOT: conv3d.epilogue
// SEP: conv3d.conv {{.*}} overwrite padding = [0, 0, 1, 1, 1, 1] ->
// FUSED-LABEL: func.func @one_tap
// FUSED-NOT: config
// FUSED: return
// AUTO-LABEL: func.func @one_tap
// AUTO-NOT: config
// AUTO: return
func.func @one_tap(%x: tensor<1x4x4x4x16xbf16>, %w: tensor<1x3x3x16x16xbf16>, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x16xbf16>, tensor<1x3x3x16x16xbf16>) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

// -----

// Dynamic shapes are left alone by every strategy.

// SEP-LABEL: func.func @dynamic_batch
// SEP-NOT: tensor.extract_slice
// SEP: conv3d.conv
// FUSED-LABEL: func.func @dynamic_batch
// FUSED-NOT: config
// FUSED: return
func.func @dynamic_batch(%x: tensor<?x6x4x4x16xbf16>, %w: tensor<3x1x1x16x16xbf16>, %i: tensor<?x6x4x4x16xbf16>) -> tensor<?x6x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x6x4x4x16xbf16>, tensor<3x1x1x16x16xbf16>) outs(%i : tensor<?x6x4x4x16xbf16>) overwrite padding = [2, 0, 0, 0, 0, 0] -> tensor<?x6x4x4x16xbf16>
  return %0 : tensor<?x6x4x4x16xbf16>
}

// -----

// A causal convolution the sm90 kernel takes (FQRSC filter, C = 64): auto
// fuses the Q slices into the sm90 heuristic's config.

// AUTO90-LABEL: func.func @causal_sm90
// AUTO90: config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 8, k_order = qslice_outer, kernel = sm90> ->
// AUTO-LABEL: func.func @causal_sm90
// AUTO: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, k_order = qslice_outer> ->
// REMARK90-NOT: qslice.mlir:[[# @LINE + 2]]:{{.*}}remark
func.func @causal_sm90(%x: tensor<1x6x8x8x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<1x6x8x8x64xbf16>) -> tensor<1x6x8x8x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<1x6x8x8x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x6x8x8x64xbf16>
  return %0 : tensor<1x6x8x8x64xbf16>
}
