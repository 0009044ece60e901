// RUN: conv3d-opt %s -split-input-file -conv3d-relayout-filter=target=sm90 | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -conv3d-relayout-filter=target=sm80 | FileCheck %s --check-prefix=SM80

// For the sm90 kernel (K-major filter tiles by TMA) a QRSCF filter is
// transposed to FQRSC: [Q, R, S, C, F] -> [F, Q, R, S, C].
// CHECK-LABEL: func.func @qrscf
// CHECK-SAME: (%{{.*}}: tensor<1x6x8x8x64xbf16>, %[[W:.*]]: tensor<3x3x3x64x96xbf16>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<96x3x3x3x64xbf16>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<3x3x3x64x96xbf16>) outs(%[[EMPTY]] : tensor<96x3x3x3x64xbf16>) permutation = [4, 0, 1, 2, 3]
// CHECK: conv3d.conv ins(%{{.*}}, %[[T]] : tensor<1x6x8x8x64xbf16>, tensor<96x3x3x3x64xbf16>) {{.*}} filter_layout = fqrsc
// Other targets keep the layout their kernels read.
// SM80-LABEL: func.func @qrscf
// SM80-NOT: linalg.transpose
func.func @qrscf(%x: tensor<1x6x8x8x64xbf16>, %w: tensor<3x3x3x64x96xbf16>, %o: tensor<1x4x6x6x96xbf16>) -> tensor<1x4x6x6x96xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xbf16>, tensor<3x3x3x64x96xbf16>) outs(%o : tensor<1x4x6x6x96xbf16>) overwrite -> tensor<1x4x6x6x96xbf16>
  return %y : tensor<1x4x6x6x96xbf16>
}

// -----

// Already K-major: unchanged.
// CHECK-LABEL: func.func @fqrsc
// CHECK-NOT: linalg.transpose
func.func @fqrsc(%x: tensor<1x6x8x8x64xbf16>, %w: tensor<96x3x3x3x64xbf16>, %o: tensor<1x4x6x6x96xbf16>) -> tensor<1x4x6x6x96xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xbf16>, tensor<96x3x3x3x64xbf16>) outs(%o : tensor<1x4x6x6x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x4x6x6x96xbf16>
  return %y : tensor<1x4x6x6x96xbf16>
}

// -----

// Convolutions the sm90 kernel cannot take for other reasons keep their
// filter (they run on the sm80 kernel, which reads QRSCF): C = 32 is under
// one TMA box, f32 has no wgmma here.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @f32
// CHECK-NOT: linalg.transpose
func.func @narrow(%x: tensor<1x6x8x8x32xbf16>, %w: tensor<3x3x3x32x96xbf16>, %o: tensor<1x4x6x6x96xbf16>) -> tensor<1x4x6x6x96xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x96xbf16>) outs(%o : tensor<1x4x6x6x96xbf16>) overwrite -> tensor<1x4x6x6x96xbf16>
  return %y : tensor<1x4x6x6x96xbf16>
}
func.func @f32(%x: tensor<1x6x8x8x64xf32>, %w: tensor<3x3x3x64x96xf32>, %o: tensor<1x4x6x6x96xf32>) -> tensor<1x4x6x6x96xf32> {
  %y = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xf32>, tensor<3x3x3x64x96xf32>) outs(%o : tensor<1x4x6x6x96xf32>) overwrite -> tensor<1x4x6x6x96xf32>
  return %y : tensor<1x4x6x6x96xf32>
}

// -----

// A configuration for the sm80 kernel keeps the layout; buffers are left to
// their owner.
// CHECK-LABEL: func.func @configured_sm80
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @memref
// CHECK-NOT: linalg.transpose
func.func @configured_sm80(%x: tensor<1x6x8x8x64xbf16>, %w: tensor<3x3x3x64x96xbf16>, %o: tensor<1x4x6x6x96xbf16>) -> tensor<1x4x6x6x96xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xbf16>, tensor<3x3x3x64x96xbf16>) outs(%o : tensor<1x4x6x6x96xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3, warps_m = 2, warps_n = 1, kernel = sm80> -> tensor<1x4x6x6x96xbf16>
  return %y : tensor<1x4x6x6x96xbf16>
}
func.func @memref(%x: memref<1x6x8x8x64xbf16>, %w: memref<3x3x3x64x96xbf16>, %o: memref<1x4x6x6x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x64xbf16>, memref<3x3x3x64x96xbf16>) outs(%o : memref<1x4x6x6x96xbf16>) overwrite
  return
}

// -----

// C = 921 (not a multiple of 8: TMA cannot stride over its rows): the
// input and the FQRSC filter get 7 zero channels, and the sm90 kernel
// takes the 928-channel convolution.
// CHECK-LABEL: func.func @pad_channels
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x7x7x921xbf16>, %[[W:.*]]: tensor<512x3x1x1x921xbf16>
// Only the 7 added channels are zeroed (no fill of the whole buffer), then
// each operand is copied into its channel window.
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: %[[XE:.*]] = tensor.empty() : tensor<2x2x7x7x928xbf16>
// CHECK: %[[XA:.*]] = tensor.extract_slice %[[XE]][0, 0, 0, 0, 921] [2, 2, 7, 7, 7] [1, 1, 1, 1, 1]
// CHECK: %[[XZ:.*]] = linalg.fill ins(%[[ZERO]] : bf16) outs(%[[XA]] : tensor<2x2x7x7x7xbf16>)
// CHECK: %[[XZI:.*]] = tensor.insert_slice %[[XZ]] into %[[XE]][0, 0, 0, 0, 921] [2, 2, 7, 7, 7] [1, 1, 1, 1, 1]
// CHECK: %[[XP:.*]] = tensor.insert_slice %[[X]] into %[[XZI]][0, 0, 0, 0, 0] [2, 2, 7, 7, 921] [1, 1, 1, 1, 1]
// CHECK: %[[WE:.*]] = tensor.empty() : tensor<512x3x1x1x928xbf16>
// CHECK: linalg.fill ins(%[[ZERO]] : bf16) outs(%{{.*}} : tensor<512x3x1x1x7xbf16>)
// CHECK: %[[WP:.*]] = tensor.insert_slice %[[W]] into %{{.*}}[0, 0, 0, 0, 0] [512, 3, 1, 1, 921] [1, 1, 1, 1, 1]
// CHECK-NOT: tensor.pad
// CHECK: conv3d.conv ins(%[[XP]], %[[WP]] : tensor<2x2x7x7x928xbf16>, tensor<512x3x1x1x928xbf16>)
// SM80-LABEL: func.func @pad_channels
// SM80-NOT: tensor.insert_slice
func.func @pad_channels(%x: tensor<2x2x7x7x921xbf16>, %w: tensor<512x3x1x1x921xbf16>, %o: tensor<2x2x7x7x512xbf16>) -> tensor<2x2x7x7x512xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<2x2x7x7x921xbf16>, tensor<512x3x1x1x921xbf16>) outs(%o : tensor<2x2x7x7x512xbf16>) overwrite padding = [1, 1, 0, 0, 0, 0] filter_layout = fqrsc -> tensor<2x2x7x7x512xbf16>
  return %y : tensor<2x2x7x7x512xbf16>
}

// -----

// A QRSCF filter of C = 230 is transposed to FQRSC, then both operands are
// padded to 232 channels.
// CHECK-LABEL: func.func @transpose_then_pad
// CHECK: linalg.transpose {{.*}} permutation = [4, 0, 1, 2, 3]
// CHECK: tensor.insert_slice {{.*}} [1, 4, 8, 8, 230]
// CHECK: tensor.insert_slice {{.*}} [64, 1, 3, 3, 230]
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x8x8x232xbf16>, tensor<64x1x3x3x232xbf16>)
func.func @transpose_then_pad(%x: tensor<1x4x8x8x230xbf16>, %w: tensor<1x3x3x230x64xbf16>, %o: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x230xbf16>, tensor<1x3x3x230x64xbf16>) outs(%o : tensor<1x4x8x8x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}

// -----

// C = 45 pads to 48, under one 64-channel TMA box: only the halo mainloop
// reads narrow channels padded, here as the configuration asks.
// CHECK-LABEL: func.func @narrow_padded_for_halo
// CHECK: tensor.insert_slice {{.*}} [1, 4, 8, 8, 45]
// CHECK: tensor.insert_slice {{.*}} [64, 1, 3, 3, 45]
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x8x8x48xbf16>, tensor<64x1x3x3x48xbf16>)
func.func @narrow_padded_for_halo(%x: tensor<1x4x8x8x45xbf16>, %w: tensor<64x1x3x3x45xbf16>, %o: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x45xbf16>, tensor<64x1x3x3x45xbf16>) outs(%o : tensor<1x4x8x8x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo> -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}

// -----

// C = 45 pads to 48, under one 64-channel TMA box, with one tap in H x W
// (where the im2col mainloop does not pay) and too few 256-row tiles for
// the halo mainloop to choose it: the sm80 kernel reads the narrow channels
// as they are.
// CHECK-LABEL: func.func @narrow_unpadded
// CHECK-NOT: tensor.insert_slice
func.func @narrow_unpadded(%x: tensor<1x4x8x8x45xbf16>, %w: tensor<64x3x1x1x45xbf16>, %o: tensor<1x2x8x8x64xbf16>) -> tensor<1x2x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x45xbf16>, tensor<64x3x1x1x45xbf16>) outs(%o : tensor<1x2x8x8x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x2x8x8x64xbf16>
  return %y : tensor<1x2x8x8x64xbf16>
}

// -----

// A QRSCF filter of C = 45 that the halo mainloop is asked for: transposed
// to FQRSC, then both operands padded to 48 channels.
// CHECK-LABEL: func.func @narrow_qrscf_for_halo
// CHECK: linalg.transpose {{.*}} permutation = [4, 0, 1, 2, 3]
// CHECK: tensor.insert_slice {{.*}} [1, 4, 8, 8, 45]
// CHECK: tensor.insert_slice {{.*}} [64, 1, 3, 3, 45]
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x8x8x48xbf16>, tensor<64x1x3x3x48xbf16>)
func.func @narrow_qrscf_for_halo(%x: tensor<1x4x8x8x45xbf16>, %w: tensor<1x3x3x45x64xbf16>, %o: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x45xbf16>, tensor<1x3x3x45x64xbf16>) outs(%o : tensor<1x4x8x8x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo> -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}

// -----

// A QRSCF filter of C = 45 with one tap in H x W and no halo: left to the
// sm80 kernel as it is.
// CHECK-LABEL: func.func @narrow_qrscf_kept
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.insert_slice
func.func @narrow_qrscf_kept(%x: tensor<1x4x8x8x45xbf16>, %w: tensor<3x1x1x45x64xbf16>, %o: tensor<1x2x8x8x64xbf16>) -> tensor<1x2x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x45xbf16>, tensor<3x1x1x45x64xbf16>) outs(%o : tensor<1x2x8x8x64xbf16>) overwrite -> tensor<1x2x8x8x64xbf16>
  return %y : tensor<1x2x8x8x64xbf16>
}

// -----

// The depthwise kernel reads a tap's weights of consecutive filters with
// one vector load in QRSCF, a scalar load per filter in FQRSC (PyTorch's
// layout): on every target its convolutions get a QRSCF filter,
// [F, Q, R, S, C/G] -> [Q, R, S, C/G, F].
// RUN: conv3d-opt %s -split-input-file -conv3d-relayout-filter=target=cpu | FileCheck %s --check-prefix=CPU
// CHECK-LABEL: func.func @depthwise_fqrsc
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<16x3x3x3x1xbf16>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<3x3x3x1x16xbf16>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<16x3x3x3x1xbf16>) outs(%[[EMPTY]] : tensor<3x3x3x1x16xbf16>) permutation = [1, 2, 3, 4, 0]
// CHECK: conv3d.conv ins(%{{.*}}, %[[T]] : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x1x16xbf16>)
// CHECK-NOT: filter_layout = fqrsc
// SM80-LABEL: func.func @depthwise_fqrsc
// SM80: linalg.transpose {{.*}} permutation = [1, 2, 3, 4, 0]
// CPU-LABEL: func.func @depthwise_fqrsc
// CPU: linalg.transpose {{.*}} permutation = [1, 2, 3, 4, 0]
func.func @depthwise_fqrsc(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<16x3x3x3x1xbf16>, %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<16x3x3x3x1xbf16>) outs(%o : tensor<1x4x6x6x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 16 filter_layout = fqrsc -> tensor<1x4x6x6x16xbf16>
  return %y : tensor<1x4x6x6x16xbf16>
}

// -----

// A QRSCF depthwise filter is what the kernel reads: unchanged.
// CHECK-LABEL: func.func @depthwise_qrscf
// CHECK-NOT: linalg.transpose
// CPU-LABEL: func.func @depthwise_qrscf
// CPU-NOT: linalg.transpose
func.func @depthwise_qrscf(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<3x3x3x1x16xbf16>, %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x1x16xbf16>) outs(%o : tensor<1x4x6x6x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 16 -> tensor<1x4x6x6x16xbf16>
  return %y : tensor<1x4x6x6x16xbf16>
}

// -----

// Groups of 8 channels and filters go to the sm80 kernel's grouped implicit
// GEMM on the GPU targets, which reads FQRSC as it is (and to the CPU's
// group grid, which takes either): unchanged. Two channels a group take the
// depthwise kernel on the GPU targets (relaid out) but the group grid on
// the CPU (kept).
// CHECK-LABEL: func.func @grouped8_fqrsc
// CHECK-NOT: linalg.transpose
// SM80-LABEL: func.func @grouped8_fqrsc
// SM80-NOT: linalg.transpose
// CPU-LABEL: func.func @grouped8_fqrsc
// CPU-NOT: linalg.transpose
func.func @grouped8_fqrsc(%x: tensor<1x4x6x6x32xbf16>, %w: tensor<32x3x3x3x8xbf16>, %o: tensor<1x4x6x6x32xbf16>) -> tensor<1x4x6x6x32xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x6x32xbf16>, tensor<32x3x3x3x8xbf16>) outs(%o : tensor<1x4x6x6x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 4 filter_layout = fqrsc -> tensor<1x4x6x6x32xbf16>
  return %y : tensor<1x4x6x6x32xbf16>
}

// -----

// CHECK-LABEL: func.func @grouped2_fqrsc
// CHECK: linalg.transpose {{.*}} permutation = [1, 2, 3, 4, 0]
// SM80-LABEL: func.func @grouped2_fqrsc
// SM80: linalg.transpose {{.*}} permutation = [1, 2, 3, 4, 0]
// CPU-LABEL: func.func @grouped2_fqrsc
// CPU-NOT: linalg.transpose
func.func @grouped2_fqrsc(%x: tensor<1x4x6x6x32xbf16>, %w: tensor<32x3x3x3x2xbf16>, %o: tensor<1x4x6x6x32xbf16>) -> tensor<1x4x6x6x32xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x6x32xbf16>, tensor<32x3x3x3x2xbf16>) outs(%o : tensor<1x4x6x6x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 16 filter_layout = fqrsc -> tensor<1x4x6x6x32xbf16>
  return %y : tensor<1x4x6x6x32xbf16>
}
