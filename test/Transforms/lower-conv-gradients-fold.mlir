// conv3d-lower-conv-gradients' weight-gradient fold: wgrad-fold=auto
// prices both forms with the target's cost model (plus the gathers' bytes)
// and takes the cheaper (chooseWgradFold); the cpu target keeps the width
// fold. WAN's 384-channel layer (60 x 104, batch 1): each width-fold tap
// has Wo*N = 104 channels, and the sm90 kernel ran that form 1.45x slower
// than the height-width fold's Do taps of Ho*Wo*N = 6240 channels
// (bench/RESULTS.md, eleventh session). r3d's layer (56 x 56, batch 8):
// 448 channels a tap, where the width fold measured 2x faster.
//
// RUN: conv3d-opt --conv3d-lower-conv-gradients="target=sm90" %s | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt --conv3d-lower-conv-gradients %s | FileCheck %s --check-prefix=CPU
// RUN: conv3d-opt --conv3d-lower-conv-gradients="target=sm90 wgrad-fold=width" %s | FileCheck %s --check-prefix=CPU
// RUN: not conv3d-opt --conv3d-lower-conv-gradients="wgrad-fold=depth" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: for the --wgrad-fold option: Cannot find option named 'depth'!

// SM90-LABEL: func.func @wan_mid
// SM90: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x23x1x3456x6240xbf16>, tensor<384x21x1x1x6240xbf16>) outs(%{{.*}} : tensor<1x3x1x3456x384xbf16>) overwrite filter_layout = fqrsc
// SM90-LABEL: func.func @r3d
// SM90: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x16x56x192x448xbf16>, tensor<64x16x56x1x448xbf16>)
// CPU-LABEL: func.func @wan_mid
// CPU: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x23x60x1152x104xbf16>, tensor<384x21x60x1x104xbf16>) outs(%{{.*}} : tensor<1x3x3x1152x384xbf16>) overwrite padding = [0, 0, 1, 1, 0, 0] filter_layout = fqrsc
// CPU-LABEL: func.func @r3d
// CPU: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x16x56x192x448xbf16>, tensor<64x16x56x1x448xbf16>)
func.func @wan_mid(%x: tensor<1x23x60x104x384xbf16>, %dy: tensor<1x21x60x104x384xbf16>)
    -> tensor<3x3x3x384x384xbf16> {
  %e = tensor.empty() : tensor<3x3x3x384x384xbf16>
  %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x23x60x104x384xbf16>,
                                                  tensor<1x21x60x104x384xbf16>)
          outs(%e : tensor<3x3x3x384x384xbf16>) overwrite
          padding = [0, 0, 1, 1, 1, 1] -> tensor<3x3x3x384x384xbf16>
  return %dw : tensor<3x3x3x384x384xbf16>
}

func.func @r3d(%x: tensor<8x16x56x56x64xbf16>, %dy: tensor<8x16x56x56x64xbf16>)
    -> tensor<3x3x3x64x64xbf16> {
  %e = tensor.empty() : tensor<3x3x3x64x64xbf16>
  %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<8x16x56x56x64xbf16>,
                                                  tensor<8x16x56x56x64xbf16>)
          outs(%e : tensor<3x3x3x64x64xbf16>) overwrite
          padding = [1, 1, 1, 1, 1, 1] -> tensor<3x3x3x64x64xbf16>
  return %dw : tensor<3x3x3x64x64xbf16>
}
