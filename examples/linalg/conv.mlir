// A causal 3x3x3 convolution with bias and ReLU, bf16, as a front end
// (torch-mlir, an IREE input, a hand-written pipeline) hands one over: the
// NDHWC convolution is linalg.conv_3d_ndhwc_dhwcf, its causal padding (two
// frames before along depth, one on each side along height and width) a
// tensor.pad, and bias + ReLU one elementwise linalg.generic. The conv3d
// pipelines import it: the padding becomes conv3d.conv's padding attribute
// (never a copy), bias and ReLU its fused epilogue, and the sum is
// accumulated in f32 and rounded to bf16 once.
//
//   conv3d-opt --conv3d-graph-pipeline examples/linalg/conv.mlir  # one conv3d.conv
//   conv3d-opt --conv3d-cpu-pipeline examples/linalg/conv.mlir    # to the LLVM dialect
//   conv3d-run --module=examples/linalg/conv.mlir --entry=conv \
//       --arg=x.npy --arg=w.npy --arg=b.npy --result=y.npy
//
// x.npy holds the 1x8x16x16x32 input, w.npy the 3x3x3x32x32 filter (DHWCF),
// b.npy the 32 biases, as float32 or float64 (rounded to bf16 on reading);
// y.npy receives the 1x8x16x16x32 result as float32. Checked by
// test/Execution/linalg-example.test.

#map = affine_map<(n, d, h, w, f) -> (n, d, h, w, f)>
#bias = affine_map<(n, d, h, w, f) -> (f)>

func.func @conv(%x: tensor<1x8x16x16x32xbf16>, %w: tensor<3x3x3x32x32xbf16>,
                %b: tensor<32xbf16>) -> tensor<1x8x16x16x32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : bf16
  } : tensor<1x8x16x16x32xbf16> to tensor<1x10x18x18x32xbf16>
  %empty = tensor.empty() : tensor<1x8x16x16x32xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<1x8x16x16x32xbf16>)
      -> tensor<1x8x16x16x32xbf16>
  %conv = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%padded, %w : tensor<1x10x18x18x32xbf16>, tensor<3x3x3x32x32xbf16>)
      outs(%init : tensor<1x8x16x16x32xbf16>) -> tensor<1x8x16x16x32xbf16>
  %y = linalg.generic {indexing_maps = [#map, #bias, #map],
                       iterator_types = ["parallel", "parallel", "parallel",
                                         "parallel", "parallel"]}
      ins(%conv, %b : tensor<1x8x16x16x32xbf16>, tensor<32xbf16>)
      outs(%empty : tensor<1x8x16x16x32xbf16>) {
  ^bb0(%acc: bf16, %bias: bf16, %out: bf16):
    %sum = arith.addf %acc, %bias : bf16
    %relu = arith.maximumf %sum, %zero : bf16
    linalg.yield %relu : bf16
  } -> tensor<1x8x16x16x32xbf16>
  return %y : tensor<1x8x16x16x32xbf16>
}
