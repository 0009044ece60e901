// conv3d-to-linalg{lower-contiguous-quantize=0}, as the implicit-GEMM
// pipelines run it: a quantize whose blocks are contiguous runs of the
// buffer (the NVFP4 prepass of an activation) stays for
// conv3d-quantize-to-loops after bufferization; any other quantize and the
// epilogue are lowered as usual. With the default, every quantize is
// lowered.
//
// RUN: conv3d-opt %s -conv3d-to-linalg="lower-conv=0 lower-contiguous-quantize=0" | FileCheck %s --check-prefix=KEEP
// RUN: conv3d-opt %s -conv3d-to-linalg="lower-conv=0" | FileCheck %s --check-prefix=ALL

// KEEP-LABEL: func.func @mixed
// KEEP: %[[QX:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%{{.*}} : tensor<1x4x4x4x32xbf16>)
// Blocks of 16 over C = 24 straddle voxels: not contiguous runs.
// KEEP-NOT: conv3d.quantize
// KEEP: linalg.generic
// KEEP: conv3d.conv ins(%[[QX]],
// ALL-LABEL: func.func @mixed
// ALL-NOT: conv3d.quantize
// ALL: conv3d.conv
func.func @mixed(%x: tensor<1x4x4x4x32xbf16>, %y: tensor<1x4x4x4x24xbf16>, %w: tensor<1x1x1x32x8xbf16>, %amax: f32, %i: tensor<1x4x4x4x8xbf16>) -> (tensor<1x4x4x4x8xbf16>, tensor<1x4x4x4x24xbf16>) {
  %ex = tensor.empty() : tensor<1x4x4x4x32xbf16>
  %qx = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x4x4x4x32xbf16>) amax(%amax) outs(%ex : tensor<1x4x4x4x32xbf16>) -> tensor<1x4x4x4x32xbf16>
  %ey = tensor.empty() : tensor<1x4x4x4x24xbf16>
  %qy = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%y : tensor<1x4x4x4x24xbf16>) amax(%amax) outs(%ey : tensor<1x4x4x4x24xbf16>) -> tensor<1x4x4x4x24xbf16>
  %c = conv3d.conv ins(%qx, %w : tensor<1x4x4x4x32xbf16>, tensor<1x1x1x32x8xbf16>) outs(%i : tensor<1x4x4x4x8xbf16>) overwrite -> tensor<1x4x4x4x8xbf16>
  return %c, %qy : tensor<1x4x4x4x8xbf16>, tensor<1x4x4x4x24xbf16>
}
