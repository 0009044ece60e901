"""Nearest-neighbour upsampling folded into the convolution that follows it.

    import conv3d.upsample as cu
    y = cu.upsample_conv3d(x, w, b, scale=(1, 2, 2), padding=(0, 1, 1))
    # == F.conv3d(F.interpolate(x, scale_factor=(1, 2, 2), mode="nearest"),
    #             w, b, padding=(0, 1, 1))

Decoders (WAN's VAE, U-Nets) upsample 2x by repeating pixels and convolve
the result at once. The repeated tensor is 4x (8x in 3-D) the input: it is
written, then read back by the convolution. Convolving a repeated tensor is
a transposed convolution of the original one with stride 2: output pixel o
of the upsampled axis sees input pixel i through every tap k of the window
with floor((o + k - pad) / 2) == i, two adjacent taps of the flipped
window. So the upsampled convolution with window K and padding p is the
transposed convolution with window K + 1, stride 2 and padding K - 1 - p
whose taps are sums of adjacent taps of the flipped filter
(upsample_conv_weight), and on an axis that is not upsampled the flipped
filter itself with padding K - 1 - p. The library computes transposed
convolutions as its data gradient: one dense convolution per stride phase,
each of ceil((K + 1) / 2) taps per upsampled axis, 4 instead of 9 for a
3x3 window after a 2-D upsampling; the upsampled tensor is never formed.

Works with PyTorch 1.13 and later, on the CPU target and on CUDA devices
(conv3d.autograd.conv_transpose3d: differentiable, its backward the
library's forward convolution and weight gradient).
"""

import torch

from . import autograd

__all__ = ["upsample_conv_weight", "upsample_conv3d"]


def _scales(scale):
    values = [scale] * 3 if isinstance(scale, int) else list(scale)
    if len(values) != 3 or any(v not in (1, 2) for v in values):
        raise ValueError("scale must be 1 or 2 per axis (an int or 3 ints), got %r"
                         % (scale,))
    return values


def upsample_conv_weight(weight, scale=(1, 2, 2), padding=0):
    """The transposed convolution equal to `scale`x nearest upsampling
    followed by conv3d(weight, padding): (weight_t, stride, padding_t) for
    F.conv_transpose3d / conv3d.autograd.conv_transpose3d. weight: (F, C,
    Q, R, S); padding: an int or 3 ints (symmetric, as nn.Conv3d's), at
    most the window minus one on each axis; weight_t: (C, F, Q', R', S'),
    one tap more on each upsampled axis, in weight's dtype (the taps summed
    in float32, or float64 for float64, and rounded once)."""
    if weight.dim() != 5:
        raise ValueError("weight must have rank 5 (F, C, Q, R, S), got shape %s"
                         % (tuple(weight.shape),))
    scales = _scales(scale)
    pads = [padding] * 3 if isinstance(padding, int) else list(padding)
    if len(pads) != 3 or any(not isinstance(p, int) or p < 0 for p in pads):
        raise ValueError("padding must be an int or 3 non-negative ints, got %r"
                         % (padding,))
    wide = weight if weight.dtype == torch.float64 else weight.float()
    w = wide.transpose(0, 1)  # a transposed convolution's (C_in, C_out, ...)
    padding_t = []
    for axis, (s, p) in enumerate(zip(scales, pads)):
        k = weight.shape[2 + axis]
        if p > k - 1:
            raise ValueError("padding %d on axis %d is more than the window (%d) minus one: "
                             "the upsampled convolution has no transposed form"
                             % (p, axis, k))
        dim = 2 + axis
        w = w.flip(dim)  # tap t of the transposed window is tap K - 1 - t
        if s == 2:
            # Tap t sees two taps of the flipped window: t and t - 1.
            shape = list(w.shape)
            shape[dim] = 1
            zero = w.new_zeros(shape)
            w = torch.cat([w, zero], dim) + torch.cat([zero, w], dim)
        padding_t.append(k - 1 - p)
    return w.to(weight.dtype).contiguous(), scales, padding_t


def upsample_conv3d(input, weight, bias=None, scale=(1, 2, 2), padding=0, target="auto"):
    """conv3d(nearest_upsample(input, scale), weight, bias, padding) (stride
    and dilation 1) without forming the upsampled tensor: the transposed
    convolution of upsample_conv_weight on the library's data-gradient
    kernels. input: (N, C, D, H, W), any memory format; the result is
    channels_last_3d on a GPU, as the library's transposed convolution."""
    weight_t, stride, padding_t = upsample_conv_weight(weight, scale, padding)
    return autograd.conv_transpose3d(input, weight_t, bias, stride=stride,
                                     padding=padding_t, output_padding=0, target=target)
