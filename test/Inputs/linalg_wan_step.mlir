// A WAN decoder step as a front end writes it in linalg (RMS norm as a sum
// of squares and an elementwise map, SiLU, concatenation of the cached
// frames, zero pad, linalg convolution), for history-prologue-numpy.test:
// conv3d-from-linalg turns it into one conv3d.conv with a history and the
// prologue, whose result must still equal the unfused model.
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
#voxel = affine_map<(n, d, h, w, c) -> (n, d, h, w)>
#chan = affine_map<(n, d, h, w, c) -> (c)>
func.func @wan_norm_step(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x4x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x4x6x6xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#id, #voxel], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x6x6x8xf32>) outs(%s0 : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6xf32>
  %ne = tensor.empty() : tensor<1x4x6x6x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #voxel, #chan, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %g, %b : tensor<1x4x6x6x8xf32>, tensor<1x4x6x6xf32>, tensor<8xf32>, tensor<8xf32>) outs(%ne : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %sum: f32, %gv: f32, %bv: f32, %o: f32):
    %c8 = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %sum, %c8 : f32
    %me = arith.addf %mean, %eps : f32
    %rs = math.rsqrt %me : f32
    %xn = arith.mulf %v, %rs : f32
    %xg = arith.mulf %xn, %gv : f32
    %xb = arith.addf %xg, %bv : f32
    linalg.yield %xb : f32
  } -> tensor<1x4x6x6x8xf32>
  %ae = tensor.empty() : tensor<1x4x6x6x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%n : tensor<1x4x6x6x8xf32>) outs(%ae : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %ex : f32
    %si = arith.divf %v, %den : f32
    linalg.yield %si : f32
  } -> tensor<1x4x6x6x8xf32>
  %c = tensor.concat dim(1) %h, %a : (tensor<1x2x6x6x8xf32>, tensor<1x4x6x6x8xf32>) -> tensor<1x6x6x6x8xf32>
  %p = tensor.pad %c low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x6x8xf32> to tensor<1x6x8x8x8xf32>
  %oe = tensor.empty() : tensor<1x4x6x6x16xf32>
  %o = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf ins(%p, %w : tensor<1x6x8x8x8xf32>, tensor<3x3x3x8x16xf32>) outs(%o : tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32>
  return %y : tensor<1x4x6x6x16xf32>
}
